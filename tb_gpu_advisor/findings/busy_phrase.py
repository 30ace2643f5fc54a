"""How busy the GPUs are, in the no-bottleneck verdict's words: one GPU's busy share; over several GPUs the Time
line's compute (any GPU computing in the steps, or one GPU's, named, where the others' kernels lie outside them
in a partial capture) beside the header's busy mean over the GPUs' own windows, named as such."""

from __future__ import annotations

from tb_gpu_advisor.analysis.breakdown import COMPUTE_CATEGORIES, computing_gpus

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from tb_gpu_advisor.findings.context import Context


def busy_phrase(ctx: Context, breakdown: dict, each: str, pct: Callable[[float], str]) -> str:
    """ "the GPU is busy 96% of each step", or over several GPUs "/device:GPU:6 computes 70% of each step (the
    Time line's compute; ...)" / "at least one of the 4 GPUs computes ..."; `pct` writes a share as the verdict
    does."""
    gpus = len(ctx.analysis.active_busy_pct)
    if gpus <= 1 or ctx.analysis.gpu_busy_pct is None:
        return f"the GPU is busy {pct(ctx.analysis.gpu_busy_pct)} {each}"
    compute = pct(sum(breakdown.get(key) or 0.0 for key in COMPUTE_CATEGORIES))
    computing = computing_gpus(ctx.model, ctx.analysis.window)
    mean = f"GPU busy, the mean over the {gpus} GPUs, is {pct(ctx.analysis.gpu_busy_pct)}"
    if len(computing) == 1:
        steps = ctx.step_set.steps
        where = ("the step" if len(steps) == 1 else "these steps") if steps else "the analysis window"
        return (
            f"{computing[0]} computes {compute} {each} (the Time line's compute; the other GPUs' kernels lie "
            f"outside {where}; {mean})"
        )
    return (
        f"at least one of the {len(computing) or gpus} GPUs computes {compute} {each} (the Time line's compute; {mean})"
    )
