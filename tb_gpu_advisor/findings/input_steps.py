"""The steps as the input what-ifs read them: each step's time and its tf.data/DataLoader input wait."""

from tb_gpu_advisor.analysis.rounding import ms as ms6
from tb_gpu_advisor.whatif.input import InputStep


def input_steps(ctx):
    """whatif.input.InputStep per step (the whole window as one step in a profile without step markers)."""
    steps = ctx.step_set.timed_steps
    if not steps:
        return (InputStep(ctx.window_ms, ctx.pipeline_wait_ms),)
    return tuple(
        InputStep(ms6(step.duration_ps), ctx.analysis.step_pipeline_wait_ms(index)) for index, step in enumerate(steps)
    )
