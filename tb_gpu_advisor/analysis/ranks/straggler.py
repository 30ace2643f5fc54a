"""The rank that holds the others back, and why: more compute, slower compute for the same work, a late host
(its input, or other host work), or a late start (it waited on a peer or its previous step ran late).

A rank holds the others back at a collective when it arrives last: each other rank waits for it. A wait is
never evidence that the waiter is slow, so only the last arriver is charged, and its own time is compared with
the median of the other ranks, component by component, to say why it came late.
"""

import statistics
from dataclasses import dataclass

from tb_gpu_advisor.analysis.ranks.step_time import step_times_ms

# Below this share of the step, what the last rank costs the others is noise between equal ranks.
MIN_HELD_SHARE = 0.10
# A rank that waits at most this share of the others' wait for the last rank arrived as late as it did: when it
# does so (or is the last itself) in most steps, it holds the others back as much.
TIED_SHARE = 0.10
# A name whose calls per step differ by this much between ranks is more (or less) work, not the same work.
SAME_CALLS_TOLERANCE = 0.5
MAX_WORK_DIFFS = 8
CAUSES = ("more_compute", "slower_compute", "input", "host", "late_start")


@dataclass(frozen=True)
class WorkDiff:
    """One op or kernel name: calls and time per step on the slowest rank against the other ranks' median."""

    name: str
    calls_per_step: float
    median_calls_per_step: float
    ms_per_step: float
    median_ms_per_step: float


@dataclass(frozen=True)
class Straggler:
    """The slowest rank (position in rank order; None when no rank holds the others back) and the evidence."""

    position: int | None
    late_steps: int  # steps in which it arrived last at the collective the others waited on longest
    steps: int
    held_ms_per_step: float  # the others' median wait on it, per step (mean over the steps)
    held_ms_by_rank: tuple  # the same for every rank, in rank order
    cause: str | None  # one of CAUSES, None when no rank holds the others back
    excess_ms: dict  # component -> its mean per step minus the other ranks' median (compute, input, host, start)
    work: tuple  # WorkDiff, largest time difference first
    same_work_slower: bool | None  # compute cause: True when the extra time is in the same calls, slower
    tied: tuple = ()  # positions of the other ranks that arrived as late (TIED_SHARE) in most steps


def find_straggler(alignment, splits, rows, profiles):
    """Straggler of the run: the rank the others waited on longest, if it came last in most steps and cost them at
    least MIN_HELD_SHARE of the step. `rows`: run.RankStepRow per step per rank."""
    count = len(profiles)
    steps = len(alignment.steps)
    held = [[0.0] * steps for _ in range(count)]
    late = [0] * count
    as_late = [0] * count  # steps in which the rank arrived last or within TIED_SHARE of the last
    for step_index in range(steps):
        calls = [s for s in splits if s.step_index == step_index]
        if not calls:
            continue
        worst = max(calls, key=lambda s: _others_wait(s))
        wait = _others_wait(worst)
        held[worst.last_rank][step_index] = wait / 1e9
        late[worst.last_rank] += 1
        for rank, own in enumerate(worst.wait_ps):
            as_late[rank] += rank == worst.last_rank or (wait > 0 and own <= TIED_SHARE * wait)
    per_rank = tuple(round(sum(h) / steps, 6) if steps else 0.0 for h in held)
    step_ms = statistics.median(step_times_ms(alignment)) if alignment.steps else 0.0
    position = max(range(count), key=lambda r: per_rank[r]) if count and steps else None
    if position is None or per_rank[position] < MIN_HELD_SHARE * step_ms or 2 * late[position] <= steps:
        return Straggler(
            position=None,
            late_steps=0,
            steps=steps,
            held_ms_per_step=0.0,
            held_ms_by_rank=per_rank,
            cause=None,
            excess_ms={},
            work=(),
            same_work_slower=None,
        )
    excess = _excess(rows, position, count)
    work, same = _work_diffs(profiles, position)
    cause = max(excess, key=excess.get)
    if cause == "compute":
        cause = "slower_compute" if same else "more_compute"
    elif cause == "start":
        cause = "late_start"
    return Straggler(
        position=position,
        late_steps=late[position],
        steps=steps,
        held_ms_per_step=per_rank[position],
        held_ms_by_rank=per_rank,
        cause=cause,
        excess_ms={k: round(v, 6) for k, v in excess.items()},
        work=work,
        same_work_slower=same,
        tied=tuple(r for r in range(count) if r != position and 2 * as_late[r] > steps),
    )


def _others_wait(split):
    others = [w for r, w in enumerate(split.wait_ps) if r != split.last_rank]
    return statistics.median(others) if others else 0


def _excess(rows, position, count):
    """{component: the rank's mean per step minus the median of the other ranks' means}."""

    def mean(rank, key):
        return statistics.mean(key(row[rank]) for row in rows)

    found = {}
    for name, key in (
        ("compute", lambda r: r.compute_ms),
        ("input", lambda r: r.input_ms),
        ("host", lambda r: r.host_ms),
        ("start", lambda r: r.start_ms),
    ):
        others = [mean(rank, key) for rank in range(count) if rank != position]
        found[name] = mean(position, key) - statistics.median(others)
    return found


def _work_diffs(profiles, position):
    """(WorkDiff rows, whether the extra compute time is in calls the others make as often), per step."""

    def per_step(profile):
        steps = max(len(profile.steps), 1)
        return {row.name: (row.count / steps, row.total_ps / steps / 1e9) for row in profile.work}

    mine = per_step(profiles[position])
    others = [per_step(p) for r, p in enumerate(profiles) if r != position]
    diffs = []
    more = slower = 0.0
    for name, (calls, ms) in mine.items():
        their_calls = statistics.median(o.get(name, (0, 0))[0] for o in others)
        their_ms = statistics.median(o.get(name, (0, 0))[1] for o in others)
        extra = ms - their_ms
        if extra <= 0:
            continue
        if abs(calls - their_calls) <= SAME_CALLS_TOLERANCE:
            slower += extra
        else:
            more += extra
        diffs.append(WorkDiff(name, round(calls, 3), round(their_calls, 3), round(ms, 6), round(their_ms, 6)))
    diffs.sort(key=lambda d: (-(d.ms_per_step - d.median_ms_per_step), d.name))
    return tuple(diffs[:MAX_WORK_DIFFS]), (slower > more) if diffs else None
