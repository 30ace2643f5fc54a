"""Finds the steps of a profile: host step markers first, else pre-grouped device `Steps` lines, else none."""

from dataclasses import dataclass, replace

import numpy as np

from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.trace import Intervals


@dataclass(frozen=True)
class StepSet:
    """The steps and where they came from: "host" markers, "device" Steps lines, or "none"."""

    steps: tuple  # model.trace.StepMarker, in time order
    source: str
    device_markers: dict  # ordinal -> tuple of the device's own (group_id, start, end), for "device" steps

    @property
    def windows(self):
        """Union of the step windows."""
        return intervals.union([s.start_ps for s in self.steps], [s.end_ps for s in self.steps])

    def device_windows(self, ordinal):
        """The windows a device's busy time is measured in: its own Steps markers for pre-grouped traces."""
        own = self.device_markers.get(ordinal)
        if self.source == "device" and own:
            return intervals.union([m[1] for m in own], [m[2] for m in own])
        return self.windows


def find_steps(model):
    """StepSet of the model, following the documented precedence."""
    if model.host_step_markers:
        steps = tuple(replace(m, group_id=None) for m in model.host_step_markers)
        return StepSet(steps=steps, source="host", device_markers={})
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
        return StepSet(steps=steps, source="device",
                       device_markers={k: tuple(v) for k, v in device_markers.items()})
    return StepSet(steps=(), source="none", device_markers={})


MIN_STEPS_FOR_STDEV = 3


def step_time_stats_ms(step_set):
    """{mean, median, stdev, count} of step times in ms; stdev is the sample deviation (None below
    MIN_STEPS_FOR_STDEV steps: two steps give a deviation, not a spread anyone should read)."""
    times = np.array([s.duration_ps for s in step_set.steps], dtype=np.float64) / 1e9
    if len(times) == 0:
        return {"mean": None, "median": None, "stdev": None, "count": 0}
    return {
        "mean": float(times.mean()),
        "median": float(np.median(times)),
        "stdev": float(times.std(ddof=1)) if len(times) >= MIN_STEPS_FOR_STDEV else None,
        "count": int(len(times)),
    }


def analysis_window(model, step_set):
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
