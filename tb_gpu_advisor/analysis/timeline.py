"""Binned GPU activity over the analysis window: per GPU, the busy fraction of each equal time bin."""

from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.analysis.steps import analysis_window, find_steps
from tb_gpu_advisor.analysis.utilization import busy_intervals
from tb_gpu_advisor.model import intervals

DEFAULT_BINS = 240


@dataclass(frozen=True, eq=False)
class DeviceTimeline:
    """Busy fraction (0..1) of one GPU in each of its bins.

    The bins cover the common window, except in pre-grouped traces where a GPU with its own `Steps` markers
    is binned over the span of those markers (each GPU of such a trace steps at its own time).
    """

    ordinal: int
    name: str
    bin_edges_ps: np.ndarray
    busy_fraction: np.ndarray


@dataclass(frozen=True, eq=False)
class Timeline:
    """Equal bins over the common window [start_ps, end_ps); `bin_edges_ps` has one more element than bins.

    `input_wait_fraction` is the share of each common bin the host spent in `IteratorGetNext*`;
    `step_bounds_ps` are the (start, end) of each step.
    """

    start_ps: int
    end_ps: int
    bin_edges_ps: np.ndarray
    devices: tuple
    input_wait_fraction: np.ndarray
    step_bounds_ps: tuple

    @property
    def bin_count(self):
        return max(len(self.bin_edges_ps) - 1, 0)


def _bin_edges(start_ps, end_ps, bins):
    """`bins + 1` integer edges from start to end; fewer bins when the window is shorter than `bins` ps."""
    bins = max(1, min(int(bins), end_ps - start_ps))
    return np.unique(np.linspace(start_ps, end_ps, bins + 1).round().astype(np.int64))


def _fractions(busy, edges):
    widths = np.diff(edges)
    covered = intervals.covered_ps(busy, edges[:-1], edges[1:])
    return np.where(widths > 0, covered / np.maximum(widths, 1), 0.0)


def gpu_timeline(model, bins=DEFAULT_BINS):
    """Timeline of every GPU over the analysis window (the steps, else the span of GPU activity)."""
    step_set = find_steps(model)
    window = analysis_window(model, step_set)
    if len(window) == 0:
        no_edges, empty = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        return Timeline(0, 0, no_edges, tuple(DeviceTimeline(g.ordinal, g.name, no_edges, empty)
                                              for g in model.gpus), empty, ())
    start_ps, end_ps = int(window.start_ps[0]), int(window.end_ps[-1])
    edges = _bin_edges(start_ps, end_ps, bins)
    devices = []
    for gpu in model.gpus:
        own = step_set.device_windows(gpu.ordinal) if step_set.source == "device" else window
        own_edges = edges if own is window or len(own) == 0 else \
            _bin_edges(int(own.start_ps[0]), int(own.end_ps[-1]), bins)
        devices.append(DeviceTimeline(gpu.ordinal, gpu.name, own_edges,
                                      _fractions(busy_intervals(gpu.activity), own_edges)))
    steps = tuple((s.start_ps, s.end_ps) for s in step_set.steps)
    return Timeline(start_ps, end_ps, edges, tuple(devices),
                    _fractions(model.host_activity.input_waits, edges), steps)
