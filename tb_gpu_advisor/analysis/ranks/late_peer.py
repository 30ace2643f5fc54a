"""A late peer that was not captured: ranks of the job missing from the run, and the time every captured rank
spent in the step's collectives after the last captured arrival (waiting for an uncaptured peer, or transfer: the
split needs the missing trace)."""

import statistics
from dataclasses import dataclass

# The captured ranks' time after their last arrival, as a share of the step, that names the missing ranks as late:
# the same share a captured rank must cost the others to be named the slowest (straggler.MIN_HELD_SHARE).
MIN_SHARE = 0.10


@dataclass(frozen=True)
class LatePeer:
    """The ranks of the job not in the run, and what the captured ranks spent after their last arrival."""

    missing: tuple  # rank numbers of the job (0..world_size-1) that no trace gives
    after_arrival_ms_per_step: float  # mean over the steps of the least any captured rank spent so
    steps: int  # steps in which every captured rank spent at least MIN_SHARE of the step so
    of_steps: int
    late: bool  # in most steps: the missing ranks (or the transfer) held every captured rank


def missing_ranks(profiles):
    """Rank numbers of the job (one world size on every rank) that no profile gives."""
    worlds = {p.world_size for p in profiles if p.world_size}
    if len(worlds) != 1:
        return ()
    world = next(iter(worlds))
    ranks = {p.rank for p in profiles if p.rank is not None}
    return tuple(r for r in range(world) if r not in ranks) if len(ranks) == len(profiles) else ()


def late_peer(profiles, rows, step_ms):
    """LatePeer of the run, None when no rank of the job is missing. `rows`: run.RankStepRow per step per rank;
    `step_ms`: the run's time per step (step_time.step_times_ms)."""
    missing = missing_ranks(profiles)
    if not missing:
        return None
    least = [min(row.transfer_ms for row in step) for step in rows if step]
    held = sum(
        1 for step, time in zip(rows, step_ms) if step and min(row.transfer_ms for row in step) >= MIN_SHARE * time
    )
    return LatePeer(
        missing=missing,
        after_arrival_ms_per_step=round(statistics.mean(least), 6) if least else 0.0,
        steps=held,
        of_steps=len(least),
        late=bool(least) and held * 2 > len(least),
    )
