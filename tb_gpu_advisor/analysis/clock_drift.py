"""Kernels that slow down over the capture: the same kernels, with the same launch configurations, taking longer
step after step, which is what a GPU lowering its clock (a power or thermal limit) looks like in a trace."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.model.trace import ActivityKind

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.model.trace import GpuDevice

# A slowdown from the first steps to the last of at least this ratio, across the kernels that hold most of the
# time: more than the step-to-step spread of the same kernels on a steady clock (a few %).
DRIFT_MIN_RATIO = 1.15
# At least this share of consecutive steps must be no faster than the step before (within NOISE): a steady rise.
RISING_MIN_SHARE = 0.75
NOISE = 0.01
MIN_STEPS = 4


@dataclass(frozen=True)
class ClockDrift:
    """One GPU whose same kernels ran slower step after step: kernel time per step at the start and at the end
    (ms), the kernels per step and the steps compared."""

    gpu: str
    first_ms: float
    last_ms: float
    kernels_per_step: int
    steps: int
    vendor: str = ""

    def note(self) -> str:
        """The report's note on the slowdown, with how to check it."""
        tool = "rocm-smi --showclocks" if self.vendor == "AMD" else "nvidia-smi -q -d CLOCK,PERFORMANCE"
        return (
            f"The same kernels with the same launch configurations ({self.kernels_per_step:,} per step) take "
            f"{100.0 * (self.ratio - 1.0):.0f}% longer at the end of the capture than at its start on {self.gpu} "
            f"({self.first_ms:.2f} -> {self.last_ms:.2f} ms of kernel time per step), rising step by step: the GPU "
            "likely lowered its clock during the capture (a power or thermal limit), so the later steps run slower "
            f"than its steady pace. Watch its clocks while the job runs ({tool}: clocks and throttle reasons)."
        )

    @property
    def ratio(self) -> float:
        return self.last_ms / self.first_ms


def clock_drift(gpus: tuple[GpuDevice, ...], windows: list[tuple[int, int]]) -> ClockDrift | None:
    """The GPU whose kernels slowed most over `windows` (the timed steps, (start ps, end ps)), where every step ran
    the same kernels with the same launch configurations, their time rose steadily, and the kernels that hold
    most of the time each slowed (a device-wide slowdown, not one kernel's data); None otherwise."""
    if len(windows) < MIN_STEPS:
        return None
    found = None
    for gpu in gpus:
        drift = _gpu_drift(gpu, windows)
        if drift is not None and (found is None or drift.ratio > found.ratio):
            found = drift
    return found


def _gpu_drift(gpu, windows):
    activity = gpu.activity
    kernels = np.flatnonzero((activity.kind == ActivityKind.KERNEL) & (activity.config_id >= 0))
    if not len(kernels):
        return None
    starts = activity.start_ps[kernels]
    keys = (
        activity.name_id[kernels].astype(np.int64) * (int(activity.config_id[kernels].max()) + 1)
        + (activity.config_id[kernels])
    )
    per_step = []
    for start, end in windows:
        inside = (starts >= start) & (starts < end)
        step_keys, inverse = np.unique(keys[inside], return_inverse=True)
        counts = np.bincount(inverse, minlength=len(step_keys))
        times = np.bincount(inverse, weights=activity.duration_ps[kernels][inside], minlength=len(step_keys))
        per_step.append((step_keys, counts, times))
    first_keys, first_counts, _ = per_step[0]
    if not len(first_keys) or any(
        not (np.array_equal(k, first_keys) and np.array_equal(c, first_counts)) for k, c, _ in per_step
    ):
        return None  # the steps ran different kernels: their times are not the same work
    totals = np.array([times.sum() for _, _, times in per_step])
    quarter = max(1, len(totals) // 4)
    early, late = totals[:quarter].mean(), totals[-quarter:].mean()
    if early <= 0 or late / early < DRIFT_MIN_RATIO:
        return None
    rising = np.mean(totals[1:] >= totals[:-1] * (1.0 - NOISE))
    halfway = early * (1.0 + (DRIFT_MIN_RATIO - 1.0) / 2)
    if rising < RISING_MIN_SHARE or np.sum(totals >= halfway) < max(2, quarter):
        return None  # one slow step at the end is an outlier, not a slower pace
    early_rows = np.mean([times for _, _, times in per_step[:quarter]], axis=0)
    late_rows = np.mean([times for _, _, times in per_step[-quarter:]], axis=0)
    heavy = np.argsort(-early_rows)
    heavy = heavy[np.cumsum(early_rows[heavy]) <= 0.8 * early_rows.sum() + early_rows[heavy][0]]
    slowed = late_rows[heavy] >= early_rows[heavy] * (1.0 + (DRIFT_MIN_RATIO - 1.0) / 2)
    if np.average(slowed, weights=early_rows[heavy]) < 0.5:
        return None  # a few kernels changed, not the device's pace
    vendor = (gpu.capabilities.vendor or "").upper()
    return ClockDrift(gpu.name, float(early / 1e9), float(late / 1e9), int(first_counts.sum()), len(totals), vendor)
