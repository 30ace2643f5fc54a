"""Lists a remote logdir (no file is downloaded) into files.runs shapes: runs, host files, a Target."""

from __future__ import annotations

import datetime
import posixpath
from collections.abc import Mapping
from typing import Any

from tb_gpu_advisor.constants import PROFILE_SUBDIR, XPLANE_SUFFIX
from tb_gpu_advisor.files.names import host_name, is_kineto_file
from tb_gpu_advisor.files.runs import (
    HostFile,
    ProfileRun,
    Target,
    capture_time,
    kineto_profile_runs,
    newest_first,
    run_id,
)
from tb_gpu_advisor.remote.cache import object_version
from tb_gpu_advisor.remote.filesystem import open_url, remote_errors


def _host_file(fs: Any, path: str, info: Mapping[str, Any] | None = None) -> HostFile:
    """The HostFile of an object; `info`, its listing entry, gives its version without one more request."""
    name = posixpath.basename(path)
    return HostFile(
        host=host_name(name), path=fs.unstrip_protocol(path), version=object_version(info) if info else None
    )


def _list(url: str) -> tuple[Any, str, Mapping[str, Any], Mapping[str, Mapping[str, Any]]]:
    """(fs, root, root info, {path: info} of every file below root); one listing call for a directory."""
    fs, root = open_url(url)
    root = root.rstrip("/")
    with remote_errors(url, "list"):
        fs.invalidate_cache(root)  # a long-lived filesystem instance (the plugin's) must see new runs
        info = fs.info(root)
        files = {} if info.get("type") == "file" else fs.find(root, detail=True)
    return fs, root, info, files


def modified_s(info: Mapping[str, Any]) -> float | None:
    """An object's modification time in seconds since the epoch from its listing entry, None when absent."""
    value = next(
        (info[k] for k in ("LastModified", "mtime", "updated", "last_modified", "created") if info.get(k)), None
    )
    if isinstance(value, str):
        try:
            value = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    if isinstance(value, datetime.datetime):
        return value.timestamp()
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _kineto_runs(fs: Any, root: str, files: Mapping[str, Mapping[str, Any]]) -> list[ProfileRun]:
    """ProfileRuns of the Kineto trace files, grouped per directory as local_listing does."""
    by_dir: dict[str, list[str]] = {}
    for path in sorted(files):
        if is_kineto_file(path) and files[path].get("type", "file") == "file":
            by_dir.setdefault(posixpath.dirname(path), []).append(posixpath.basename(path))
    found = []
    for directory, names in by_dir.items():
        relative = posixpath.relpath(directory, root)
        url = fs.unstrip_protocol(directory)
        modified = {posixpath.join(url, name): modified_s(files[posixpath.join(directory, name)]) for name in names}
        found += kineto_profile_runs(
            posixpath.basename(root) if relative == "." else relative,
            url,
            names,
            posixpath.join,
            modified_of=modified.get,
        )
    return found


def _runs(fs: Any, root: str, files: Mapping[str, Mapping[str, Any]]) -> tuple[ProfileRun, ...]:
    runs: dict[str, tuple[str, list[HostFile]]] = {}
    for path in sorted(files):
        if not path.endswith(XPLANE_SUFFIX) or files[path].get("type", "file") != "file":
            continue
        parts = posixpath.relpath(path, root).split("/")
        if len(parts) < 4 or tuple(parts[-4:-2]) != PROFILE_SUBDIR:
            continue
        tb_run, profile_run = "/".join(parts[:-4]), parts[-2]
        runs.setdefault(run_id(tb_run, profile_run), (posixpath.dirname(path), []))[1].append(
            _host_file(fs, path, files[path])
        )
    found = [
        ProfileRun(
            run=key,
            path=fs.unstrip_protocol(directory),
            hosts=tuple(hosts),
            captured_at=capture_time(key.rsplit("/", 1)[-1]),
            series=key.rsplit("/", 1)[0] if "/" in key else "",
        )
        for key, (directory, hosts) in runs.items()
    ]
    return newest_first(found + _kineto_runs(fs, root, files))


def remote_runs(url: str) -> tuple[ProfileRun, ...]:
    """Every ProfileRun under a remote logdir, newest first; their paths are URLs. Raises ProfileError."""
    fs, root, _, files = _list(url)
    return _runs(fs, root, files)


def remote_target(url: str) -> Target:
    """The runs.Target of a URL: a file, a run directory's host files or a logdir's runs (URLs)."""
    fs, root, info, files = _list(url)
    name = posixpath.basename(root)
    if info.get("type") == "file":
        return Target(path=url, name=name, is_file=True)
    direct = tuple(
        _host_file(fs, path)
        for path in sorted(files)
        if posixpath.dirname(path) == root and path.endswith(XPLANE_SUFFIX)
    )
    return Target(path=url, name=name, is_file=False, hosts=direct, runs=() if direct else _runs(fs, root, files))
