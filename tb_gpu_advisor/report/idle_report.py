"""The `idle_attribution` section of the HostReport: each GPU's idle time by cause (analysis.idle_attribution),
over its step windows on that GPU (analysis.device_steps; the analysis window without steps) and per step."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.analysis.idle_attribution import IDLE_CAUSES
from tb_gpu_advisor.analysis.rounding import ms, pct
from tb_gpu_advisor.model import intervals

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.analysis.host_analysis import HostAnalysis
    from tb_gpu_advisor.analysis.idle_attribution import GpuIdle
    from tb_gpu_advisor.analysis.steps import StepSet


def gpu_steps(step_set: StepSet, ordinal: int) -> tuple:
    """((name, start ps, end ps), ...) of each step on one GPU: its own window there (analysis.device_steps) when
    the steps are placed on the devices, its own Steps markers in pre-grouped traces (each GPU's step is its own,
    not another GPU's window), else the timed step window."""
    own = step_set.device_steps.get(ordinal)
    if own is not None:
        return tuple((step_set.steps[step.index].name, step.start_ps, step.end_ps) for step in own.steps)
    markers = step_set.device_markers.get(ordinal)
    if step_set.source == "device" and markers:
        names = {step.group_id: step.name for step in step_set.steps}
        return tuple((names.get(group, str(group)), start, end) for group, start, end in sorted(markers, key=_start))
    return tuple((step.name, step.start_ps, step.end_ps) for step in step_set.timed_steps)


def _start(marker):
    return marker[1]


def gpu_windows(analysis, ordinal):
    """(starts, ends) a GPU's idle time is measured in: its step windows, else the analysis window."""
    if not analysis.step_set.steps:
        return analysis.window.start_ps, analysis.window.end_ps
    if analysis.step_set.source == "device":
        windows = analysis.step_set.device_windows(ordinal)
        return windows.start_ps, windows.end_ps
    steps = gpu_steps(analysis.step_set, ordinal)
    windows = intervals.union([s[1] for s in steps], [s[2] for s in steps])
    return windows.start_ps, windows.end_ps


def cause_totals_ps(analysis: HostAnalysis, gpu_idle: GpuIdle) -> tuple[int, dict[str, int]]:
    """(window ps, {cause: idle ps}) of one GpuIdle over its GPU's windows."""
    starts, ends = gpu_windows(analysis, gpu_idle.ordinal)
    window = int((np.asarray(ends) - np.asarray(starts)).sum())
    return window, {cause: int(ps.sum()) for cause, ps in gpu_idle.cause_ps(starts, ends).items()}


def idle_attribution_dict(analysis):
    """{causes, gpus: [{device, ordinal, window_ms, idle_ms, idle_pct, cause_ms, cause_pct, gaps, device_wait_ms,
    steps}]}, `steps` leaving out, beside other GPUs, a step the GPU idles through (it ran nothing in it);
    None without an attribution (no GPU activity)."""
    if analysis.idle is None or not analysis.idle.gpus:
        return None
    gpus = []
    several = len(analysis.idle.gpus) > 1
    for gpu in analysis.idle.gpus:
        starts, ends = gpu_windows(analysis, gpu.ordinal)
        window, totals = cause_totals_ps(analysis, gpu)
        idle = sum(totals.values())
        steps = gpu_steps(analysis.step_set, gpu.ordinal) if analysis.step_set.steps else ()
        per_step = gpu.cause_ps([s[1] for s in steps], [s[2] for s in steps]) if steps else {}
        gpus.append(
            {
                "device": gpu.name,
                "ordinal": gpu.ordinal,
                "window_ms": ms(window),
                "idle_ms": ms(idle),
                "idle_pct": pct(100.0 * idle / window) if window else None,
                "cause_ms": {cause: ms(totals[cause]) for cause in IDLE_CAUSES},
                "cause_pct": {cause: pct(100.0 * totals[cause] / window) if window else None for cause in IDLE_CAUSES},
                "gaps": gpu.gap_count,
                "device_wait_ms": {
                    kind: ms(int(intervals.covered_ps(spans, starts, ends).sum()))
                    for kind, spans in (gpu.device_wait_work or {}).items()
                },
                "steps": [
                    {
                        "step": name,
                        "idle_ms": ms(int(sum(per_step[c][i] for c in IDLE_CAUSES))),
                        "cause_ms": {cause: ms(int(per_step[cause][i])) for cause in IDLE_CAUSES},
                    }
                    for i, (name, start, end) in enumerate(steps)
                    # beside other GPUs, one idle for the whole step took no part in it: no cause held it back
                    if not several or sum(per_step[c][i] for c in IDLE_CAUSES) < end - start
                ],
            }
        )
    return {"causes": list(IDLE_CAUSES), "gpus": gpus}
