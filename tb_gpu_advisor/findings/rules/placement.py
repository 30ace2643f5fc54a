"""Placement findings: compute ops that ran with CPU kernels in a GPU run."""

from __future__ import annotations

from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Entry, register
from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import Evidence, Finding, grade, limit
from tb_gpu_advisor.findings.host_time import HOST_OPS_LISTED, host_critical_ms
from tb_gpu_advisor.findings.thresholds import HOST_HIGH_PCT, HOST_MEDIUM_PCT, MODELED_LOW_PCT

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.findings.context import Context


ENTRIES = register(
    "placement",
    {
        "placement.ops_on_host": Entry(
            category="placement",
            title="Compute ops run on the CPU in a GPU run",
            fix_summary="Find CPU-placed ops with tf.debugging.set_log_device_placement(True) and move them.",
            fix="""\
These compute ops ran on a host thread and launched no GPU kernel, although a GPU is in use. TensorFlow puts
an op on the CPU when it has no GPU kernel for the op and dtype (int64/float64 inputs, string ops), when a
`with tf.device("/cpu:0")` block asks for it, or when its inputs live in host memory; with soft device
placement (on by default) it does so silently instead of failing. The copies around such an op are the
price: its inputs come back from the GPU and its result goes out again. Find them:

    tf.debugging.set_log_device_placement(True)   # logs "Executing op MatMul in device .../CPU:0"
    tf.config.set_soft_device_placement(False)    # raise instead of falling back to the CPU

then use GPU-supported dtypes (float32/float16/bfloat16 rather than float64/int64), move the op out of a
`with tf.device("/cpu:0")` block, or, if CPU is intended, do that work in the tf.data pipeline.""",
            docs=(L.TF_GPU_GUIDE,),
        ),
    },
)


def ops_on_host(ctx: Context) -> Finding | None:
    """Compute ops of the step (MatMul, Conv, reductions, `_Mkl*`) whose host runs launched no GPU work
    (analysis.placement), in a run whose GPUs work; at least 1% of the window."""
    ops = ctx.analysis.cpu_ops
    if not ctx.has_gpu or not ops or ctx.framework.is_jax:
        return None
    total_ms = ms(sum(op.total_ps for op in ops))
    if ctx.share_pct(total_ms) < MODELED_LOW_PCT:
        return None
    recoverable = min(total_ms, host_critical_ms(ctx))
    share = ctx.share_pct(recoverable)
    severity = grade(share, HOST_HIGH_PCT, HOST_MEDIUM_PCT, MODELED_LOW_PCT) or "low"
    top = ops[0]
    copies = sum(op.copies for op in ops)
    copy_bytes = sum(op.copy_bytes for op in ops)
    around = (
        f"; the device copies around them: {top.d2h_before} device-to-host just before and "
        f"{top.h2d_after} host-to-device just after"
        if top.copies
        else ""
    )
    note = (
        f"Largest: {top.name} ({top.op_type}), {ctx.time_text(ms(top.total_ps))}, {top.unlaunched_runs} of "
        f"{top.runs} runs without a GPU launch{around}."
    )
    rows = [
        {
            "name": op.name,
            "count": op.runs,
            "total_ms": ms(op.total_ps),
            "runs_without_launch": op.unlaunched_runs,
            "copies_around": op.copies,
        }
        for op in ops[:HOST_OPS_LISTED]
    ]
    return Finding(
        id="placement.ops_on_host",
        severity=severity,
        summary=f"{len(ops)} compute op(s) ran on the CPU in a GPU run, launching no GPU kernel "
        f"({ctx.time_text(total_ms)}), e.g. {top.name}.",
        evidence=Evidence(
            {
                "cpu_ops": len(ops),
                "cpu_op_ms": total_ms,
                "copies_around": copies,
                "copy_bytes_around": copy_bytes,
                "recoverable_pct": share,
            },
            limit("cpu_ops", len(ops), 0),
            {"host_ops": rows},
        ),
        recoverable_ms=recoverable,
        window_ms=ctx.window_ms,
        fix_note=note,
        speedup_basis="upper bound: the CPU op time on the critical path (GPU idle) removed",
    )


RULES = (ops_on_host,)
