"""fetch_remote_file: the size limit holds while streaming, and the copy is kept under the version downloaded."""

import os

import fsspec
import pytest

from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.remote import fetch as fetch_module
from tb_gpu_advisor.remote.cache import FileCache, object_version

URL = "memory://bucket/run/host.xplane.pb"


@pytest.fixture
def remote():
    fs = fsspec.filesystem("memory")
    yield fs
    fs.rm("/bucket", recursive=True)


def _cached_files(root):
    return sorted(os.path.join(d, f) for d, _, files in os.walk(root) for f in files)


def test_an_object_that_grew_since_it_was_sized_is_stopped_while_it_streams(remote, tmp_path, monkeypatch):
    remote.pipe(URL, b"x" * (3 * 2**20))
    real = fetch_module._info
    monkeypatch.setattr(fetch_module, "_info", lambda fs, path, url: {**real(fs, path, url), "size": 10})
    monkeypatch.setattr(fetch_module, "CHUNK_BYTES", 2**16)
    cache = FileCache(str(tmp_path / "cache"), 10 * 2**20)
    with pytest.raises(ProfileError, match=r"more than 1\.\d MB, above the 1\.0 MB limit"):
        fetch_module.fetch_remote_file(URL, max_bytes=2**20, cache=cache)
    assert _cached_files(cache.root) == []  # nothing of it is kept


def test_an_object_replaced_during_its_download_is_fetched_again_and_keyed_by_what_was_read(
    remote, tmp_path, monkeypatch
):
    remote.pipe(URL, b"old version")
    real, calls = fetch_module._info, []

    def info_then_replace(fs, path, url):
        calls.append(1)
        found = real(fs, path, url)
        if len(calls) == 1:  # sized as the old version, then replaced before the download ends
            remote.pipe(URL, b"the new version, longer")
        return found

    monkeypatch.setattr(fetch_module, "_info", info_then_replace)
    cache = FileCache(str(tmp_path / "cache"), 10 * 2**20)
    local = fetch_module.fetch_remote_file(URL, cache=cache)
    with open(local, "rb") as handle:
        assert handle.read() == b"the new version, longer"
    assert local == cache._path(URL, object_version(remote.info(URL)))
    assert _cached_files(cache.root) == [local]


def test_an_object_that_keeps_changing_is_a_clear_error(remote, tmp_path, monkeypatch):
    remote.pipe(URL, b"v0")
    real, versions = fetch_module._info, iter(range(100))

    def always_new(fs, path, url):
        return {**real(fs, path, url), "ETag": f"etag-{next(versions)}"}

    monkeypatch.setattr(fetch_module, "_info", always_new)
    with pytest.raises(ProfileError, match="changed while it was being downloaded"):
        fetch_module.fetch_remote_file(URL, cache=FileCache(str(tmp_path / "cache"), 2**20))
