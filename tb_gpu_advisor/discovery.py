"""Finds profile runs and hosts under a logdir, named exactly as TensorBoard's Profile tab names them.

A run id is `<tb run>/<profile run>` where `<tb run>` is the directory holding `plugins/profile` relative to
the logdir, or just `<profile run>` when `plugins/profile` sits at the logdir's root. Hosts are the
`<host>.xplane.pb` files of a run. PyTorch (Kineto) runs are the directories holding
`<worker>.<span>.pt.trace.json[.gz]` files, grouped by kineto.runs; their hosts are the workers.
"""

import os
from dataclasses import dataclass

from tb_gpu_advisor.constants import PROFILE_SUBDIR, XPLANE_SUFFIX
from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.kineto.files import is_kineto_file, worker_and_span
from tb_gpu_advisor.kineto.runs import kineto_runs
from tb_gpu_advisor.remote import is_remote_url


@dataclass(frozen=True)
class HostFile:
    host: str
    path: str


@dataclass(frozen=True)
class ProfileRun:
    run: str  # the Profile tab's run id
    path: str
    hosts: tuple  # HostFile, sorted by host


def _hosts_in(directory):
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return ()
    return tuple(HostFile(host=host_name(name), path=os.path.join(directory, name))
                 for name in names
                 if name.endswith(XPLANE_SUFFIX) and os.path.isfile(os.path.join(directory, name)))


def discover_runs(logdir):
    """Every ProfileRun under `logdir`, newest first (profile run names are timestamps), like the Profile tab."""
    if is_remote_url(logdir):
        from tb_gpu_advisor.remote.listing import discover_remote_runs
        return discover_remote_runs(logdir)
    runs = []
    logdir = os.path.abspath(logdir)
    for directory, subdirs, files in os.walk(logdir, followlinks=False):
        subdirs.sort()
        runs.extend(_kineto_runs_in(logdir, directory, files))
        if os.path.basename(directory) != PROFILE_SUBDIR[1] or \
                os.path.basename(os.path.dirname(directory)) != PROFILE_SUBDIR[0]:
            continue
        tb_run = os.path.relpath(os.path.dirname(os.path.dirname(directory)), logdir)
        for profile_run in sorted(subdirs):
            run_path = os.path.join(directory, profile_run)
            hosts = _hosts_in(run_path)
            if hosts:
                run_id = profile_run if tb_run == "." else f"{tb_run.replace(os.sep, '/')}/{profile_run}"
                runs.append(ProfileRun(run=run_id, path=run_path, hosts=hosts))
        subdirs[:] = []
    return newest_first(runs)


def _kineto_runs_in(logdir, directory, files):
    """ProfileRuns of the Kineto files directly in `directory`; at the logdir's root the run is its name."""
    relative = os.path.relpath(directory, logdir)
    run_dir = os.path.basename(logdir) if relative == "." else relative.replace(os.sep, "/")
    return [ProfileRun(run=run_id, path=directory,
                       hosts=tuple(HostFile(host=worker, path=os.path.join(directory, name))
                                   for worker, name in members))
            for run_id, members in kineto_runs(run_dir, [f for f in files if is_kineto_file(f)])]


def resolve_target(path, run=None, host=None):
    """The (run id, [HostFile]) that `analyze PATH` means: a file, a run directory or a logdir (local, or
    an fsspec URL such as s3://bucket/logdir, whose host files stay URLs until analyzed).

    A logdir analyzes its newest run unless `run` names one; `host` keeps one host. Raises ProfileError with
    the choices when nothing matches.
    """
    path = str(path)
    if is_remote_url(path):
        from tb_gpu_advisor.remote.listing import resolve_remote_target
        return resolve_remote_target(path, run=run, host=host)
    if not os.path.exists(path):
        raise ProfileError(path, "no such file or directory")
    if os.path.isfile(path):
        if run:
            raise ProfileError(path, "--run applies to a logdir, not to a single file")
        files = (HostFile(host=host_name(path), path=path),)
        return None, pick_host(path, files, host)
    direct = _hosts_in(path)
    if direct:
        if run:
            raise ProfileError(path, "is a run directory; --run applies to a logdir")
        return os.path.basename(os.path.normpath(path)), pick_host(path, direct, host)
    runs = discover_runs(path)
    if not runs:
        raise ProfileError(path, "no profiles found: expected <logdir>/<run>/plugins/profile/<timestamp>/"
                                 "<host>.xplane.pb (capture one with tf.profiler or jax.profiler.trace) or "
                                 "<logdir>/<run>/<worker>.<span>.pt.trace.json[.gz] (torch.profiler)")
    if run is None:
        chosen = runs[0]
    else:
        matches = [r for r in runs if r.run == run]
        if not matches:
            raise ProfileError(path, f"no run {run!r}; runs: {', '.join(r.run for r in runs)}")
        chosen = matches[0]
    return chosen.run, pick_host(chosen.path, chosen.hosts, host)


def newest_first(runs):
    """Runs sorted newest first: profile run names are timestamps."""
    return tuple(sorted(runs, key=lambda r: (r.run.rsplit("/", 1)[-1], r.run), reverse=True))


def host_name(path):
    """The host a profile file is of: its file name without `.xplane.pb`, or a Kineto file's worker."""
    base = os.path.basename(str(path))
    if is_kineto_file(base):
        return worker_and_span(base)[0]
    return base[: -len(XPLANE_SUFFIX)] if base.endswith(XPLANE_SUFFIX) else base


def pick_host(where, files, host):
    """All `files`, or the one of `host`; ProfileError listing the hosts when there is none."""
    if host is None:
        return list(files)
    chosen = [f for f in files if f.host == host]
    if not chosen:
        raise ProfileError(where, f"no host {host!r}; hosts: {', '.join(f.host for f in files)}")
    return chosen
