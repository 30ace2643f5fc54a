"""The cross-rank critical path of each step: which rank's work, which collective's transfer and whose tail set
the step time.

Walking a step's collectives in order, each one could not move data before its last rank arrived: the path runs
through that rank's work up to its arrival, then the collective's transfer until the last rank left it, and after
the last collective through the tail (optimizer, next step's start) of the rank that ended the step last. The path
starts at the earliest rank's step start: when the rank that arrived last first started its step later, the time
before is that rank's previous step's tail. So the segments are contiguous and sum to the step's span.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class PathSegment:
    """One link of the path: `kind` "work" (a rank computing, reading input or running host code up to its
    arrival), "collective" (the transfer after the last arrival) or "tail"; times in ps from the step's start
    (the earliest rank's)."""

    kind: str
    position: int | None  # the rank (position in rank order) whose time it is; None for a collective
    start_ps: int
    end_ps: int
    collective: str | None = None
    call_index: int | None = None


@dataclass(frozen=True)
class StepPath:
    step_num: int | None
    step_ps: int  # from the earliest rank's start to the latest rank's end
    segments: tuple  # PathSegment

    def share_ps(self, kind):
        return sum(s.end_ps - s.start_ps for s in self.segments if s.kind == kind)


def critical_paths(alignment, splits):
    """StepPath per matched step."""
    by_step = {}
    for split in splits:
        by_step.setdefault(split.step_index, []).append(split)
    paths = []
    for step_index, step in enumerate(alignment.steps):
        origin = min(step.starts_ps)
        segments = []
        point = None  # where the path stands (absolute ps)
        calls = {call.index: call for call in step.calls}
        for split in sorted(by_step.get(step_index, ()), key=lambda s: s.call_index):
            rank = split.last_rank
            if point is None and step.starts_ps[rank] > origin:
                segments.append(PathSegment("tail", rank, 0, step.starts_ps[rank] - origin))
            begin = step.starts_ps[rank] if point is None else max(point, step.starts_ps[rank])
            if split.last_arrival_ps > begin:
                segments.append(PathSegment("work", rank, begin - origin, split.last_arrival_ps - origin))
            moving = max(split.last_arrival_ps, point if point is not None else split.last_arrival_ps)
            # Until its last rank left it, within the step (an async collective may end after a rank's step).
            left = max(calls[split.call_index].ends_ps) if split.call_index in calls else split.end_ps
            left = max(min(left, max(step.ends_ps)), moving)
            if left > moving:
                segments.append(
                    PathSegment("collective", None, moving - origin, left - origin, split.collective, split.call_index)
                )
            point = max(left, point if point is not None else left)
        last = max(range(len(step.ends_ps)), key=lambda r: step.ends_ps[r])
        if point is None and step.starts_ps[last] > origin:
            segments.append(PathSegment("tail", last, 0, step.starts_ps[last] - origin))
        begin = point if point is not None else step.starts_ps[last]
        if step.ends_ps[last] > begin:
            segments.append(
                PathSegment("work" if point is None else "tail", last, begin - origin, step.ends_ps[last] - origin)
            )
        paths.append(StepPath(step_num=step.step_num, step_ps=max(step.ends_ps) - origin, segments=tuple(segments)))
    return tuple(paths)
