"""Operator calls that stalled: an op whose wall time lies mostly outside its traced children and far above its
own usual duration was blocked (a lock, the GIL, a page fault, another thread's work), not slow.

The stalls become host tags (`op_stall:<op name>`: the op's untraced time) and, for what ran meanwhile on other
threads, `op_stall_near` (the stalls during which, or right after which, another thread started a host event).
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.host import OP_STALL_NEAR_TAG, OP_STALL_PREFIX

# An op stalled when its untraced time is at least this long, this share of its wall time, and its wall time
# this many times its name's median duration (over at least MIN_CALLS calls).
MIN_UNTRACED_PS = 1_000_000_000
MIN_UNTRACED_SHARE = 0.8
MIN_TIMES_MEDIAN = 5.0
MIN_CALLS = 3
# Events of other threads starting this soon after a stall's end are counted as its company.
NEAR_PS = 2_000_000_000
MAX_STALLS = 1000


def op_stalls(ops: dict, spans: dict, names: list[str]) -> dict[str, list[tuple[int, int]]]:
    """{tag: [(start ps, end ps), ...]} of the stalls (module docstring). `ops`: thread -> (starts, ends, name ids,
    ...) of cpu_op events; `spans`: thread -> (starts, ends) of all its host events; `names`: op names by id."""
    durations: dict[int, list[np.ndarray]] = {}
    for starts, ends, ids, *_ in ops.values():
        ids = np.asarray(ids)
        wall = np.asarray(ends) - np.asarray(starts)
        for name_id in np.unique(ids):
            durations.setdefault(int(name_id), []).append(wall[ids == name_id])
    median = {
        name_id: float(np.median(np.concatenate(parts)))
        for name_id, parts in durations.items()
        if sum(len(p) for p in parts) >= MIN_CALLS
    }
    found: dict[str, list[tuple[int, int]]] = {}
    stalls = []
    for thread, (starts, ends, ids, *_) in ops.items():
        starts, ends, ids = np.asarray(starts), np.asarray(ends), np.asarray(ids)
        limit = np.array([median.get(int(i), np.inf) for i in ids]) * MIN_TIMES_MEDIAN
        wall = ends - starts
        for index in np.flatnonzero((wall >= MIN_UNTRACED_PS) & (wall >= limit))[:MAX_STALLS]:
            untraced = _untraced(spans.get(thread), int(starts[index]), int(ends[index]))
            total = int((untraced.end_ps - untraced.start_ps).sum())
            if total >= MIN_UNTRACED_PS and total >= MIN_UNTRACED_SHARE * wall[index]:
                found.setdefault(f"{OP_STALL_PREFIX}{names[ids[index]]}", []).extend(
                    zip(untraced.start_ps.tolist(), untraced.end_ps.tolist())
                )
                stalls.append((thread, int(starts[index]), int(ends[index])))
    for thread, start, end in stalls[:MAX_STALLS]:
        for other, (other_starts, _) in spans.items():
            if other == thread:
                continue
            other_starts = np.asarray(other_starts)
            if ((other_starts >= start) & (other_starts < end + NEAR_PS)).any():
                found.setdefault(OP_STALL_NEAR_TAG, []).append((start, end))
                break
    return found


def _untraced(spans, start, end):
    """The parts of [start, end) that no other event of the thread, nested in it, covers."""
    if spans is None:
        return intervals.union([start], [end])
    starts, ends = np.asarray(spans[0]), np.asarray(spans[1])
    inside = (starts >= start) & (ends <= end) & ((starts > start) | (ends < end))
    return intervals.subtract(intervals.union([start], [end]), intervals.union(starts[inside], ends[inside]))
