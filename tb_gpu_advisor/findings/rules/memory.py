"""Memory findings of PyTorch traces: optimizer.zero_grad() filling gradients with zeros."""

from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Entry, register
from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import Evidence, Finding, limit

ENTRIES = register("memory", {
    "memory.zero_grad_fills": Entry(
        category="memory",
        title="optimizer.zero_grad() writes zeros into every gradient",
        fix_summary="Call optimizer.zero_grad(set_to_none=True) (the default from PyTorch 2.0 on).",
        fix="""\
The optimizer's zero_grad runs aten::zero_ on each gradient: one memset kernel and one launch per parameter
every step, and a read-modify-write of the gradients in the next backward. Setting them to None instead
skips all of it, and backward then writes the gradients directly:

    optimizer.zero_grad(set_to_none=True)   # or model.zero_grad(set_to_none=True)

Code that reads `.grad` before backward must then handle None (e.g. `p.grad is not None`).""",
        docs=(L.TORCH_ZERO_GRAD, L.TORCH_TUNING),
    ),
})


def zero_grad_fills(ctx):
    """optimizer.zero_grad() without set_to_none: aten::zero_ on each gradient every step."""
    if ctx.framework.name != "pytorch":
        return None
    fills = ctx.host.tagged.get("zero_grad_fill")
    if fills is None or not len(fills):
        return None
    fill_ms = ms(ctx.in_window_ps(fills))
    share = ctx.share_pct(fill_ms)
    if fill_ms <= 0:
        return None
    return Finding(
        id="memory.zero_grad_fills", severity="low",
        summary=f"optimizer.zero_grad() zeroed the gradients for {ctx.time_text(fill_ms)} of host time "
                f"({share:.1f}% of the steps) instead of setting them to None.",
        evidence=Evidence({"zero_grad_fill_ms": fill_ms, "zero_grad_fill_pct": share},
                          limit("zero_grad_fill_ms", fill_ms, 0.0)),
        recoverable_ms=fill_ms, window_ms=ctx.window_ms,
        speedup_basis="upper bound: the host time of the zero fills inside zero_grad")


RULES = (zero_grad_fills,)
