"""Each operator's self time: its wall time less the time of the operators it called on its thread (its direct
children), so the times of nested operators (aten::matmul around aten::mm) add up instead of counting twice."""

from __future__ import annotations

import numpy as np


def op_self_ps(ops: dict, names: list[str]) -> dict[str, int]:
    """{op name: summed self time ps} over every thread. `ops`: thread -> (starts, ends, name ids, ...) of its
    cpu_op events; `names`: op names by id. An event's parent is the latest event before it, in start order, one
    level shallower that encloses it; vectorized per nesting level."""
    totals = np.zeros(len(names), dtype=np.int64)
    for starts, ends, ids, *_ in ops.values():
        starts, ends, ids = np.asarray(starts, np.int64), np.asarray(ends, np.int64), np.asarray(ids, np.int64)
        keep = ends > starts
        starts, ends, ids = starts[keep], ends[keep], ids[keep]
        order = np.lexsort((-ends, starts))  # by start, the enclosing one first on a tie
        starts, ends, ids = starts[order], ends[order], ids[order]
        wall = ends - starts
        # Open events at each start: the earlier ones not yet ended (a later one cannot end before it starts).
        depth = np.arange(len(starts)) - np.searchsorted(np.sort(ends), starts, side="right")
        own = wall.copy()
        for level in range(1, int(depth.max(initial=0)) + 1):
            children = np.flatnonzero(depth == level)
            above = np.flatnonzero(depth == level - 1)
            at = np.searchsorted(above, children) - 1
            children, parents = children[at >= 0], above[at[at >= 0]]
            inside = ends[children] <= ends[parents]
            np.subtract.at(own, parents[inside], wall[children[inside]])
        np.add.at(totals, ids, np.maximum(own, 0))
    return {names[i]: int(totals[i]) for i in np.flatnonzero(totals)}
