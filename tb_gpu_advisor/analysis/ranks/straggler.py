"""The rank that holds the others back, and why: more compute, slower compute for the same work, a late host
(its input, or other host work), or a late start (it waited on a peer or its previous step ran late).

A rank holds the others back at a collective when it arrives last: each other rank waits for it. A wait is
never evidence that the waiter is slow, so only the last arriver is charged, and its own time is compared with
the median of the other ranks, component by component, to say why it came late. The evidence comes from its own
trace: for compute, the ops (self time) or kernels it runs more often than the others (more work) apart from the
same ones running slower; for input, its input spans (the DataLoader's iteration); for host work, its host ops.
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
    held_ms_by_rank: tuple  # the same for every rank, in rank order (a rank as late as the last: the others' wait
    # less its own, the time the others would still wait for it)
    cause: str | None  # one of CAUSES, None when no rank holds the others back
    excess_ms: dict  # component -> its mean per step minus the other ranks' median (compute, input, host, start)
    work: tuple  # WorkDiff of the cause's evidence (compute: ops or kernels; input: input spans; host: host ops)
    same_work_slower: bool | None  # compute cause: True when the extra time is in the same calls, slower
    tied: tuple = ()  # positions of the other ranks that arrived as late (TIED_SHARE) in most steps
    compute_split_ms: dict | None = None  # the compute excess: {"more_work": in ops run more often, "same_work_slower"}
    evidence: str | None = None  # what `work` lists: "ops" (self time) or "kernels" (compute), "input" or "host"

    @property
    def cause_ms(self):
        """The cause's amount per step: for compute, only the part the cause names (more work, or the same work
        slower); otherwise the component's excess."""
        if self.cause == "more_compute" and self.compute_split_ms:
            return self.compute_split_ms["more_work"]
        if self.cause == "slower_compute" and self.compute_split_ms:
            return self.compute_split_ms["same_work_slower"]
        return self.excess_ms.get({"late_start": "start"}.get(self.cause, self.cause), 0.0) if self.cause else 0.0


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
            tied = rank != worst.last_rank and wait > 0 and own <= TIED_SHARE * wait
            as_late[rank] += rank == worst.last_rank or tied
            if tied:  # the others would wait for it all but its own wait: it holds them back as much
                held[rank][step_index] = (wait - own) / 1e9
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
    excess = _excess(rows, position, count, _own_lateness(alignment, count))
    work, more = _work_diffs(profiles, position)
    extra = max(0.0, excess["compute"])
    split = {"more_work": round(min(more, extra), 6), "same_work_slower": round(extra - min(more, extra), 6)}
    cause = max(excess, key=excess.get)
    evidence = "kernels" if profiles[position].device != "cpu" else "ops"
    if cause == "compute":
        cause = "more_compute" if split["more_work"] >= split["same_work_slower"] else "slower_compute"
    elif cause == "start":
        cause = "late_start"
    elif cause in ("input", "host"):
        evidence = cause
        work = _work_diffs(profiles, position, "input_work" if cause == "input" else "host_work")[0]
    return Straggler(
        position=position,
        late_steps=late[position],
        steps=steps,
        held_ms_per_step=per_rank[position],
        held_ms_by_rank=per_rank,
        cause=cause,
        excess_ms={k: round(v, 6) for k, v in excess.items()},
        work=work,
        same_work_slower=split["more_work"] < split["same_work_slower"] if extra > 0 else None,
        tied=tuple(r for r in range(count) if r != position and 2 * as_late[r] > steps),
        compute_split_ms=split,
        evidence=evidence,
    )


def _others_wait(split):
    others = [w for r, w in enumerate(split.wait_ps) if r != split.last_rank]
    return statistics.median(others) if others else 0


def _excess(rows, position, count, late_start):
    """{component: the rank's mean per step minus the median of the other ranks' means}; `late_start[step][rank]`:
    how late (ms) the rank began the step beyond leaving the previous step's last collective late."""

    def mean(rank, key):
        return statistics.mean(key(step, row[rank], rank) for step, row in enumerate(rows))

    found = {}
    for name, key in (
        ("compute", lambda step, r, rank: r.compute_ms),
        ("input", lambda step, r, rank: r.input_ms),
        ("host", lambda step, r, rank: r.host_ms),
        ("start", lambda step, r, rank: late_start[step][rank]),
    ):
        others = [mean(rank, key) for rank in range(count) if rank != position]
        found[name] = mean(position, key) - statistics.median(others)
    return found


def _own_lateness(alignment, count):
    """Per step and rank, how much later than the earliest rank it began the step (ms), less how much later than the
    earliest it left the previous step's last collective: time in a collective is never the rank's own slowness, so
    a start that only follows a later exit from the collective is not a late start."""
    found = []
    for index, step in enumerate(alignment.steps):
        before = alignment.steps[index - 1].calls if index else ()
        ends = before[-1].ends_ps if before else (0,) * count
        found.append([((step.starts_ps[r] - min(step.starts_ps)) - (ends[r] - min(ends))) / 1e9 for r in range(count)])
    return found


def _work_diffs(profiles, position, kind="work"):
    """(WorkDiff rows per step of the rank's `kind` rows (RankProfile.work, input_work or host_work) against the
    other ranks' median, largest difference first; the extra ms per step in names the rank runs more often than the
    others: more work, not the same work slower)."""

    def per_step(profile):
        steps = max(len(profile.steps), 1)
        return {row.name: (row.count / steps, row.total_ps / steps / 1e9) for row in getattr(profile, kind)}

    mine = per_step(profiles[position])
    others = [per_step(p) for r, p in enumerate(profiles) if r != position]
    diffs = []
    more = 0.0
    for name, (calls, ms) in mine.items():
        their_calls = statistics.median(o.get(name, (0, 0))[0] for o in others)
        their_ms = statistics.median(o.get(name, (0, 0))[1] for o in others)
        extra = ms - their_ms
        if extra <= 0:
            continue
        if calls - their_calls > SAME_CALLS_TOLERANCE:
            more += extra
        diffs.append(WorkDiff(name, round(calls, 3), round(their_calls, 3), round(ms, 6), round(their_ms, 6)))
    diffs.sort(key=lambda d: (-(d.ms_per_step - d.median_ms_per_step), d.name))
    return tuple(diffs[:MAX_WORK_DIFFS]), more
