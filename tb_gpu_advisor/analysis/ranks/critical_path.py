"""The cross-rank critical path of each step: which rank's work, which collective's transfer and whose tail set
the step time.

Walking a step's collectives in order, each one could not move data before its last rank arrived: the path runs
through that rank's work up to its arrival, then the collective's transfer until the last rank left it, and after
the last collective through the tail (optimizer, next step's start) of the rank that ended the step last. The path
covers the run's step window (step_time: the last rank's start to the last rank's end), so the segments are
contiguous, sum to the run's step time, and the paths of consecutive steps neither overlap nor leave a gap; work a
rank did before the window began is on the previous step's path.
"""

from dataclasses import dataclass

from tb_gpu_advisor.analysis.ranks.step_time import step_windows_ps


@dataclass(frozen=True)
class PathSegment:
    """One link of the path: `kind` "work" (a rank computing, reading input or running host code up to its
    arrival), "collective" (the transfer after the last arrival) or "tail"; times in ps from the start of the
    step's window (step_time.step_windows_ps)."""

    kind: str
    position: int | None  # the rank (position in rank order) whose time it is; None for a collective
    start_ps: int
    end_ps: int
    collective: str | None = None
    call_index: int | None = None


@dataclass(frozen=True)
class StepPath:
    step_num: int | None
    step_ps: int  # the run's step time for the step: its window (step_time.step_windows_ps)
    segments: tuple  # PathSegment

    def share_ps(self, kind):
        return sum(s.end_ps - s.start_ps for s in self.segments if s.kind == kind)


def critical_paths(alignment, splits):
    """StepPath per matched step."""
    by_step = {}
    for split in splits:
        by_step.setdefault(split.step_index, []).append(split)
    paths = []
    for step_index, (step, (origin, finish)) in enumerate(zip(alignment.steps, step_windows_ps(alignment))):
        segments = []
        point = origin  # where the path stands (absolute ps)
        calls = {call.index: call for call in step.calls}
        for split in sorted(by_step.get(step_index, ()), key=lambda s: s.call_index):
            rank = split.last_rank
            if split.last_arrival_ps > point:
                segments.append(PathSegment("work", rank, point - origin, split.last_arrival_ps - origin))
            moving = max(split.last_arrival_ps, point)
            # Until its last rank left it, within the step (an async collective may end after a rank's step).
            left = max(calls[split.call_index].ends_ps) if split.call_index in calls else split.end_ps
            left = max(min(left, finish), moving)
            if left > moving:
                segments.append(
                    PathSegment("collective", None, moving - origin, left - origin, split.collective, split.call_index)
                )
            point = max(left, point)
        last = max(range(len(step.ends_ps)), key=lambda r: step.ends_ps[r])
        if finish > point:
            kind = "tail" if segments else "work"
            segments.append(PathSegment(kind, last, point - origin, finish - origin))
        paths.append(StepPath(step_num=step.step_num, step_ps=max(0, finish - origin), segments=tuple(segments)))
    return tuple(paths)
