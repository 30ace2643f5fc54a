import os

import pytest

from tb_gpu_advisor.remote import cache as cache_module
from tb_gpu_advisor.remote.cache import FileCache, object_version


class Downloads:
    """A fake remote: writes `size` bytes per URL and counts downloads."""

    def __init__(self):
        self.count = 0

    def writer(self, size):
        def download(destination):
            self.count += 1
            with open(destination, "wb") as handle:
                handle.write(b"x" * size)

        return download


def _age(path, seconds_ago):
    stamp = os.path.getmtime(path) - seconds_ago
    os.utime(path, (stamp, stamp))


def test_hit_does_not_download_again_and_keeps_the_basename(tmp_path):
    cache, remote = FileCache(str(tmp_path), 1000), Downloads()
    first = cache.fetch("s3://b/run/host1.xplane.pb", "v1", remote.writer(10))
    second = cache.fetch("s3://b/run/host1.xplane.pb", "v1", remote.writer(10))
    assert first == second and remote.count == 1
    assert os.path.basename(first) == "host1.xplane.pb" and os.path.getsize(first) == 10


def test_a_new_version_is_a_new_entry(tmp_path):
    cache, remote = FileCache(str(tmp_path), 1000), Downloads()
    old = cache.fetch("s3://b/h.xplane.pb", "v1", remote.writer(10))
    new = cache.fetch("s3://b/h.xplane.pb", "v2", remote.writer(20))
    assert old != new and remote.count == 2 and os.path.getsize(new) == 20


def test_least_recently_used_is_evicted_to_the_cap(tmp_path):
    cache, remote = FileCache(str(tmp_path), 100), Downloads()
    a = cache.fetch("s3://b/a.xplane.pb", "v", remote.writer(40))
    b = cache.fetch("s3://b/b.xplane.pb", "v", remote.writer(40))
    _age(a, 20)
    _age(b, 10)
    cache.fetch("s3://b/a.xplane.pb", "v", remote.writer(40))  # a used again: b is now the oldest
    c = cache.fetch("s3://b/c.xplane.pb", "v", remote.writer(40))
    assert os.path.exists(a) and os.path.exists(c) and not os.path.exists(b)
    assert not os.path.exists(os.path.dirname(b))
    assert sum(e.size for e in cache.entries()) == 80 <= cache.max_bytes


def test_an_entry_over_the_cap_stays_until_the_next_insert(tmp_path):
    cache, remote = FileCache(str(tmp_path), 50), Downloads()
    small = cache.fetch("s3://b/small.xplane.pb", "v", remote.writer(10))
    big = cache.fetch("s3://b/big.xplane.pb", "v", remote.writer(80))
    assert os.path.exists(big) and not os.path.exists(small)
    _age(big, 10)
    cache.fetch("s3://b/next.xplane.pb", "v", remote.writer(10))
    assert not os.path.exists(big)


def test_a_failed_download_leaves_nothing(tmp_path):
    cache = FileCache(str(tmp_path), 100)

    def broken(destination):
        with open(destination, "wb") as handle:
            handle.write(b"partial")
        raise ConnectionError("reset")

    with pytest.raises(ConnectionError):
        cache.fetch("s3://b/h.xplane.pb", "v", broken)
    assert cache.entries() == []
    assert [name for _, _, names in os.walk(tmp_path) for name in names] == []


def test_dead_partial_downloads_are_removed(tmp_path):
    cache, remote = FileCache(str(tmp_path), 1000), Downloads()
    dead = tmp_path / "k" / ".partial-123"
    dead.parent.mkdir()
    dead.write_bytes(b"x")
    os.utime(dead, (1, 1))
    cache.fetch("s3://b/h.xplane.pb", "v", remote.writer(5))
    assert not dead.exists()


def test_object_version_reads_the_usual_fields():
    assert object_version({"size": 3, "ETag": '"e"', "LastModified": "t"}) == '3|"e"|t'
    assert object_version({"size": 3, "generation": "17", "updated": "u"}) == "3|17|u"
    assert object_version({"size": 3, "mtime": 5.0}) == "3||5.0"


def test_cache_location_and_size_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("TB_GPU_ADVISOR_CACHE", str(tmp_path / "c"))
    monkeypatch.setenv("TB_GPU_ADVISOR_CACHE_MB", "1.5")
    cache = cache_module.default_cache()
    assert cache.root == str(tmp_path / "c") and cache.max_bytes == int(1.5 * 2**20)
    monkeypatch.delenv("TB_GPU_ADVISOR_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("TB_GPU_ADVISOR_CACHE_MB", "lots")
    cache = cache_module.default_cache()
    assert cache.root == str(tmp_path / "xdg" / "tb-gpu-advisor")
    assert cache.max_bytes == cache_module.DEFAULT_CACHE_MB * 2**20
