"""The steps as the input what-ifs read them: each step's time and its tf.data/DataLoader input wait."""

from __future__ import annotations

from tb_gpu_advisor.analysis.rounding import ms as ms6
from tb_gpu_advisor.whatif.input import InputStep

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.findings.context import Context


def input_steps(ctx: Context) -> tuple:
    """whatif.input.InputStep per step (the whole window as one step in a profile without step markers)."""
    steps = ctx.step_set.timed_steps
    if not steps:
        return (InputStep(ctx.window_ms, ctx.pipeline_wait_ms),)
    return tuple(
        InputStep(ms6(step.duration_ps), ctx.analysis.step_pipeline_wait_ms(index)) for index, step in enumerate(steps)
    )
