"""Step windows on each GPU: the device activity each host step launched, placed where the device ran it.

A host step marker says when the host issued a step, not when the GPU ran it: a host that runs ahead of the GPU
(asynchronous launches) marks steps that hold only part of the GPU's work of those steps. Each device event is
given to the host step whose time holds the launch call that enqueued it (by correlation id; a CUDA graph
launch gives all its kernels to the step that replayed it); one launched outside every marker, to the step
during whose marker the device began it; one whose launch the trace lacks (queued before the capture), to none. A step's device window starts when the device could have
begun it (the later of its host marker's start and the end of the device's earlier work, at most its first
device event); it ends when both its last device event and its host marker have ended, and no later than
where the next step's starts on that GPU. The windows tile the device's timeline (but for time between markers
when the device has nothing of theirs to run), so their lengths are the step period as the device sees it,
whether the host or the device sets the pace; `work_end_ps` is where the step's own
device work ends and `first_ps` where it starts (HTA's first-to-last-kernel window).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.analysis.launch import pair_launches
from tb_gpu_advisor.model import intervals

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.model.trace import GpuDevice
    from tb_gpu_advisor.model.trace import HostActivity
    from tb_gpu_advisor.model.trace import TraceModel


@dataclass(frozen=True)
class DeviceStep:
    """One step on one GPU; `index` is the step's position among the host step markers."""

    index: int
    name: str
    start_ps: int  # when the device could have begun the step (_ready_ps), at most its first event
    end_ps: int  # max(work_end_ps, its host marker's end), at most the next step's start on this GPU
    first_ps: int  # the start of the first device event the step launched
    work_end_ps: int  # the end of the last device event the step launched
    events: int  # device events the step launched on this GPU

    @property
    def duration_ps(self):
        return self.end_ps - self.start_ps

    @property
    def work_span_ps(self):
        """First to last device event of the step (HTA's step window)."""
        return self.work_end_ps - self.first_ps


@dataclass(frozen=True)
class DeviceSteps:
    """The step windows of one GPU, in step order; steps that launched nothing on it are absent."""

    ordinal: int
    steps: tuple  # DeviceStep

    @property
    def windows(self):
        """Intervals: the union of the GPU's step windows."""
        return intervals.union([s.start_ps for s in self.steps], [s.end_ps for s in self.steps])


def step_of_launch(host_steps: tuple, launch_start_ps: np.ndarray) -> np.ndarray:
    """Index of the host step whose [start, end) holds each launch start, -1 outside every step."""
    if not host_steps or not len(launch_start_ps):
        return np.full(len(launch_start_ps), -1, dtype=np.int64)
    starts = np.array([s.start_ps for s in host_steps], dtype=np.int64)
    ends = np.array([s.end_ps for s in host_steps], dtype=np.int64)
    index = np.searchsorted(starts, launch_start_ps, side="right") - 1
    inside = index >= 0
    inside[inside] = launch_start_ps[inside] < ends[index[inside]]
    return np.where(inside, index, -1)


def gpu_steps(gpu: GpuDevice, host: HostActivity, host_steps: tuple) -> DeviceSteps | None:
    """DeviceSteps of one GPU; None when none of its events was launched inside a host step."""
    activity = gpu.activity
    launch = pair_launches(host, activity)
    paired = launch >= 0
    if not paired.any():
        return None
    step = np.full(len(activity), -1, dtype=np.int64)
    step[paired] = step_of_launch(host_steps, host.launch_start_ps[launch[paired]])
    # Launched between or before the markers (another thread, a loop without a marker around every call): the step
    # during whose marker the device began it.
    outside = paired & (step < 0)
    step[outside] = step_of_launch(host_steps, activity.start_ps[outside])
    valid = step >= 0
    if not valid.any():
        return None
    indices, inverse, counts = np.unique(step[valid], return_inverse=True, return_counts=True)
    first = np.full(len(indices), np.iinfo(np.int64).max, dtype=np.int64)
    last = np.full(len(indices), np.iinfo(np.int64).min, dtype=np.int64)
    np.minimum.at(first, inverse, activity.start_ps[valid])
    np.maximum.at(last, inverse, activity.end_ps[valid])
    order = indices.tolist()
    ready = _ready_ps(activity, first, [host_steps[index].start_ps for index in order])
    # Starts never go back: a step whose work ran before the previous step's (another stream) starts where it does.
    starts = np.maximum.accumulate(ready).tolist()
    steps = []
    for position, index in enumerate(order):
        end = max(int(last[position]), host_steps[index].end_ps, starts[position])
        if position + 1 < len(order):
            end = max(min(end, starts[position + 1]), starts[position])
        steps.append(
            DeviceStep(
                index=index,
                name=host_steps[index].name,
                start_ps=int(starts[position]),
                end_ps=int(end),
                first_ps=int(first[position]),
                work_end_ps=int(last[position]),
                events=int(counts[position]),
            )
        )
    return DeviceSteps(ordinal=gpu.ordinal, steps=tuple(steps))


def _ready_ps(activity, first_ps, host_start_ps):
    """Where each step's window starts: when the device could have begun it, the later of its host marker's start
    and the end of the device's earlier work, and no later than its first event. A device idle before the step's
    first event waited for the host (its marker's start on) or for nothing; a device busy up to it ran earlier
    work (the previous step, or work queued before the capture)."""
    busy = intervals.union(activity.start_ps, activity.end_ps)
    first_ps = np.asarray(first_ps, dtype=np.int64)
    position = np.searchsorted(busy.start_ps, first_ps, side="right") - 1
    previous_end = np.where(position > 0, busy.end_ps[np.maximum(position - 1, 0)], np.iinfo(np.int64).min)
    idle_before = busy.start_ps[position] == first_ps
    earliest = np.maximum(np.asarray(host_start_ps, dtype=np.int64), previous_end)
    return np.where(idle_before, np.minimum(first_ps, earliest), first_ps)


def device_steps(model: TraceModel, host_steps: tuple) -> dict[int, DeviceSteps]:
    """{ordinal: DeviceSteps} of the GPUs with device work launched inside the host steps."""
    found = {}
    for gpu in model.gpus:
        if not len(gpu.activity):
            continue
        steps = gpu_steps(gpu, model.host_activity, host_steps)
        if steps is not None:
            found[gpu.ordinal] = steps
    return found
