"""The file-system layer's entry points, for local paths and fsspec URLs alike: find runs, resolve what a path
names, and tell which version of a host file is there."""

from __future__ import annotations

import os
from os import PathLike
from collections.abc import Iterable

from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.files.local_listing import local_runs, local_target
from tb_gpu_advisor.files.names import host_name
from tb_gpu_advisor.files.runs import HostFile, ProfileRun, Target, run_name
from tb_gpu_advisor.remote import is_remote_url

NO_PROFILES = (
    "no profiles found: expected <logdir>/<run>/plugins/profile/<timestamp>/<host>.xplane.pb "
    "(capture one with tf.profiler or jax.profiler.trace) or <logdir>/<run>/<worker>.<span>.pt.trace.json"
    "[.gz] (torch.profiler.tensorboard_trace_handler)"
)


def discover_runs(
    logdir: str, follow_symlinks: bool = True, confined: bool = False, memo: dict | None = None
) -> tuple[ProfileRun, ...]:
    """Every ProfileRun under `logdir`, newest first (profile run names are timestamps), like the Profile tab.

    follow_symlinks=False refuses local host files and run directories that are symbolic links to places
    outside the logdir: their hosts are listed with HostFile.problem set (the server's default). confined=True
    (the assistant server) also leaves run directories linked from outside unlisted: nothing outside is read.
    `memo`, a dict kept between calls, spares re-reading local run directories that did not change (a server's
    relistings).
    """
    if is_remote_url(logdir):
        from tb_gpu_advisor.files.remote_listing import remote_runs  # fsspec only when a URL asks for it

        return remote_runs(logdir)
    return local_runs(logdir, follow_symlinks=follow_symlinks and not confined, enter_links_out=not confined, memo=memo)


def resolve_target(
    path: str | PathLike[str], run: str | None = None, host: str | None = None, confined: bool = False
) -> tuple[str | None, list[HostFile]]:
    """The (run id, [HostFile]) that `analyze PATH` means: a file, a run directory or a logdir (local, or an
    fsspec URL such as s3://bucket/logdir, whose host files stay URLs until analyzed); see resolve.
    confined=True: local links out of `path` are refused (HostFile.problem) and not entered, as discover_runs.
    """
    path = str(path)
    if is_remote_url(path):
        from tb_gpu_advisor.files.remote_listing import remote_target

        target = remote_target(path)
    else:
        target = local_target(path, confined=confined)
    return resolve(target, run=run, host=host)


def version(path: str) -> str:
    """What identifies the current content of a host file without reading it: size and modification time
    locally, size, ETag (or generation) and modification time in object storage. ProfileError when unreadable."""
    if is_remote_url(path):
        from tb_gpu_advisor.remote.fetch import remote_version

        return remote_version(path)
    try:
        stat = os.stat(path)
    except OSError as err:
        raise ProfileError(path, f"cannot read: {err.strerror or err}") from None
    return f"{stat.st_size}|{stat.st_mtime_ns}"


def pick_host(where: str, files: Iterable[HostFile], host: str | None) -> list[HostFile]:
    """All `files`, or the one of `host`; ProfileError listing the hosts when there is none."""
    if host is None:
        return list(files)
    chosen = [f for f in files if f.host == host]
    if not chosen:
        raise ProfileError(where, f"no host {host!r}; hosts: {', '.join(f.host for f in files)}")
    return chosen


def resolve(target: Target, run: str | None = None, host: str | None = None) -> tuple[str | None, list[HostFile]]:
    """The (run id, [HostFile]) that `analyze PATH` means for a listed Target: a file, a run directory or a
    logdir (its newest run unless `run` names one); `host` keeps one host. ProfileError with the choices."""
    if target.is_file:
        if run:
            raise ProfileError(target.path, "--run applies to a logdir, not to a single file")
        return None, pick_host(target.path, (HostFile(host=host_name(target.name), path=target.path),), host)
    if target.hosts:
        if run:
            raise ProfileError(target.path, "is a run directory; --run applies to a logdir")
        return run_name(target.path, target.name), pick_host(target.path, target.hosts, host)
    if not target.runs:
        raise ProfileError(target.path, NO_PROFILES)
    chosen = target.runs[0] if run is None else next((r for r in target.runs if r.run == run), None)
    if chosen is None:
        raise ProfileError(target.path, f"no run {run!r}; runs: {', '.join(r.run for r in target.runs)}")
    return chosen.run, pick_host(chosen.path, chosen.hosts, host)
