"""What the step time would be if the slowest rank matched the median, if the collectives overlapped with
compute, or if they reached the link's peak: models, each with what it assumes."""

import statistics
from dataclasses import dataclass

from tb_gpu_advisor.analysis.collective_bandwidth import bus_factor
from tb_gpu_advisor.analysis.ranks.step_time import step_times_ms


@dataclass(frozen=True)
class RankWhatIf:
    """One what-if: the modelled step time against the measured one (mean over the matched steps)."""

    name: str  # "rank_at_median", "collectives_overlapped", "collectives_at_link_peak"
    step_ms: float | None  # None when the trace cannot support the model (see `assumes`)
    baseline_ms: float
    speedup: float | None
    kind: str  # "model": an estimate from the trace under the assumptions, never a measurement
    assumes: str
    position: int | None = None  # the rank it moves, for rank_at_median
    tied: tuple = ()  # the other ranks it moves with it (straggler.Straggler.tied)


def rank_at_median(alignment, splits, position, tied=()):
    """The step time if rank `position` (and the ranks `tied` with it: as late in most steps) arrived at each
    step's last collective when the median rank did."""
    steps = step_times_ms(alignment)
    gains = [0.0] * len(steps)
    movers = {position, *tied}
    for step_index in range(len(steps)):
        calls = [s for s in splits if s.step_index == step_index]
        if not calls or position is None:
            continue
        last = max(calls, key=lambda s: (s.end_ps, s.call_index))
        call = alignment.steps[step_index].calls[last.call_index]
        if last.last_rank not in movers:
            continue
        others = [a for r, a in enumerate(call.starts_ps) if r not in movers]
        moved = max(max(others), statistics.median(call.starts_ps)) if others else statistics.median(call.starts_ps)
        kept = [t for r, t in enumerate(last.transfer_ps) if r not in movers]
        # Ranks on the last arriver's clock leave at measured times after its arrival, never estimated ones: where
        # they leave apart (a CPU backend on a busy host), the transfer is the first of them to leave's, the later
        # leavers' time grows with the lateness. On one clock that is every rank.
        mates = [
            t for r, t in enumerate(last.transfer_ps) if r not in movers and _same_clock(alignment, r, last.last_rank)
        ]
        shorter = statistics.median(kept) - min(mates) if kept and mates else 0
        gains[step_index] = (max(0, call.starts_ps[last.last_rank] - moved) + max(0, shorter)) / 1e9
    first_leaver = alignment.one_clock or any(
        _same_clock(alignment, r, position) for r in range(len(alignment.offsets_ps)) if r not in movers
    )
    who = (
        "the rank's extra time before the step's last collective goes away (it arrives"
        if not tied
        else (
            "the extra time of the rank and of the ranks as late as it before the step's last collective goes away "
            "(they arrive"
        )
    )
    return _what_if(
        "rank_at_median",
        steps,
        gains,
        position=position,
        tied=tuple(tied),
        assumes=(
            f"{who} when the median rank does); "
            + (
                "the step's last collective moves its data in the time the first of the other ranks to leave it "
                "took after the last arrival (on one clock the ranks' leaving times are measured: where they leave "
                "apart, as on a CPU backend with more ranks than cores, the later leavers' time grows with the "
                "straggler's lateness); the other ranks and the time after the collective stay as measured"
                if alignment.one_clock
                else "the step's last collective moves its data in the time the first of the ranks on the late "
                "rank's clock (its machine) to leave it took after the last arrival (their leaving times are "
                "measured on that clock, never estimated: where ranks leave apart, as on a CPU backend with more "
                "ranks than cores, the later leavers' time grows with the straggler's lateness); the other ranks "
                "and the time after the collective stay as measured"
                if first_leaver
                else "the other ranks, the transfer and the time after the collective stay as measured: no other "
                "rank reads the late rank's clock, so the transfer the ranks leave apart after its arrival cannot "
                "be told from the clocks' alignment error, and where the straggler's lateness lengthens the "
                "transfer (a CPU backend with more ranks than cores) the step gains more: a lower bound"
            )
        ),
    )


def _same_clock(alignment, rank, other):
    """Whether `rank` reads the clock of rank `other` (one clock: every rank does)."""
    if alignment.one_clock:
        return True
    clocks = alignment.clocks
    return bool(clocks) and other is not None and clocks[rank] == clocks[other]


def collectives_overlapped(alignment, paths, rows, complete=True):
    """The step time if the collective transfers on the critical path ran under the compute that could run beside
    them: a bucket's transfer overlaps only the backward still to run after it is ready, so per step the hidden
    time is at most each rank's compute between its first and its last collective of the step (never its input
    wait or host time), and a step is never shorter than any rank's compute, input and host time or its transfer.
    None where there is nothing to overlap: one collective per step (launched after the last gradient), or ranks
    of the group missing (their lateness cannot be told from transfer)."""
    steps = step_times_ms(alignment)
    if not complete:
        return _none(
            "collectives_overlapped",
            steps,
            "not every rank of the group is in the run: the time after the captured ranks' arrivals may be waiting "
            "for an uncaptured peer, not transfer, so there is no transfer to hide",
        )
    if all(len(step.calls) < 2 for step in alignment.steps):
        return _none(
            "collectives_overlapped",
            steps,
            "one collective per step: it starts after the step's last gradient (one bucket), so no compute is left "
            "to overlap it with; more, smaller buckets (DDP bucket_cap_mb) help only where the backward after the "
            "first bucket is long enough to hide the transfer",
        )
    gains = []
    for index, path in enumerate(paths):
        step = alignment.steps[index]
        exposed = path.share_ps("collective") / 1e9
        if len(step.calls) < 2 or not rows[index]:
            gains.append(0.0)
            continue
        first, last = step.calls[0], step.calls[-1]
        hideable = min(
            min(row.compute_ms, max(0.0, (last.starts_ps[r] - first.starts_ps[r]) / 1e9))
            for r, row in enumerate(rows[index])
        )
        floor = max(max(r.compute_ms + r.input_ms + r.host_ms, r.transfer_ms) for r in rows[index])
        modelled = max(steps[index] - min(exposed, hideable), floor)
        gains.append(max(0.0, steps[index] - modelled))
    return _what_if(
        "collectives_overlapped",
        steps,
        gains,
        assumes=(
            "each transfer on the critical path hides under the compute each rank runs between its first and its "
            "last collective of the step (the backward left after the first bucket is ready), at the same speed; "
            "never under input waits or host time, and a step is never shorter than any rank's compute, input and "
            "host time or its own transfer"
        ),
    )


def _none(name, steps, assumes):
    return RankWhatIf(name, None, round(statistics.mean(steps), 6) if steps else 0.0, None, "model", assumes)


def collectives_at_link_peak(alignment, paths, group_size, link_gbps):
    """The step time if each sized collective on the critical path moved its bytes at the link's peak."""
    steps = step_times_ms(alignment)
    if not link_gbps:
        return _none(
            "collectives_at_link_peak",
            steps,
            "the trace shows no link (a CPU run, or a GPU without its link in the trace): no peak to reach",
        )
    gains = []
    for index, path in enumerate(paths):
        calls = {c.index: c for c in alignment.steps[index].calls}
        gain = 0.0
        for segment in path.segments:
            call = calls.get(segment.call_index) if segment.kind == "collective" else None
            factor = bus_factor(call.collective, group_size) if call is not None else None
            if call is None or not call.bytes or not factor:
                continue
            at_peak = call.bytes * factor / (link_gbps * 1e9) * 1e3
            gain += max(0.0, (segment.end_ps - segment.start_ps) / 1e9 - at_peak)
        gains.append(gain)
    return _what_if(
        "collectives_at_link_peak",
        steps,
        gains,
        assumes=(
            f"each sized collective on the critical path moves its bytes at the link's {link_gbps:g} GB/s bus "
            "bandwidth (NCCL-tests' definition), with no latency; unsized collectives stay as measured"
        ),
    )


def _what_if(name, steps, gains, assumes, position=None, tied=()):
    if not steps:
        return _none(name, steps, "no step is on every rank: no step time to model")
    baseline = statistics.mean(steps)
    modelled = statistics.mean(s - g for s, g in zip(steps, gains))
    if modelled <= 0:
        return _none(name, steps, "the steps matched have no time to model")
    return RankWhatIf(
        name=name,
        step_ms=round(modelled, 6),
        baseline_ms=round(baseline, 6),
        speedup=round(baseline / modelled, 3),
        kind="model",
        assumes=assumes,
        position=position,
        tied=tied,
    )
