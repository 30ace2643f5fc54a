"""What a logdir holds, local or remote alike: host files, profile runs and their names.

A run id is `<tb run>/<profile run>` where `<tb run>` is the directory holding `plugins/profile` relative to
the logdir, or just `<profile run>` when `plugins/profile` sits at the logdir's root (as TensorBoard's Profile
tab names them). Hosts are the `<host>.xplane.pb` files of a run. PyTorch (Kineto) runs are the directories
holding `<worker>.<span>.pt.trace.json[.gz]` files, grouped by kineto_runs.py; their hosts are the workers. This
module reads no file system: local_listing.py and remote_listing.py list directories into the shapes below,
and discovery.py resolves what a path names from them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from tb_gpu_advisor.constants import PROFILE_SUBDIR, XPLANE_SUFFIX
from tb_gpu_advisor.files.names import worker_and_span
from tb_gpu_advisor.files.kineto_runs import kineto_runs

_RUN_TIME_FORMAT = "%Y_%m_%d_%H_%M_%S"


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
    hosts: tuple[HostFile, ...]  # sorted by host
    # When it was captured, in seconds since the epoch (capture_time), None when unknown: orders the runs.
    captured_at: float | None = field(default=None, compare=False)
    # The series the run belongs to (a directory relative to the logdir: the TensorBoard run holding
    # plugins/profile, "" at the root; a Kineto run's directory); None: the run id without its last component.
    series: str | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Target:
    """What a path names, as listed: a single file, a run directory (its host files), or a logdir (its runs)."""

    path: str
    name: str  # the last path component
    is_file: bool
    hosts: tuple[HostFile, ...] = ()  # directly inside a directory
    runs: tuple[ProfileRun, ...] = ()  # below a directory without direct host files, newest first


def kineto_profile_runs(
    run_dir: str,
    directory: str,
    names: Iterable[str],
    join: Callable[[str, str], str],
    problem_of: Callable[[str], str | None] | None = None,
    modified_of: Callable[[str], float | None] | None = None,
) -> list[ProfileRun]:
    """ProfileRuns of the Kineto files among `names` of `directory` (kineto.runs), `join` making their paths;
    `problem_of(path)`, if given, says why a host file is refused (HostFile.problem) or None;
    `modified_of(path)` gives a file's modification time (seconds), for runs whose names carry no timestamp."""

    def host_file(worker: str, name: str) -> HostFile:
        path = join(directory, name)
        return HostFile(host=worker, path=path, problem=problem_of(path) if problem_of else None)

    found = []
    for key, members in kineto_runs(run_dir, names):
        hosts = tuple(host_file(worker, name) for worker, name in members)
        found.append(
            ProfileRun(
                run=key,
                path=directory,
                hosts=hosts,
                captured_at=_kineto_capture_time([name for _, name in members], hosts, modified_of),
                series=run_dir,
            )
        )
    return found


def _kineto_capture_time(
    names: Sequence[str], hosts: Sequence[HostFile], modified_of: Callable[[str], float | None] | None
) -> float | None:
    """The newest span timestamp of the run's file names (since the epoch, as tensorboard_trace_handler writes
    them: milliseconds in older PyTorch, nanoseconds in newer), else the newest modification time of its files,
    else None."""
    epochs = [_epoch_s(int(span)) for span in (worker_and_span(name)[1] for name in names) if span is not None]
    spans = [span for span in epochs if span is not None]
    if spans:
        return max(spans)
    modified = [modified_of(host.path) for host in hosts] if modified_of else []
    times = [t for t in modified if t is not None]
    return max(times) if times else None


def _epoch_s(span: int) -> float | None:
    """Seconds since the epoch of a span in milliseconds, microseconds or nanoseconds (told apart by size: each
    unit's values from 2001 to 2286 have their own number of digits), else None."""
    for digits, per_second in ((13, 10**3), (16, 10**6), (19, 10**9)):
        if 10 ** (digits - 1) <= span < 10**digits:
            return span / per_second
    return None


def capture_time(profile_run: str) -> float | None:
    """Seconds since the epoch of an XPlane profile run's directory name (`2024_01_31_12_00_00`, the local
    time of the capture, as the Profile tab writes it), None when the name is not such a timestamp."""
    try:
        return time.mktime(time.strptime(profile_run, _RUN_TIME_FORMAT))
    except (ValueError, OverflowError):
        return None


def run_id(tb_run: str, profile_run: str) -> str:
    """The Profile tab's id of profile run `profile_run` under TensorBoard run `tb_run` ("" at the root)."""
    return f"{tb_run}/{profile_run}" if tb_run else profile_run


def run_name(path: str, name: str) -> str:
    """A run directory's id: `<TensorBoard run>/<timestamp>` when it lies in `<TensorBoard run>/plugins/profile/`
    (so reports name the run, not only its time), else `name`."""
    parts = [part for part in path.replace("\\", "/").split("/") if part not in ("", ".")]
    if len(parts) >= 4 and tuple(parts[-3:-1]) == PROFILE_SUBDIR:
        return f"{parts[-4]}/{parts[-1]}"
    return name


def newest_first(runs: Iterable[ProfileRun]) -> tuple[ProfileRun, ...]:
    """Runs with unique ids (unique_ids), newest capture first (ProfileRun.captured_at; runs of unknown time
    last), then by name: XPlane run names are timestamps."""
    return tuple(
        sorted(
            unique_ids(runs),
            key=lambda r: (r.captured_at is not None, r.captured_at or 0.0, r.run.rsplit("/", 1)[-1], r.run),
            reverse=True,
        )
    )


def unique_ids(runs: Iterable[ProfileRun]) -> list[ProfileRun]:
    """`runs` where no two share an id: of the runs listed under one id (an XPlane run `a/2024_...` and a
    Kineto directory `a/2024_...`, say), an XPlane run keeps it (the Profile tab's id), else the one whose path
    sorts first; the others become `<id> (2)`, `<id> (3)`..., the same at every listing while those runs stay."""
    by_id: dict[str, list[ProfileRun]] = {}
    for profile_run in runs:
        by_id.setdefault(profile_run.run, []).append(profile_run)
    taken = set(by_id)
    found = []
    for run_id_, group in by_id.items():
        group.sort(key=lambda r: (not any(h.path.endswith(XPLANE_SUFFIX) for h in r.hosts), r.path))
        found.append(group[0])
        number = 1
        for profile_run in group[1:]:
            number += 1
            while f"{run_id_} ({number})" in taken:
                number += 1
            taken.add(f"{run_id_} ({number})")
            found.append(replace(profile_run, run=f"{run_id_} ({number})"))
    return found
