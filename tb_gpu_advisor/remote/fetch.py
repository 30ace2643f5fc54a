"""Brings one remote host file into the local cache (reading the bucket only), enforcing the size limit before
and while it streams, and keeping the copy under the version that was actually downloaded."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.file_size import too_big
from tb_gpu_advisor.remote.cache import FileCache, default_cache, object_version
from tb_gpu_advisor.remote.filesystem import open_url, remote_errors

CHUNK_BYTES = 4 * 2**20
ATTEMPTS = 2  # an object replaced during its download is fetched once more


class _Changed(Exception):
    """The object changed while it was downloaded."""


def remote_version(url: str) -> str:
    """discovery.version of a URL: the object's current size, ETag (or generation) and modification time."""
    return object_version(_current_info(url)[2])


def _current_info(url: str) -> tuple[Any, str, Mapping[str, Any]]:
    """(filesystem, path, info) of the object as it is now, not as a listing remembers it."""
    fs, path = open_url(url)
    return fs, path, _info(fs, path, url)


def fetch_remote_file(url: str, max_bytes: int | None = None, cache: FileCache | None = None) -> str:
    """Local path of a cached copy of `url`; downloads it only when the cache lacks this version of it.

    Raises ProfileError naming the URL when it is missing, empty, above `max_bytes` (before or while it is
    downloaded), keeps changing while it is downloaded, or cannot be read.
    """
    cache = cache or default_cache()
    fs, path = open_url(url)
    for _ in range(ATTEMPTS):
        info = _info(fs, path, url)
        if info.get("type") == "directory":
            raise ProfileError(url, "is a directory, not a profile file")
        if info.get("type") not in (None, "file"):
            raise ProfileError(url, f"is not a regular file ({info.get('type')}): not opened")
        size = info.get("size")
        if size == 0:
            raise ProfileError(url, "file is empty (the profiler wrote nothing)")
        if max_bytes and size and size > max_bytes:
            raise ProfileError(url, too_big(size, max_bytes))
        try:
            return cache.fetch(
                url,
                object_version(info),
                functools.partial(_download, fs, path, url, max_bytes=max_bytes, version=object_version(info)),
            )
        except _Changed:
            continue
        except OSError as err:  # download errors are ProfileErrors already: this is the local cache directory
            raise ProfileError(url, f"cannot keep a local copy in {cache.root}: {err.strerror or err}") from None
    raise ProfileError(
        url,
        "the object changed while it was being downloaded (it is being written or "
        "replaced); try again once it is complete",
    )


def _info(fs: Any, path: str, url: str) -> Mapping[str, Any]:
    with remote_errors(url, "read"):
        fs.invalidate_cache(path)  # the version must be the object's current one, not a listing's memory
        return fs.info(path)


def _download(fs: Any, path: str, url: str, destination: str, max_bytes: int | None, version: str) -> str:
    """Streams the object into `destination`, stopping as soon as it passes `max_bytes`; returns the version
    downloaded, or raises _Changed when the object is not the same after the download as before it."""
    written = 0
    with remote_errors(url, "download"):
        with fs.open(path, "rb") as source, open(destination, "wb") as target:
            while chunk := source.read(CHUNK_BYTES):
                written += len(chunk)
                if max_bytes and written > max_bytes:
                    raise ProfileError(url, too_big(written, max_bytes, at_least=True))
                target.write(chunk)
    after = _info(fs, path, url)
    if object_version(after) != version or after.get("size") not in (None, written):
        raise _Changed()
    return version
