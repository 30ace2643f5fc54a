"""Interval arithmetic on sorted numpy arrays: union, covered length inside windows, subtraction."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.model.trace import Intervals

EMPTY = Intervals(np.zeros(0, np.int64), np.zeros(0, np.int64))


def union(starts: list[int] | np.ndarray, ends: list[int] | np.ndarray) -> Intervals:
    """Merges possibly overlapping [start, end) intervals into sorted disjoint ones."""
    starts = np.asarray(starts, dtype=np.int64)
    ends = np.asarray(ends, dtype=np.int64)
    keep = ends > starts
    if not keep.all():
        starts, ends = starts[keep], ends[keep]
    del keep
    if len(starts) == 0:
        return EMPTY
    if (starts[1:] < starts[:-1]).any():
        order = np.argsort(starts, kind="stable")
        starts, ends = starts[order], ends[order]
        del order
    running_end = np.maximum.accumulate(ends)
    # A new block starts where an interval begins after everything before it has ended.
    new_block = np.empty(len(starts), dtype=bool)
    new_block[0] = True
    np.greater(starts[1:], running_end[:-1], out=new_block[1:])
    first = np.flatnonzero(new_block)
    del new_block
    # running_end never decreases, so a block ends where its last interval's running end is.
    last = np.empty(len(first), dtype=np.int64)
    last[:-1] = first[1:] - 1
    last[-1] = len(starts) - 1
    return Intervals(starts[first], running_end[last])


def union_all(*interval_sets: Intervals) -> Intervals:
    """Union of several Intervals."""
    sets = [s for s in interval_sets if len(s)]
    if not sets:
        return EMPTY
    return union(np.concatenate([s.start_ps for s in sets]), np.concatenate([s.end_ps for s in sets]))


def covered_ps(
    intervals: Intervals, window_start: list[int] | np.ndarray, window_end: list[int] | np.ndarray
) -> np.ndarray:
    """Length of `intervals` inside each window [window_start[i], window_end[i]); vectorized over windows."""
    window_start = np.atleast_1d(np.asarray(window_start, dtype=np.int64))
    window_end = np.atleast_1d(np.asarray(window_end, dtype=np.int64))
    if len(intervals) == 0:
        return np.zeros(len(window_start), dtype=np.int64)
    starts, ends = intervals.start_ps, intervals.end_ps
    prefix = np.concatenate([[0], np.cumsum(ends - starts)])

    def covered_before(t: np.ndarray) -> np.ndarray:
        # Length of the union that lies before time t.
        index = np.searchsorted(ends, t, side="right")  # intervals wholly before t
        partial = np.where(index < len(starts), np.clip(t - starts[np.minimum(index, len(starts) - 1)], 0, None), 0)
        return prefix[index] + partial

    return np.maximum(covered_before(window_end) - covered_before(window_start), 0)


def intersect(intervals: Intervals, other: Intervals) -> Intervals:
    """Intersection of two Intervals."""
    if len(intervals) == 0 or len(other) == 0:
        return EMPTY
    starts = np.concatenate([intervals.start_ps, other.start_ps])
    ends = np.concatenate([intervals.end_ps, other.end_ps])
    points = np.concatenate([starts, ends])
    delta = np.concatenate([np.ones(len(starts), np.int64), -np.ones(len(ends), np.int64)])
    order = np.lexsort((delta, points))  # ends before starts at equal times
    points, depth = points[order], np.cumsum(delta[order])
    inside = depth == 2
    seg_start = points[:-1][inside[:-1]]
    seg_end = points[1:][inside[:-1]]
    keep = seg_end > seg_start
    return union(seg_start[keep], seg_end[keep])


def subtract(intervals: Intervals, other: Intervals) -> Intervals:
    """Parts of `intervals` not covered by `other`."""
    if len(intervals) == 0 or len(other) == 0:
        return intervals
    overlap = intersect(intervals, other)
    if len(overlap) == 0:
        return intervals
    points = np.concatenate([intervals.start_ps, intervals.end_ps, overlap.start_ps, overlap.end_ps])
    delta = np.concatenate(
        [
            np.ones(len(intervals), np.int64),
            -np.ones(len(intervals), np.int64),
            -np.ones(len(overlap), np.int64),
            np.ones(len(overlap), np.int64),
        ]
    )
    order = np.lexsort((delta, points))
    points, depth = points[order], np.cumsum(delta[order])
    inside = depth == 1
    seg_start = points[:-1][inside[:-1]]
    seg_end = points[1:][inside[:-1]]
    keep = seg_end > seg_start
    return union(seg_start[keep], seg_end[keep])


def clip(intervals: Intervals, start: int, end: int) -> Intervals:
    """The part of `intervals` inside [start, end)."""
    if len(intervals) == 0:
        return intervals
    return union(np.clip(intervals.start_ps, start, end), np.clip(intervals.end_ps, start, end))
