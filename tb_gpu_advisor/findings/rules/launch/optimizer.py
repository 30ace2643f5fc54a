"""An optimizer updating parameters one tensor at a time (launch.per_tensor_optimizer)."""

from __future__ import annotations

from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import Evidence, Finding, grade, limit
from tb_gpu_advisor.findings.thresholds import (
    LAUNCH_HIGH_PCT,
    LAUNCH_MEDIUM_PCT,
    MODELED_LOW_PCT,
    OPTIMIZER_LOOP_MIN_KERNELS,
    OPTIMIZER_LOOP_MIN_SHARE,
)

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.findings.context import Context


def per_tensor_optimizer(ctx: Context) -> Finding | None:
    """PyTorch optimizer steps that launch many kernels, nearly all from per-parameter element-wise ops, with no
    foreach/fused implementation in the trace. Bound: the optimizer's host time shrinks to its kernels' device
    time (one fused launch per group does the same memory traffic)."""
    loop = ctx.analysis.optimizer_loop
    if (
        ctx.framework.name != "pytorch"
        or loop is None
        or loop.fused_seen
        or loop.kernels_per_step < OPTIMIZER_LOOP_MIN_KERNELS
        or loop.per_tensor_share < OPTIMIZER_LOOP_MIN_SHARE
    ):
        return None
    recoverable = max(0.0, (loop.host_ps - loop.device_ps) / 1e9)
    share = ctx.share_pct(recoverable)
    severity = grade(share, LAUNCH_HIGH_PCT, LAUNCH_MEDIUM_PCT, MODELED_LOW_PCT)
    if severity is None:
        return None
    per_step = round(loop.kernels_per_step)
    return Finding(
        id="launch.per_tensor_optimizer",
        severity=severity,
        summary=(
            f"Each optimizer step launches {per_step} kernels, {100 * loop.per_tensor_share:.0f}% of them from "
            f"per-parameter element-wise ops (add_, mul_, addcmul_...); the step's optimizer takes "
            f"{ms(loop.host_ps) / loop.steps:.2f} ms on the host for {ms(loop.device_ps) / loop.steps:.2f} ms "
            "of GPU work."
        ),
        evidence=Evidence(
            {
                "kernels_per_optimizer_step": per_step,
                "per_tensor_share_pct": round(100 * loop.per_tensor_share, 1),
                "optimizer_host_ms_per_step": round(ms(loop.host_ps) / loop.steps, 3),
                "optimizer_gpu_ms_per_step": round(ms(loop.device_ps) / loop.steps, 3),
                "recoverable_pct": share,
            },
            limit(
                "kernels_per_optimizer_step",
                per_step,
                OPTIMIZER_LOOP_MIN_KERNELS,
                per_tensor_share_at_least=OPTIMIZER_LOOP_MIN_SHARE,
            ),
            {"ops": ["Optimizer.step"]},
        ),
        recoverable_ms=recoverable,
        window_ms=ctx.window_ms,
        speedup_basis=(
            "upper bound: the optimizer's host time falls to its kernels' GPU time (a fused or foreach "
            "optimizer does the same memory traffic in a few launches)"
        ),
        fix_note=_optimizer_note(loop.optimizer_class),
    )


# torch.optim classes with a fused=True implementation (PyTorch 2.x); the others have foreach=True.
FUSED_OPTIMIZERS = frozenset({"Adam", "AdamW", "SGD", "Adagrad"})
FOREACH_OPTIMIZERS = frozenset({"Adadelta", "Adamax", "ASGD", "NAdam", "RAdam", "RMSprop", "Rprop"})


def _optimizer_note(cls):
    """The fix line for the optimizer class the trace names (`Optimizer.step#<Class>.step`); "" when unknown."""
    if cls in FUSED_OPTIMIZERS:
        return (
            f"The trace's optimizer is torch.optim.{cls} (Optimizer.step#{cls}.step): keep it and construct it "
            f"with fused=True: torch.optim.{cls}(model.parameters(), ..., fused=True) (or foreach=True)."
        )
    if cls in FOREACH_OPTIMIZERS:
        return (
            f"The trace's optimizer is torch.optim.{cls} (Optimizer.step#{cls}.step), which has no fused "
            f"implementation: construct it with foreach=True: torch.optim.{cls}(model.parameters(), ..., "
            "foreach=True)."
        )
    if cls:
        return (
            f"The trace's optimizer is {cls} (Optimizer.step#{cls}.step), not a torch.optim class with a fused "
            "form: write its update with torch._foreach_* ops, or use the fused torch.optim class with the same math."
        )
    return ""
