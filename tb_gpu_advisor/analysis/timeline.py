"""Binned GPU activity over the analysis window: per GPU, the busy and compute fractions of each equal time bin."""

from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.analysis.feeder_waits import feeder_blocking
from tb_gpu_advisor.analysis.steps import analysis_window, find_steps
from tb_gpu_advisor.analysis.utilization import busy_intervals, compute_intervals
from tb_gpu_advisor.model import intervals

DEFAULT_BINS = 240


@dataclass(frozen=True, eq=False)
class DeviceTimeline:
    """Busy fraction (0..1) of one GPU in each of its bins, and the part of it with work other than collectives
    (`compute_fraction`; busy minus compute is the time only collectives ran).

    The bins cover the common window, except in pre-grouped traces where a GPU with its own `Steps` markers
    is binned over the span of those markers (each GPU of such a trace steps at its own time).
    """

    ordinal: int
    name: str
    bin_edges_ps: np.ndarray
    busy_fraction: np.ndarray
    compute_fraction: np.ndarray


@dataclass(frozen=True, eq=False)
class Timeline:
    """Equal bins over the common window [start_ps, end_ps); `bin_edges_ps` has one more element than bins.

    `input_wait_fraction` is the share of each common bin the host spent waiting for input: in `IteratorGetNext*`
    (or the DataLoader's `__next__`), or the step thread blocked on its loader threads (analysis.feeder_waits);
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


@dataclass(frozen=True, eq=False)
class DeviceBusy:
    """One GPU's busy intervals, those of its work other than collectives (`compute`) and the window it is binned
    over (start_ps == end_ps: nothing to bin)."""

    ordinal: int
    name: str
    start_ps: int
    end_ps: int
    busy: intervals.Intervals
    compute: intervals.Intervals


@dataclass(frozen=True, eq=False)
class TimelineSource:
    """What binning needs, computed once per model so that any bin count is cheap: the common window, each
    GPU's busy intervals and own window, the host's input waits and the step bounds."""

    start_ps: int
    end_ps: int
    devices: tuple  # DeviceBusy
    input_waits: intervals.Intervals
    step_bounds_ps: tuple


def timeline_source(model):
    """TimelineSource of a model over its analysis window (the steps, else the span of GPU activity)."""
    step_set = find_steps(model)
    window = analysis_window(model, step_set)
    steps = tuple((s.start_ps, s.end_ps) for s in step_set.steps)
    if len(window) == 0:
        return TimelineSource(
            0,
            0,
            tuple(
                DeviceBusy(g.ordinal, g.name, 0, 0, busy_intervals(g.activity), compute_intervals(g.activity))
                for g in model.gpus
            ),
            model.host_activity.input_waits,
            (),
        )
    start_ps, end_ps = int(window.start_ps[0]), int(window.end_ps[-1])
    feeders = feeder_blocking(model, step_set, window)
    waits = intervals.union_all(
        model.host_activity.input_waits, feeders.input_blocked if feeders is not None else intervals.EMPTY
    )
    devices = []
    for gpu in model.gpus:
        own = step_set.device_windows(gpu.ordinal) if step_set.source == "device" else window
        own_start, own_end = (
            (start_ps, end_ps) if own is window or len(own) == 0 else (int(own.start_ps[0]), int(own.end_ps[-1]))
        )
        devices.append(
            DeviceBusy(
                gpu.ordinal, gpu.name, own_start, own_end, busy_intervals(gpu.activity), compute_intervals(gpu.activity)
            )
        )
    return TimelineSource(start_ps, end_ps, tuple(devices), waits, steps)


def bin_timeline(source, bins=DEFAULT_BINS):
    """Timeline of a TimelineSource cut into `bins` equal bins."""
    no_edges, empty = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    if source.end_ps <= source.start_ps:
        return Timeline(
            0,
            0,
            no_edges,
            tuple(DeviceTimeline(d.ordinal, d.name, no_edges, empty, empty) for d in source.devices),
            empty,
            (),
        )
    edges = _bin_edges(source.start_ps, source.end_ps, bins)
    devices = []
    for device in source.devices:
        own_edges = (
            edges
            if (device.start_ps, device.end_ps) == (source.start_ps, source.end_ps)
            else _bin_edges(device.start_ps, device.end_ps, bins)
        )
        busy = _fractions(device.busy, own_edges)
        compute = np.minimum(_fractions(device.compute, own_edges), busy)
        devices.append(DeviceTimeline(device.ordinal, device.name, own_edges, busy, compute))
    return Timeline(
        source.start_ps,
        source.end_ps,
        edges,
        tuple(devices),
        _fractions(source.input_waits, edges),
        source.step_bounds_ps,
    )


def gpu_timeline(model, bins=DEFAULT_BINS):
    """Timeline of every GPU over the analysis window (the steps, else the span of GPU activity)."""
    return bin_timeline(timeline_source(model), bins)
