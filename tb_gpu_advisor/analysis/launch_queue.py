"""Calls that put work on a GPU blocked on a full launch queue: the GPU was busy with work queued earlier, and the
call returned only when queued work finished and freed a slot (CUPTI records such stretches as "Command Buffer
Full" overhead). Their time is a wait on the device, not launch overhead.

A host call paired with device work by correlation id (a kernel launch, a copy or memset call) is blocked on a
full queue when all of:
- it lasts QUEUE_FULL_MIN_FACTOR times the median of its group's calls and at least QUEUE_FULL_MIN_PS; the
  groups: one-kernel launches, graph launches (several kernels, or a graph event), copy and memset calls;
- the GPU its work runs on was busy for at least QUEUE_FULL_GPU_BUSY of the call: the queue had work;
- its work started after the call returned: it was queued behind that work (a copy that ended before its call
  returned is a blocking copy, analysis.host_wait_spans, not this);
- its first event is not the first of that name (a kernel's first launch may load its module, which is setup
  time, analysis.confidence's warm-up).
Where the trace carries CUPTI's own "Command Buffer Full" records (HostActivity.tagged[QUEUE_FULL_TAG]), a call
paired with device work that they cover for more than half its time is blocked too, whatever its length.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.analysis.launch import pair_launches
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.host import QUEUE_FULL_TAG
from tb_gpu_advisor.model.trace import ActivityKind

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.model.trace import TraceModel


QUEUE_FULL_MIN_FACTOR = 10
QUEUE_FULL_MIN_PS = 50_000_000  # 50 us: a launch call takes about 2-20 us
QUEUE_FULL_GPU_BUSY = 0.9
RECORDED_FULL_SHARE = 0.5  # of a call's time under CUPTI's Command Buffer Full records


@dataclass(frozen=True, eq=False)
class QueueFull:
    """The launch calls blocked on a full queue: a mask over the host launch arrays (HostActivity.launch_*),
    their spans, how many and their total time (ps)."""

    blocked: np.ndarray
    spans: intervals.Intervals
    count: int
    total_ps: int


def queue_full_launches(model: TraceModel) -> QueueFull:
    """QueueFull of a TraceModel's host launch calls (module docstring)."""
    host = model.host_activity
    blocked = np.zeros(len(host.launch_correlation_id), dtype=bool)
    for gpu in model.gpus:
        activity = gpu.activity
        if not len(activity) or not len(blocked):
            continue
        index = pair_launches(host, activity)
        paired = np.flatnonzero(index >= 0)
        if not len(paired):
            continue
        calls, first, counts = np.unique(index[paired], return_index=True, return_counts=True)
        recorded = host.tagged.get(QUEUE_FULL_TAG)
        if recorded is not None and len(recorded):
            start = host.launch_start_ps[calls]
            under = intervals.covered_ps(recorded, start, start + host.launch_duration_ps[calls])
            blocked[calls[under > RECORDED_FULL_SHARE * host.launch_duration_ps[calls]]] = True
        # Each call's earliest device event (np.unique keeps the first in device order, which is by start).
        kernel = paired[first]
        start = host.launch_start_ps[calls]
        duration = host.launch_duration_ps[calls]
        end = start + duration
        copy = np.isin(activity.kind[kernel], (ActivityKind.MEMCPY, ActivityKind.MEMSET))
        graph = ~copy & ((counts > 1) | (activity.kind[kernel] == ActivityKind.GRAPH))
        long = np.zeros(len(calls), dtype=bool)
        for group in (graph, copy, ~graph & ~copy):
            if group.any():
                floor = max(QUEUE_FULL_MIN_FACTOR * float(np.median(duration[group])), QUEUE_FULL_MIN_PS)
                long[group] = duration[group] >= floor
        if not long.any():
            continue
        busy = intervals.union(activity.start_ps, activity.end_ps)
        covered = intervals.covered_ps(busy, start, end)
        _, first_of_name = np.unique(activity.name_id, return_index=True)
        first_launch = np.zeros(len(activity), dtype=bool)
        first_launch[first_of_name] = True
        queued = activity.start_ps[kernel] >= end
        full = long & (covered >= QUEUE_FULL_GPU_BUSY * duration) & queued & ~first_launch[kernel]
        blocked[calls[full]] = True
    start = host.launch_start_ps[blocked]
    end = start + host.launch_duration_ps[blocked]
    return QueueFull(
        blocked=blocked, spans=intervals.union(start, end), count=int(blocked.sum()), total_ps=int((end - start).sum())
    )
