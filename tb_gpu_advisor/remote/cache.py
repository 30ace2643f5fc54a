"""A bounded local cache of remote files: keyed by URL and object version, least recently used evicted first."""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

DEFAULT_CACHE_MB = 2048
STALE_PARTIAL_S = 3600  # an unfinished download older than this is from a process that died
_PARTIAL = ".partial-"


def default_cache_dir() -> str:
    """$TB_GPU_ADVISOR_CACHE, else $XDG_CACHE_HOME/tb-gpu-advisor, else ~/.cache/tb-gpu-advisor."""
    if os.environ.get("TB_GPU_ADVISOR_CACHE"):
        return os.environ["TB_GPU_ADVISOR_CACHE"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tb-gpu-advisor")


def default_cache_bytes() -> int:
    """$TB_GPU_ADVISOR_CACHE_MB megabytes (default 2048)."""
    try:
        megabytes = float(os.environ.get("TB_GPU_ADVISOR_CACHE_MB", DEFAULT_CACHE_MB))
    except ValueError:
        megabytes = DEFAULT_CACHE_MB
    return int(max(megabytes, 0) * 2**20)


def object_version(info: Mapping[str, Any]) -> str:
    """What identifies one version of a remote object: size, ETag (or generation/md5) and modification time."""
    tag = next((info[k] for k in ("ETag", "etag", "generation", "md5Hash", "version_id") if info.get(k)), "")
    modified = next((info[k] for k in ("LastModified", "mtime", "updated", "last_modified") if info.get(k)), "")
    return f"{info.get('size')}|{tag}|{modified}"


@dataclass(frozen=True)
class CacheEntry:
    path: str
    size: int
    last_used: float


@dataclass(frozen=True)
class FileCache:
    """Files under `root/<key>/<basename>`; after each insert the total is cut to `max_bytes`, oldest use first
    (an entry bigger than the whole cap is kept until the next insert, so the analysis that needs it can run)."""

    root: str
    max_bytes: int

    def key(self, url: str, version: str) -> str:
        return hashlib.sha256(f"{url}\0{version}".encode("utf-8", "surrogatepass")).hexdigest()[:32]

    def _path(self, url: str, version: str) -> str:
        return os.path.join(self.root, self.key(url, version), os.path.basename(url.rstrip("/")) or "file")

    def fetch(self, url: str, version: str, download: Callable[[str], str | None]) -> str:
        """Local path of `url` at `version`; `download(dest_path)` writes it on a miss and may return the version
        it actually wrote (the object may have changed since `version` was read): the copy is kept under that.
        Never touches `url`."""
        path = self._path(url, version)
        if os.path.isfile(path):
            os.utime(path)
            return path
        os.makedirs(self.root, exist_ok=True)
        handle, partial = tempfile.mkstemp(prefix=_PARTIAL, dir=self.root)
        os.close(handle)
        try:
            path = self._path(url, download(partial) or version)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            os.replace(partial, path)
        finally:
            if os.path.exists(partial):
                os.remove(partial)
        self.evict(keep=path)
        return path

    def entries(self) -> list[CacheEntry]:
        """CacheEntry of every cached file, least recently used first."""
        found: list[CacheEntry] = []
        if not os.path.isdir(self.root):
            return found
        for key in os.listdir(self.root):
            directory = os.path.join(self.root, key)
            if key.startswith(_PARTIAL):  # a download in progress, or left by a process that died
                directory, names = self.root, [key]
            elif os.path.isdir(directory):
                names = os.listdir(directory)
            else:
                continue
            for name in names:
                path = os.path.join(directory, name)
                try:
                    stat = os.stat(path)
                except FileNotFoundError:
                    continue
                if name.startswith(_PARTIAL) and time.time() - stat.st_mtime < STALE_PARTIAL_S:
                    continue  # another process is downloading it
                found.append(CacheEntry(path, stat.st_size, stat.st_mtime))
        found.sort(key=lambda e: (e.last_used, e.path))
        return found

    def evict(self, keep: str | None = None) -> None:
        """Removes least recently used files (and dead partial downloads) until the cache fits `max_bytes`."""
        entries = self.entries()
        total = sum(e.size for e in entries)
        for entry in entries:
            dead = os.path.basename(entry.path).startswith(_PARTIAL)
            if (total <= self.max_bytes and not dead) or entry.path == keep:
                continue
            try:
                os.remove(entry.path)
                total -= entry.size
                if not dead:
                    os.rmdir(os.path.dirname(entry.path))
            except OSError:
                pass  # gone already, or the directory holds another file


def default_cache() -> FileCache:
    return FileCache(root=default_cache_dir(), max_bytes=default_cache_bytes())
