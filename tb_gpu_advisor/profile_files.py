"""What a logdir holds, local or remote alike: host files, profile runs, their names, and how a target resolves.

A run id is `<tb run>/<profile run>` where `<tb run>` is the directory holding `plugins/profile` relative to
the logdir, or just `<profile run>` when `plugins/profile` sits at the logdir's root (as TensorBoard's Profile
tab names them). Hosts are the `<host>.xplane.pb` files of a run. PyTorch (Kineto) runs are the directories
holding `<worker>.<span>.pt.trace.json[.gz]` files, grouped by kineto.runs; their hosts are the workers. This
module reads no file system: local_listing.py and remote/listing.py list directories into the shapes below.
"""

import os
from dataclasses import dataclass, field

from tb_gpu_advisor.constants import PROFILE_SUBDIR, XPLANE_SUFFIX
from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.kineto.files import is_kineto_file, worker_and_span
from tb_gpu_advisor.kineto.runs import kineto_runs

NO_PROFILES = ("no profiles found: expected <logdir>/<run>/plugins/profile/<timestamp>/<host>.xplane.pb "
               "(capture one with tf.profiler or jax.profiler.trace) or <logdir>/<run>/<worker>.<span>.pt.trace.json"
               "[.gz] (torch.profiler.tensorboard_trace_handler)")


@dataclass(frozen=True)
class HostFile:
    host: str
    path: str
    problem: str | None = None  # why this host is refused before it is read (e.g. a link out of the logdir)
    # discovery.version as the listing saw it (remote listings: size, ETag, mtime), else None: read when needed
    version: str | None = field(default=None, compare=False)


@dataclass(frozen=True)
class ProfileRun:
    run: str  # the Profile tab's run id
    path: str
    hosts: tuple  # HostFile, sorted by host


@dataclass(frozen=True)
class Target:
    """What a path names, as listed: a single file, a run directory (its host files), or a logdir (its runs)."""

    path: str
    name: str  # the last path component
    is_file: bool
    hosts: tuple = ()  # HostFile directly inside a directory
    runs: tuple = ()  # ProfileRun below a directory without direct host files, newest first


def host_name(path):
    """The host a profile file is of: its file name without `.xplane.pb`, or a Kineto file's worker."""
    base = os.path.basename(str(path))
    if is_kineto_file(base):
        return worker_and_span(base)[0]
    return base[: -len(XPLANE_SUFFIX)] if base.endswith(XPLANE_SUFFIX) else base


def kineto_profile_runs(run_dir, directory, names, join):
    """ProfileRuns of the Kineto files among `names` of `directory` (kineto.runs), `join` making their paths."""
    return [ProfileRun(run=key, path=directory,
                       hosts=tuple(HostFile(host=worker, path=join(directory, name)) for worker, name in members))
            for key, members in kineto_runs(run_dir, names)]


def run_id(tb_run, profile_run):
    """The Profile tab's id of profile run `profile_run` under TensorBoard run `tb_run` ("" at the root)."""
    return f"{tb_run}/{profile_run}" if tb_run else profile_run


def run_name(path, name):
    """A run directory's id: `<TensorBoard run>/<timestamp>` when it lies in `<TensorBoard run>/plugins/profile/`
    (so reports name the run, not only its time), else `name`."""
    parts = [part for part in path.replace("\\", "/").split("/") if part not in ("", ".")]
    if len(parts) >= 4 and tuple(parts[-3:-1]) == PROFILE_SUBDIR:
        return f"{parts[-4]}/{parts[-1]}"
    return name


def newest_first(runs):
    """Runs sorted newest first: profile run names are timestamps."""
    return tuple(sorted(runs, key=lambda r: (r.run.rsplit("/", 1)[-1], r.run), reverse=True))


def pick_host(where, files, host):
    """All `files`, or the one of `host`; ProfileError listing the hosts when there is none."""
    if host is None:
        return list(files)
    chosen = [f for f in files if f.host == host]
    if not chosen:
        raise ProfileError(where, f"no host {host!r}; hosts: {', '.join(f.host for f in files)}")
    return chosen


def resolve(target, run=None, host=None):
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
    if run is None:
        chosen = target.runs[0]
    else:
        chosen = next((r for r in target.runs if r.run == run), None)
        if chosen is None:
            raise ProfileError(target.path, f"no run {run!r}; runs: {', '.join(r.run for r in target.runs)}")
    return chosen.run, pick_host(chosen.path, chosen.hosts, host)
