"""Lists a local path into a runs.Target: a file, a run directory's host files, or a logdir's runs."""

from __future__ import annotations

import functools
import os

from tb_gpu_advisor.constants import PROFILE_SUBDIR, XPLANE_SUFFIX
from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.files.names import host_name, is_kineto_file
from tb_gpu_advisor.files.regular import kind_problem
from tb_gpu_advisor.files.runs import (
    HostFile,
    ProfileRun,
    Target,
    capture_time,
    kineto_profile_runs,
    newest_first,
    run_id,
)


OUTSIDE_LOGDIR = (
    "is a symbolic link to a place outside the logdir: refused (start TensorBoard with "
    "--gpu_advisor_follow_symlinks to allow it)"
)


def local_target(path: str, confined: bool = False) -> Target:
    """The Target of a local path; ProfileError saying what it is when it is neither a directory nor a regular
    file (missing, a dangling link, a link loop, a FIFO, a device). `confined`: nothing outside `path` is read
    (local_runs with follow_symlinks and enter_links_out False)."""
    if not os.path.isdir(path):
        problem = kind_problem(path)
        if problem:
            raise ProfileError(path, "no such file or directory" if problem == "no such file" else problem)
        return Target(path=path, name=os.path.basename(path), is_file=True)
    direct = _hosts_in(path, os.path.realpath(path) if confined else None)
    runs = () if direct else local_runs(path, follow_symlinks=not confined, enter_links_out=not confined)
    name = os.path.normpath(path)
    if not direct and not runs and (name.endswith(XPLANE_SUFFIX) or is_kineto_file(name)):
        raise ProfileError(path, kind_problem(name))  # "is a directory, not a .pt.trace.json file"
    return Target(path=path, name=os.path.basename(os.path.normpath(path)), is_file=False, hosts=direct, runs=runs)


def local_runs(
    logdir: str, follow_symlinks: bool = True, enter_links_out: bool = True, memo: dict | None = None
) -> tuple[ProfileRun, ...]:
    """Every ProfileRun under a local `logdir`, newest first, with absolute paths. follow_symlinks=False
    refuses (HostFile.problem) host files and run directories that are links to places outside the logdir;
    enter_links_out=False also leaves such a run directory unlisted, so not even its file names are read.
    `memo` ({run directory: (its stat, hosts)}, kept by the caller between calls) re-reads only run directories
    whose inode or modification time changed."""
    runs: list[ProfileRun] = []
    logdir = os.path.abspath(logdir)
    logdir_real = None if follow_symlinks else os.path.realpath(logdir)
    for directory, subdirs, files in os.walk(logdir, followlinks=False):
        subdirs.sort()
        relative = os.path.relpath(directory, logdir)
        runs.extend(
            kineto_profile_runs(
                os.path.basename(logdir) if relative == "." else relative.replace(os.sep, "/"),
                directory,
                [name for name in files if is_kineto_file(name)],
                os.path.join,
                functools.partial(_outside_problem, logdir_real=logdir_real),
                _modified,
            )
        )
        if (
            os.path.basename(directory) != PROFILE_SUBDIR[1]
            or os.path.basename(os.path.dirname(directory)) != PROFILE_SUBDIR[0]
        ):
            continue
        tb_run = os.path.relpath(os.path.dirname(os.path.dirname(directory)), logdir)
        for profile_run in sorted(subdirs):
            run_path = os.path.join(directory, profile_run)
            if not enter_links_out and os.path.islink(run_path) and not _inside(run_path, os.path.realpath(logdir)):
                continue
            hosts = _hosts_in(run_path, logdir_real) if memo is None else _remembered_hosts(run_path, logdir_real, memo)
            if hosts:
                tb_run_id = "" if tb_run == "." else tb_run.replace(os.sep, "/")
                runs.append(
                    ProfileRun(
                        run=run_id(tb_run_id, profile_run),
                        path=run_path,
                        hosts=hosts,
                        captured_at=capture_time(profile_run),
                        series=tb_run_id,
                    )
                )
        subdirs[:] = []
    return newest_first(runs)


def _remembered_hosts(run_path: str, logdir_real: str | None, memo: dict) -> tuple[HostFile, ...]:
    """_hosts_in(run_path), from `memo` when the directory (and what a link to it points at) did not change."""
    try:
        stat = os.stat(run_path)
        key = (stat.st_dev, stat.st_ino, stat.st_mtime_ns, os.path.islink(run_path))
    except OSError:
        memo.pop(run_path, None)
        return ()
    known = memo.get(run_path)
    if known is not None and known[0] == key:
        return known[1]
    hosts = _hosts_in(run_path, logdir_real)
    memo[run_path] = (key, hosts)
    return hosts


def _hosts_in(directory: str, logdir_real: str | None = None) -> tuple[HostFile, ...]:
    """The HostFiles of every `*.xplane.pb` entry of `directory`, whatever it is: one that is not a regular file
    fails with a line saying what it is when analyzed (files/regular.py). With `logdir_real`, an entry whose real
    path lies outside it is refused (HostFile.problem)."""
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return ()
    hosts = []
    # callers reach `directory` through no link but, maybe, its own: only it and its entries can lead out
    linked = bool(logdir_real) and os.path.islink(directory)
    for name in names:
        if not name.endswith(XPLANE_SUFFIX):
            continue
        path = os.path.join(directory, name)
        hosts.append(HostFile(host=host_name(name), path=path, problem=_outside_problem(path, logdir_real, linked)))
    return tuple(hosts)


def _modified(path: str) -> float | None:
    try:
        return os.lstat(path).st_mtime
    except OSError:
        return None


def _outside_problem(path: str, logdir_real: str | None, linked: bool = False) -> str | None:
    """OUTSIDE_LOGDIR when `logdir_real` is given and the real path of `path` lies outside it, else None. The
    directory of `path` was reached through no link (unless `linked`): only a link at `path` can lead out, so
    realpath, a stat per path component, is called only then."""
    if not logdir_real or not (linked or os.path.islink(path)):
        return None
    return None if _inside(path, logdir_real) else OUTSIDE_LOGDIR


def _inside(path: str, root_real: str) -> bool:
    real = os.path.realpath(path)
    return real == root_real or real.startswith(root_real.rstrip(os.sep) + os.sep)
