"""Kernel launch overhead: host launch paired with its kernel by correlation id, latency, tiny kernels."""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.constants import TINY_KERNEL_US
from tb_gpu_advisor.model.trace import ActivityKind

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.analysis.launch_queue import QueueFull
    from tb_gpu_advisor.analysis.steps import StepSet
    from tb_gpu_advisor.model.trace import DeviceActivity
    from tb_gpu_advisor.model.trace import HostActivity
    from tb_gpu_advisor.model.trace import TraceModel


# Histogram bin edges of launch-to-start latency, in microseconds.
LATENCY_BIN_EDGES_US = (0, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, float("inf"))


@dataclass(frozen=True)
class LaunchStats:
    kernel_count: int
    paired_count: int
    latency_p50_ps: float | None
    latency_p95_ps: float | None
    latency_max_ps: int | None
    latency_histogram: tuple  # counts per LATENCY_BIN_EDGES_US bin
    tiny_kernel_count: int
    launches_per_step: float | None
    launch_call_ps: int  # total host time inside launch calls that launched kernels, less queue-full ones
    launch_call_count: int = 0  # those calls (a graph launch is one call for all its kernels)
    queue_full_count: int = 0  # launch calls blocked on a full launch queue (analysis.launch_queue): waits
    queue_full_ps: int = 0  # their total time
    paired_call_count: int = 0  # the distinct host calls the paired kernels came from, blocked ones included


# activity -> (host, its pairing): about ten analyses and rules ask for each GPU's, a search over every launch.
_PAIRED: weakref.WeakKeyDictionary[DeviceActivity, tuple[HostActivity, np.ndarray]] = weakref.WeakKeyDictionary()


def pair_launches(host: HostActivity, activity: DeviceActivity) -> np.ndarray:
    """Index into the host launch arrays for each device event (-1 when no launch shares its correlation id);
    a read-only array, computed once per (host, activity)."""
    cached = _PAIRED.get(activity)
    if cached is not None and cached[0] is host:
        return cached[1]
    index = _pair_launches(host, activity)
    index.flags.writeable = False
    _PAIRED[activity] = (host, index)
    return index


def _pair_launches(host, activity):
    ids = host.launch_correlation_id
    if len(ids) == 0 or len(activity) == 0:
        return np.full(len(activity), -1, dtype=np.int64)
    position = np.searchsorted(ids, activity.correlation_id)
    position = np.minimum(position, len(ids) - 1)
    found = (ids[position] == activity.correlation_id) & (activity.correlation_id >= 0)
    return np.where(found, position, -1)


def _first_of_each(launch: np.ndarray, start_ps: np.ndarray) -> np.ndarray:
    """Indices of the earliest-starting event of each launch call among events paired to `launch`."""
    if not len(launch):
        return np.zeros(0, np.int64)
    order = np.lexsort((start_ps, launch))
    keep = np.ones(len(order), dtype=bool)
    keep[1:] = launch[order][1:] != launch[order][:-1]
    return order[keep]


def launch_stats(model: TraceModel, step_set: StepSet, queue_full: QueueFull | None = None) -> LaunchStats:
    """LaunchStats over all GPUs; latency = kernel start on the device - launch call start on the host, once per
    call (a graph launch's first kernel).
    `queue_full`: analysis.launch_queue.QueueFull, whose calls are waits, not launch time."""
    host = model.host_activity
    blocked = queue_full.blocked if queue_full is not None else np.zeros(len(host.launch_correlation_id), bool)
    latencies, kernel_count, tiny, call_ps, call_count, starts, paired_count = [], 0, 0, 0, 0, [], 0
    paired_calls = 0
    for gpu in model.gpus:
        activity = gpu.activity
        kernels = activity.kind == ActivityKind.KERNEL
        kernel_count += int(kernels.sum())
        tiny += int((activity.duration_ps[kernels] < TINY_KERNEL_US * 1e6).sum())
        starts.append(activity.start_ps[kernels])
        launch_index = pair_launches(host, activity)
        paired = kernels & (launch_index >= 0)
        paired_count += int(paired.sum())
        # A graph launch replays many kernels under one call: its latency is its first kernel's start; the
        # others start when the graph reaches them, which is no launch latency.
        first = _first_of_each(launch_index[paired], activity.start_ps[paired])
        latencies.append(activity.start_ps[paired][first] - host.launch_start_ps[launch_index[paired][first]])
        called = np.zeros(len(blocked), dtype=bool)  # a graph launch is one call for all its kernels
        called[launch_index[paired]] = True
        paired_calls += int(called.sum())
        calls = np.flatnonzero(called & ~blocked)
        call_ps += int(host.launch_duration_ps[calls].sum())
        call_count += len(calls)
    latency = np.concatenate(latencies) if latencies else np.zeros(0, np.int64)
    edges_ps = np.array(LATENCY_BIN_EDGES_US) * 1e6
    histogram = (
        tuple(int(c) for c in np.histogram(latency, bins=edges_ps)[0])
        if len(latency)
        else tuple(0 for _ in LATENCY_BIN_EDGES_US[1:])
    )
    per_step = None
    if step_set.timed_steps:
        kernel_starts = np.sort(np.concatenate(starts)) if starts else np.zeros(0, np.int64)
        counts = [
            np.searchsorted(kernel_starts, s.end_ps) - np.searchsorted(kernel_starts, s.start_ps)
            for s in step_set.timed_steps
        ]
        per_step = float(np.mean(counts))
    return LaunchStats(
        kernel_count=kernel_count,
        paired_count=paired_count,
        latency_p50_ps=float(np.percentile(latency, 50)) if len(latency) else None,
        latency_p95_ps=float(np.percentile(latency, 95)) if len(latency) else None,
        latency_max_ps=int(latency.max()) if len(latency) else None,
        latency_histogram=histogram,
        tiny_kernel_count=tiny,
        launches_per_step=per_step,
        launch_call_ps=call_ps,
        launch_call_count=call_count,
        queue_full_count=queue_full.count if queue_full is not None else 0,
        queue_full_ps=queue_full.total_ps if queue_full is not None else 0,
        paired_call_count=paired_calls,
    )
