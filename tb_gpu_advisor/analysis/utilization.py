"""Per-GPU busy time and activity totals, and the host's input wait while every GPU is idle."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.analysis.kernel_names import is_nccl
from tb_gpu_advisor.analysis.steps import analysis_window
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.trace import ActivityKind

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.analysis.steps import StepSet
    from tb_gpu_advisor.model.trace import DeviceActivity
    from tb_gpu_advisor.model.trace import GpuDevice
    from tb_gpu_advisor.model.trace import Intervals
    from tb_gpu_advisor.model.trace import TraceModel


@dataclass(frozen=True)
class DeviceUsage:
    """How busy one GPU was; percentages are None for a GPU with no activity."""

    ordinal: int
    name: str
    busy_pct: float | None
    busy_ps: int
    window_ps: int
    kernel_count: int
    kernel_ps: int
    memcpy_count: int
    memcpy_ps: int
    memset_count: int
    memset_ps: int
    nccl_ps: int
    largest_gap_ps: int
    stream_count: int
    compute_busy_ps: int = 0  # any kernel other than a collective, copy, memset or graph: busy_ps split in two
    collective_busy_ps: int = 0  # collective kernels with no other activity beside them on this GPU
    kernel_busy_ps: int = 0  # a non-collective kernel or graph runs: compute_busy_ps without copies and memsets

    @property
    def kernel_busy_pct(self) -> float | None:
        return 100.0 * self.kernel_busy_ps / self.window_ps if self.busy_pct is not None and self.window_ps else None

    @property
    def compute_busy_pct(self) -> float | None:
        return 100.0 * self.compute_busy_ps / self.window_ps if self.busy_pct is not None and self.window_ps else None

    @property
    def collective_busy_pct(self) -> float | None:
        return (
            100.0 * self.collective_busy_ps / self.window_ps if self.busy_pct is not None and self.window_ps else None
        )


@dataclass(frozen=True)
class InputWait:
    """Host time in `IteratorGetNext*` (or the DataLoader's `__next__`), or the step thread blocked on its loader
    threads, while no GPU is busy, within the analysis window."""

    wait_ps: int
    window_ps: int

    @property
    def pct(self) -> float | None:
        return 100.0 * self.wait_ps / self.window_ps if self.window_ps > 0 else None


def busy_intervals(activity: DeviceActivity) -> Intervals:
    """Union of every kernel, memcpy, memset and graph on one GPU."""
    return intervals.union(activity.start_ps, activity.end_ps)


def collective_kernels(activity: DeviceActivity) -> np.ndarray:
    """Boolean mask of one GPU's collective (NCCL/RCCL) kernels."""
    kernels = activity.mask(ActivityKind.KERNEL)
    nccl_names = np.array([is_nccl(name) for name in activity.names], dtype=bool)
    return kernels & nccl_names[activity.name_id] if len(nccl_names) else kernels & False


def compute_intervals(activity: DeviceActivity, nccl: np.ndarray | None = None) -> Intervals:
    """Union of everything on one GPU except collective (NCCL/RCCL) kernels: its busy time minus collectives alone.
    `nccl`: collective_kernels(activity), when the caller has it."""
    nccl = collective_kernels(activity) if nccl is None else nccl
    return intervals.union(activity.start_ps[~nccl], activity.end_ps[~nccl])


def kernel_intervals(activity: DeviceActivity, nccl: np.ndarray | None = None) -> Intervals:
    """Union of the non-collective kernels and graphs on one GPU: when it computes, copies and memsets aside.
    `nccl`: collective_kernels(activity), when the caller has it."""
    nccl = collective_kernels(activity) if nccl is None else nccl
    computing = (activity.mask(ActivityKind.KERNEL) & ~nccl) | activity.mask(ActivityKind.GRAPH)
    return intervals.union(activity.start_ps[computing], activity.end_ps[computing])


def all_gpus_busy(model: TraceModel) -> Intervals:
    """Union over GPUs of the time at least one GPU is busy."""
    return intervals.union_all(*(busy_intervals(gpu.activity) for gpu in model.gpus))


def device_usage(gpu: GpuDevice, step_set: StepSet, window: Intervals | None = None) -> DeviceUsage:
    """DeviceUsage of one GPU inside `window` (Intervals): the host's analysis window, shared by all its GPUs so
    their busy times compare (a GPU that starts late and ends early is not "busier"). Pre-grouped traces keep
    each GPU's own Steps markers, which lie at different times on each GPU's timeline. Without a window, the
    GPU's step windows, else its own first-to-last span."""
    activity = gpu.activity
    busy = busy_intervals(activity)
    if len(busy) == 0:
        return DeviceUsage(gpu.ordinal, gpu.name, None, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    if window is not None and len(window) and step_set.source != "device":
        windows = window
    else:
        windows = (
            step_set.device_windows(gpu.ordinal)
            if step_set.steps
            else intervals.union([busy.start_ps[0]], [busy.end_ps[-1]])
        )
    busy_ps = int(intervals.covered_ps(busy, windows.start_ps, windows.end_ps).sum())
    window_ps = windows.total_ps
    # Idle stretches inside the window the page reports, so the largest one never outgrows it.
    idle = intervals.subtract(windows, busy)
    gaps = idle.end_ps - idle.start_ps
    kernels = activity.mask(ActivityKind.KERNEL)
    nccl = collective_kernels(activity)
    compute = compute_intervals(activity, nccl)
    compute_ps = int(intervals.covered_ps(compute, windows.start_ps, windows.end_ps).sum())
    kernel_ps = int(intervals.covered_ps(kernel_intervals(activity, nccl), windows.start_ps, windows.end_ps).sum())
    return DeviceUsage(
        ordinal=gpu.ordinal,
        name=gpu.name,
        busy_pct=100.0 * busy_ps / window_ps if window_ps > 0 else None,
        busy_ps=busy_ps,
        window_ps=window_ps,
        kernel_count=int(kernels.sum()),
        kernel_ps=int(activity.duration_ps[kernels].sum()),
        memcpy_count=int(activity.mask(ActivityKind.MEMCPY).sum()),
        memcpy_ps=int(activity.duration_ps[activity.mask(ActivityKind.MEMCPY)].sum()),
        memset_count=int(activity.mask(ActivityKind.MEMSET).sum()),
        memset_ps=int(activity.duration_ps[activity.mask(ActivityKind.MEMSET)].sum()),
        nccl_ps=int(activity.duration_ps[nccl].sum()),
        largest_gap_ps=int(gaps.max()) if len(gaps) else 0,
        stream_count=int(len(np.unique(activity.stream_id))),
        compute_busy_ps=compute_ps,
        collective_busy_ps=busy_ps - compute_ps,
        kernel_busy_ps=kernel_ps,
    )


def input_wait(model: TraceModel, step_set: StepSet, loader_waits: Intervals = intervals.EMPTY) -> InputWait:
    """InputWait over the analysis window (the steps, else the span of activity). `loader_waits`: the step
    thread's waits on its loader threads while the device idles (FeederWaits.input_blocked)."""
    window = analysis_window(model, step_set)
    waiting = intervals.subtract(
        intervals.union_all(model.host_activity.input_waits, loader_waits), all_gpus_busy(model)
    )
    wait_ps = int(intervals.covered_ps(waiting, window.start_ps, window.end_ps).sum()) if len(window) else 0
    return InputWait(wait_ps=wait_ps, window_ps=window.total_ps)
