"""The `idle_attribution` section of the HostReport: each GPU's idle time by cause (analysis.idle_attribution),
over its analysis windows and per step."""

import numpy as np

from tb_gpu_advisor.analysis.idle_attribution import IDLE_CAUSES
from tb_gpu_advisor.analysis.rounding import ms, pct


def gpu_windows(analysis, ordinal):
    """(starts, ends) a GPU's idle time is measured in: its step windows, else the analysis window."""
    windows = analysis.step_set.device_windows(ordinal) if analysis.step_set.steps else analysis.window
    return windows.start_ps, windows.end_ps


def cause_totals_ps(analysis, gpu_idle):
    """(window ps, {cause: idle ps}) of one GpuIdle over its GPU's windows."""
    starts, ends = gpu_windows(analysis, gpu_idle.ordinal)
    window = int((np.asarray(ends) - np.asarray(starts)).sum())
    return window, {cause: int(ps.sum()) for cause, ps in gpu_idle.cause_ps(starts, ends).items()}


def idle_attribution_dict(analysis):
    """{causes, gpus: [{device, ordinal, window_ms, idle_ms, idle_pct, cause_ms, cause_pct, gaps, steps}]};
    None without an attribution (no GPU activity)."""
    if analysis.idle is None or not analysis.idle.gpus:
        return None
    steps = analysis.step_set.steps
    starts = np.array([s.start_ps for s in steps], dtype=np.int64)
    ends = np.array([s.end_ps for s in steps], dtype=np.int64)
    gpus = []
    for gpu in analysis.idle.gpus:
        window, totals = cause_totals_ps(analysis, gpu)
        idle = sum(totals.values())
        per_step = gpu.cause_ps(starts, ends) if len(steps) else {}
        gpus.append({
            "device": gpu.name, "ordinal": gpu.ordinal, "window_ms": ms(window), "idle_ms": ms(idle),
            "idle_pct": pct(100.0 * idle / window) if window else None,
            "cause_ms": {cause: ms(totals[cause]) for cause in IDLE_CAUSES},
            "cause_pct": {cause: pct(100.0 * totals[cause] / window) if window else None for cause in IDLE_CAUSES},
            "gaps": gpu.gap_count,
            "steps": [{"step": step.name, "idle_ms": ms(int(sum(per_step[c][i] for c in IDLE_CAUSES))),
                       "cause_ms": {cause: ms(int(per_step[cause][i])) for cause in IDLE_CAUSES}}
                      for i, step in enumerate(steps)],
        })
    return {"causes": list(IDLE_CAUSES), "gpus": gpus}
