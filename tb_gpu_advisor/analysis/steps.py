"""Finds the steps of a profile: host step markers first, else pre-grouped device `Steps` lines, else none; host
steps are timed on the device when their launches tie device work to them (analysis.device_steps). Steps the
capture cut and a warm-up first step are left out (analysis.steady_steps): every per-step number is over the
others."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from tb_gpu_advisor.analysis.device_steps import device_steps
from tb_gpu_advisor.analysis.steady_steps import left_out_steps
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.trace import Intervals

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.model.trace import TraceModel


@dataclass(frozen=True)
class StepSet:
    """The steps and where they came from: "host" markers, "device" Steps lines, or "none".

    `steps` are the markers as found (host-side analyses read them: what the host did in a step). `device_steps`
    holds, per GPU, the host steps' windows on that device (analysis.device_steps.DeviceSteps); `timed_steps`
    are the windows step times, busy shares and the per-step breakdown are measured in: each host step's window
    on the devices (earliest start, latest end over the GPUs) when device work is tied to the steps, else the
    markers themselves.
    """

    steps: tuple  # model.trace.StepMarker, in time order
    source: str
    device_markers: dict  # ordinal -> tuple of the device's own (group_id, start, end), for "device" steps
    device_steps: dict = field(default_factory=dict)  # ordinal -> device_steps.DeviceSteps, for "host" steps
    left_out: tuple = ()  # steady_steps.LeftOutStep: marked steps cut by the capture or warm-up, not in `steps`

    @property
    def timing(self) -> str:
        """Where the step windows lie: "device" (host steps placed on the devices), else `source`."""
        return "device" if self.device_steps else self.source

    @cached_property
    def timed_steps(self):
        """StepMarker per step, in `steps` order: the step's window on the devices when it launched device work
        there (a step without any keeps its marker), else the marker."""
        if not self.device_steps:
            return self.steps
        found = {}
        for gpu_steps in self.device_steps.values():
            for step in gpu_steps.steps:
                start, end = found.get(step.index, (step.start_ps, step.end_ps))
                found[step.index] = (min(start, step.start_ps), max(end, step.end_ps))
        return tuple(
            replace(marker, start_ps=found[index][0], end_ps=found[index][1]) if index in found else marker
            for index, marker in enumerate(self.steps)
        )

    @property
    def windows(self) -> Intervals:
        """Union of the timed step windows."""
        steps = self.timed_steps
        return intervals.union([s.start_ps for s in steps], [s.end_ps for s in steps])

    def device_windows(self, ordinal: int) -> Intervals:
        """The windows a device's busy time is measured in: its own Steps markers for pre-grouped traces."""
        own = self.device_markers.get(ordinal)
        if self.source == "device" and own:
            return intervals.union([m[1] for m in own], [m[2] for m in own])
        return self.windows


def find_steps(model: TraceModel) -> StepSet:
    """StepSet of the model, following the documented precedence, its cut and warm-up steps left out."""
    return _steady(model, _marked_steps(model))


def _steady(model, found):
    """`found` without the steps steady_steps leaves out (device timing and device markers of the rest only)."""
    left_out = left_out_steps(model, found.steps, found.timed_steps)
    if not left_out:
        return found
    gone = {(s.step.start_ps, s.step.name) for s in left_out}
    timed = found.timed_steps
    kept = tuple(
        marker for marker, as_timed in zip(found.steps, timed) if (as_timed.start_ps, as_timed.name) not in gone
    )
    if found.source == "host":
        return StepSet(kept, "host", {}, device_steps(model, kept), left_out)
    groups = {marker.group_id for marker in kept}
    markers = {ordinal: tuple(m for m in own if m[0] in groups) for ordinal, own in found.device_markers.items()}
    return StepSet(kept, found.source, {k: v for k, v in markers.items() if v}, {}, left_out)


def _marked_steps(model):
    """StepSet of every marked step, following the documented precedence."""
    if model.host_step_markers:
        steps = tuple(replace(m, group_id=None) for m in model.host_step_markers)
        return StepSet(steps=steps, source="host", device_markers={}, device_steps=device_steps(model, steps))
    longest = {}
    device_markers = {}
    for gpu in model.gpus:
        for marker in gpu.step_markers:
            device_markers.setdefault(gpu.ordinal, []).append((marker.group_id, marker.start_ps, marker.end_ps))
            best = longest.get(marker.group_id)
            if best is None or marker.duration_ps > best.duration_ps:
                longest[marker.group_id] = marker
    if longest:
        steps = tuple(sorted((replace(m, step_num=None) for m in longest.values()), key=lambda s: s.start_ps))
        return StepSet(steps=steps, source="device", device_markers={k: tuple(v) for k, v in device_markers.items()})
    return StepSet(steps=(), source="none", device_markers={})


MIN_STEPS_FOR_STDEV = 3


def step_time_stats_ms(step_set: StepSet) -> dict:
    """{mean, median, stdev, count} of step times in ms; stdev is the sample deviation (None below
    MIN_STEPS_FOR_STDEV steps: two steps give a deviation, not a spread anyone should read); over the timed
    steps."""
    times = np.array([s.duration_ps for s in step_set.timed_steps], dtype=np.float64) / 1e9
    if len(times) == 0:
        return {"mean": None, "median": None, "stdev": None, "count": 0}
    return {
        "mean": float(times.mean()),
        "median": float(np.median(times)),
        "stdev": float(times.std(ddof=1)) if len(times) >= MIN_STEPS_FOR_STDEV else None,
        "count": int(len(times)),
    }


def analysis_window(model: TraceModel, step_set: StepSet) -> Intervals:
    """Intervals the trace-wide percentages are measured in.

    The step windows; without steps, first-to-last GPU activity over all GPUs; without GPU activity, the
    span of host activity.
    """
    if step_set.steps:
        return step_set.windows
    active = [gpu.activity for gpu in model.gpus if len(gpu.activity)]
    if active:
        start = min(int(a.start_ps[0]) for a in active)
        end = max(int(a.end_ps.max()) for a in active)
    else:
        start, end = model.profile_span_ps
    if end <= start:
        return Intervals(np.zeros(0, np.int64), np.zeros(0, np.int64))
    return intervals.union([start], [end])
