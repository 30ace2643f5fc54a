"""Per GPU: time by kind of device work (computation, communication, memory), their overlap, and idle time.

The same quantities Holistic Trace Analysis reports (kernel type breakdown, communication/computation
overlap, temporal breakdown), computed on our trace model so the two can be held to each other.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.analysis.kernel_names import is_nccl
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.trace import ActivityKind

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.model.trace import DeviceActivity
    from tb_gpu_advisor.model.trace import Intervals


KERNEL_TYPES = ("computation", "communication", "memory")


@dataclass(frozen=True)
class KernelTypeTimes:
    """Summed durations (ps) per kernel type, the union of communication and computation and their overlap,
    and the span from the first event's start to the last event's end with the part of it no event covers."""

    summed_ps: dict  # type -> summed duration
    exclusive_ps: dict  # "+"-joined set of types running at once, e.g. "computation+communication" -> time
    communication_ps: int  # union of communication kernels
    overlap_ps: int  # union of communication inside the union of computation
    span_ps: int
    idle_ps: int
    computation_union_ps: int

    def exclusive_pct(self) -> dict[str, float]:
        """Shares of the time any work runs, by the set of kernel types running at once (sums to 100)."""
        total = sum(self.exclusive_ps.values())
        return {key: 100.0 * value / total for key, value in self.exclusive_ps.items()} if total else {}

    def summed_pct(self):
        total = sum(self.summed_ps.values())
        return {key: (100.0 * value / total if total else None) for key, value in self.summed_ps.items()}

    @property
    def overlap_pct(self) -> float | None:
        """Share of communication time during which computation runs; None without communication."""
        return 100.0 * self.overlap_ps / self.communication_ps if self.communication_ps else None

    def temporal_pct(self) -> dict[str, float] | None:
        """(idle, computation, other work) as shares of the span."""
        if not self.span_ps:
            return None
        other = self.span_ps - self.idle_ps - self.computation_union_ps
        return {
            "idle": 100.0 * self.idle_ps / self.span_ps,
            "computation": 100.0 * self.computation_union_ps / self.span_ps,
            "non_computation": 100.0 * other / self.span_ps,
        }


def kernel_types(activity: DeviceActivity, keep: np.ndarray | None = None) -> KernelTypeTimes:
    """KernelTypeTimes of a DeviceActivity, over the events `keep` selects (a boolean mask; all by default)."""
    keep = np.ones(len(activity), dtype=bool) if keep is None else keep
    names = activity.names
    nccl_name = np.array([is_nccl(name) for name in names], dtype=bool)
    kernel = activity.kind == int(ActivityKind.KERNEL)
    communication = kernel & (nccl_name[activity.name_id] if len(names) else False) & keep
    computation = kernel & ~communication & keep
    memory = ((activity.kind == int(ActivityKind.MEMCPY)) | (activity.kind == int(ActivityKind.MEMSET))) & keep
    duration = activity.duration_ps
    summed = {
        "computation": int(duration[computation].sum()),
        "communication": int(duration[communication].sum()),
        "memory": int(duration[memory].sum()),
    }
    start, end = activity.start_ps, activity.end_ps
    comm_union = intervals.union(start[communication], end[communication])
    comp_union = intervals.union(start[computation], end[computation])
    unions = {
        "computation": comp_union,
        "communication": comm_union,
        "memory": intervals.union(start[memory], end[memory]),
    }
    any_work = keep & (computation | communication | memory)
    busy = intervals.union(start[any_work], end[any_work])
    span = int(busy.end_ps[-1] - busy.start_ps[0]) if len(busy) else 0
    return KernelTypeTimes(
        summed_ps=summed,
        communication_ps=comm_union.total_ps,
        exclusive_ps=_exclusive(unions),
        overlap_ps=intervals.intersect(comm_union, comp_union).total_ps,
        span_ps=span,
        idle_ps=span - busy.total_ps,
        computation_union_ps=comp_union.total_ps,
    )


def in_window(activity: DeviceActivity, window: Intervals) -> np.ndarray:
    """Mask of the events that start inside `window` (Intervals)."""
    starts = activity.start_ps
    if not len(window):
        return np.zeros(len(starts), dtype=bool)
    position = np.searchsorted(window.start_ps, starts, side="right") - 1
    return (position >= 0) & (starts < window.end_ps[np.maximum(position, 0)])


def kernel_types_in_window(activity: DeviceActivity, window: Intervals) -> KernelTypeTimes:
    """KernelTypeTimes over the events that start inside `window` (Intervals)."""
    return kernel_types(activity, in_window(activity, window))


def _exclusive(unions):
    """Time per set of types running at once, from one sweep over the disjoint intervals of each type."""
    points, delta = [], []
    for bit, key in enumerate(KERNEL_TYPES):
        spans = unions[key]
        points += [spans.start_ps, spans.end_ps]
        delta += [np.full(len(spans), 1 << bit, np.int64), np.full(len(spans), -(1 << bit), np.int64)]
    points, delta = np.concatenate(points), np.concatenate(delta)
    if not len(points):
        return {}
    order = np.argsort(points, kind="stable")
    points, state = points[order], np.cumsum(delta[order])
    lengths = np.diff(points)
    result = {}
    for mask in range(1, 1 << len(KERNEL_TYPES)):
        total = int(lengths[state[:-1] == mask].sum())
        if total:
            result["+".join(key for bit, key in enumerate(KERNEL_TYPES) if mask >> bit & 1)] = total
    return result
