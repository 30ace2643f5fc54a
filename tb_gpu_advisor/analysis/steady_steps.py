"""The marked steps that are not steady, complete steps: a first or last step the capture cut (no GPU work in it
while GPUs work in the others, and shorter than the others' median) and a warm-up first step (it compiles, no later step does, and it takes much longer
than the rest). Every per-step number is measured over the other steps (analysis.steps)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tb_gpu_advisor.model import intervals

if TYPE_CHECKING:
    from tb_gpu_advisor.model.trace import StepMarker, TraceModel

CUT = "cut"
WARM_UP = "warm-up"
WARMUP_FACTOR = 2.0  # a first step this many times the median of the others is warm-up
WARMUP_MIN_STEPS = 3  # steps a warm-up first step is told from: itself and at least two others


@dataclass(frozen=True)
class LeftOutStep:
    """A marked step left out of the step statistics, as timed (on the devices where it launched work)."""

    step: StepMarker
    reason: str  # CUT or WARM_UP


def complete_steps(model: TraceModel, steps: tuple) -> tuple:
    """(complete step count, cut steps): with GPU work in the trace, a first or last step without any is the
    stub the capture cut (Kineto's last ProfilerStep when the profiler stops inside it)."""
    active = [gpu.activity for gpu in model.gpus if len(gpu.activity)]
    if not steps or not active:
        return len(steps), ()
    ends = (steps[0], steps[-1]) if len(steps) > 1 else (steps[0],)
    cut = tuple(
        step
        for step in ends
        if not any(bool(((a.start_ps < step.end_ps) & (a.end_ps > step.start_ps)).any()) for a in active)
    )
    return len(steps) - len(cut), cut


def warmup_first(model: TraceModel, markers: list, timed: list) -> int | None:
    """Index 0 when the first step is warm-up: it compiles (host `compile` spans inside its marker), no later step
    does (a compile that recurs is recompilation, not warm-up), and it takes over WARMUP_FACTOR times the median
    of the others as timed; else None."""
    if len(timed) < WARMUP_MIN_STEPS:
        return None
    spans = model.host_activity.tagged.get("compile")
    if spans is None or not len(spans):
        return None
    compiled = intervals.covered_ps(spans, [s.start_ps for s in markers], [s.end_ps for s in markers])
    rest = np.array([s.duration_ps for s in timed[1:]], dtype=np.float64)
    if compiled[0] > 0 and not compiled[1:].any() and timed[0].duration_ps > WARMUP_FACTOR * np.median(rest):
        return 0
    return None


def left_out_steps(model: TraceModel, markers: tuple, timed: tuple) -> tuple:
    """LeftOutStep per marked step that is cut or warm-up, in step order; `timed`: the markers as timed. Nothing is
    left out when no step would remain."""
    _, cut = complete_steps(model, markers)
    # A stub is also short: a full-length step without GPU work is a hole in the capture (analysis.confidence).
    lengths = [step.duration_ps for step in timed]
    cut_ids = {
        id(step)
        for step in cut
        if step.duration_ps < float(np.median([d for d, m in zip(lengths, markers) if m is not step] or [0]))
    }
    reasons = {index: CUT for index, step in enumerate(markers) if id(step) in cut_ids}
    kept = [index for index in range(len(markers)) if index not in reasons]
    if kept and warmup_first(model, [markers[i] for i in kept], [timed[i] for i in kept]) == 0:
        reasons[kept[0]] = WARM_UP
    if len(reasons) >= len(markers):
        return ()
    return tuple(LeftOutStep(timed[index], reason) for index, reason in sorted(reasons.items()))
