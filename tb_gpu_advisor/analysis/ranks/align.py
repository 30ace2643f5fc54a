"""The ranks on one timeline: steps matched by step number, collectives matched by their order in the step, and
each rank's clock offset estimated from the collectives' end times (the ranks of a group leave a collective
together, so a rank whose ends sit later than the others' by the same amount every time has its clock ahead).
Ranks whose traces name the same machine and give absolute times read one clock: they get one offset together,
and none at all when every rank is on that one machine."""

import statistics
from dataclasses import dataclass

# Matched calls needed to estimate a rank's offset; with fewer the clocks are taken as recorded.
MIN_CALLS_FOR_OFFSET = 3


@dataclass(frozen=True)
class MatchedCall:
    """One collective as every rank ran it: arrivals and ends on the aligned clock (ps), in rank order."""

    index: int  # its order among the step's collectives
    collective: str
    bytes: int | None
    group_size: int | None
    starts_ps: tuple
    ends_ps: tuple


@dataclass(frozen=True)
class MatchedStep:
    """One step number present on every rank: each rank's window on the aligned clock and the matched calls."""

    step_num: int | None
    starts_ps: tuple
    ends_ps: tuple
    calls: tuple  # MatchedCall
    unmatched_calls: int  # calls left out because the ranks disagree on their count or kinds


@dataclass(frozen=True)
class Alignment:
    """The matched steps and the clock offset of each rank (ps to subtract from its times)."""

    steps: tuple  # MatchedStep
    offsets_ps: tuple  # per rank
    offset_calls: int  # matched calls the offsets were estimated from (0: clocks as recorded)
    same_clock: bool  # every rank's trace gave an absolute time origin
    one_clock: bool = False  # every rank on one machine with absolute times: no offset to estimate
    residual_ps: int | None = None  # median spread of a call's ends over the ranks after the offsets (when estimated)
    clocks: tuple = ()  # per rank, the key of the clock it reads: ranks with equal keys share one (no offset between)


def align(profiles):
    """Alignment of RankProfiles (in rank order)."""
    origins = [p.origin_ps for p in profiles]
    same_clock = all(origin is not None for origin in origins)
    base = min(origins) if same_clock else 0
    shifts = [origin - base if same_clock else 0 for origin in origins]
    raw = _matched_steps(profiles, shifts, [0] * len(profiles))
    clocks = _clocks(profiles) if same_clock else list(range(len(profiles)))
    one_clock = len(profiles) > 1 and len(set(clocks)) == 1
    ends = [call.ends_ps for step in raw for call in step.calls]
    offsets = [0] * len(profiles)
    estimated = len(ends) >= MIN_CALLS_FOR_OFFSET and not one_clock
    if estimated:
        own = [statistics.median(e[rank] - statistics.median(e) for e in ends) for rank in range(len(profiles))]
        for rank, clock in enumerate(clocks):
            offsets[rank] = int(statistics.median(own[r] for r, c in enumerate(clocks) if c == clock))
    steps = _matched_steps(profiles, shifts, offsets) if any(offsets) else raw
    return Alignment(
        steps=steps,
        offsets_ps=tuple(offsets),
        offset_calls=len(ends) if estimated else 0,
        same_clock=same_clock,
        one_clock=one_clock,
        residual_ps=_residual(steps) if estimated else None,
        clocks=tuple(clocks),
    )


def one_capture(profiles):
    """Whether the ranks' traces share an instant on their absolute clocks, as the ranks of one job profiled together
    do; True when a trace gives no absolute time or no step (nothing to tell)."""
    spans = []
    for profile in profiles:
        if profile.origin_ps is None or not profile.steps:
            return True
        spans.append((profile.origin_ps + profile.steps[0].start_ps, profile.origin_ps + profile.steps[-1].end_ps))
    return max(start for start, _ in spans) < min(end for _, end in spans)


def _clocks(profiles):
    """A clock key per rank: ranks whose traces name the same machine share one; a rank naming none has its own."""
    return [p.machine if p.machine else ("rank", i) for i, p in enumerate(profiles)]


def _residual(steps):
    """The median over the matched calls of the spread of their ends over the ranks: how well the offsets align."""
    spreads = [max(call.ends_ps) - min(call.ends_ps) for step in steps for call in step.calls]
    return int(statistics.median(spreads)) if spreads else None


def _matched_steps(profiles, shifts, offsets):
    keyed = [_by_step(p.steps) for p in profiles]
    common = set(keyed[0])
    for steps in keyed[1:]:
        common &= set(steps)
    found = []
    for key in sorted(common, key=lambda k: keyed[0][k].start_ps):
        rank_steps = [steps[key] for steps in keyed]
        moved = [shifts[r] - offsets[r] for r in range(len(profiles))]
        calls, left_out = _matched_calls([s.calls for s in rank_steps], moved)
        found.append(
            MatchedStep(
                step_num=rank_steps[0].step_num,
                starts_ps=tuple(s.start_ps + moved[r] for r, s in enumerate(rank_steps)),
                ends_ps=tuple(s.end_ps + moved[r] for r, s in enumerate(rank_steps)),
                calls=calls,
                unmatched_calls=left_out,
            )
        )
    return tuple(found)


def _by_step(steps):
    """{step number (or position when unnumbered): RankStep}."""
    return {(step.step_num if step.step_num is not None else ("position", i)): step for i, step in enumerate(steps)}


def _matched_calls(per_rank, moved):
    """MatchedCalls of the longest common prefix whose kinds agree on every rank, and how many calls were left."""
    count = min(len(calls) for calls in per_rank)
    matched = []
    for index in range(count):
        kinds = {calls[index].collective for calls in per_rank}
        if len(kinds) != 1:
            break
        sizes = [calls[index].bytes for calls in per_rank if calls[index].bytes is not None]
        groups = [calls[index].group_size for calls in per_rank if calls[index].group_size]
        matched.append(
            MatchedCall(
                index=index,
                collective=kinds.pop(),
                bytes=max(sizes) if sizes else None,
                group_size=max(groups) if groups else None,
                starts_ps=tuple(calls[index].start_ps + moved[r] for r, calls in enumerate(per_rank)),
                ends_ps=tuple(calls[index].end_ps + moved[r] for r, calls in enumerate(per_rank)),
            )
        )
    return tuple(matched), sum(len(calls) for calls in per_rank) - len(matched) * len(per_rank)
