"""Placement findings: compute ops that ran with CPU kernels in a GPU run."""

import re

from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Entry, register
from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import Evidence, Finding, grade, limit
from tb_gpu_advisor.findings.host_time import host_critical_ms, op_rows
from tb_gpu_advisor.findings.thresholds import HOST_HIGH_PCT, HOST_MEDIUM_PCT, MODELED_LOW_PCT

ENTRIES = register("placement", {
    "placement.ops_on_host": Entry(
        category="placement",
        title="Compute ops run on the CPU in a GPU run",
        fix_summary="Find CPU-placed ops with tf.debugging.set_log_device_placement(True) and move them.",
        fix="""\
These compute ops ran with CPU kernels although a GPU is in use: an op without a GPU kernel, an int32/
int64 or string input, or an explicit tf.device("/cpu:0"). Find them:

    tf.debugging.set_log_device_placement(True)
    tf.config.set_soft_device_placement(False)   # fail instead of silently falling back to the CPU

then use GPU-supported dtypes (float32/float16 rather than int64/float64), move the op out of a
`with tf.device("/cpu:0")` block, or move preprocessing ops into tf.data where CPU is intended.
JAX: check jax.devices() and that arrays live on the GPU (x.devices()); install the CUDA jaxlib.""",
        docs=(L.TF_GPU_GUIDE,),
    ),
})


# CPU-only kernels (oneDNN/MKL) and compute-heavy op types: on the host in a GPU run they ran on the CPU.
_CPU_KERNEL_TYPE = re.compile(r"^_Mkl|^_MklNative")


_COMPUTE_TYPES = {"MatMul", "BatchMatMulV2", "BatchMatMulV3", "Conv2D", "Conv2DBackpropInput",
                  "Conv2DBackpropFilter", "Conv3D", "_FusedMatMul", "_FusedConv2D", "FusedBatchNormV3", "Einsum"}


def ops_on_host(ctx):
    """Compute ops with CPU kernels in a run that has a GPU."""
    if not ctx.has_gpu:
        return None
    device_ops = {name for gpu in ctx.active_gpus for name in gpu.activity.op_names}

    def on_cpu(name):
        op_name, sep, op_type = name.rpartition(":")
        if not sep or not op_name or " " in op_type:
            return False
        return bool(_CPU_KERNEL_TYPE.match(op_type)) or (
            bool(device_ops) and op_type in _COMPUTE_TYPES and op_name not in device_ops)

    ops = ctx.host_ops(on_cpu)
    if not ops:
        return None
    total_ms = ms(sum(t for _, _, t in ops))
    recoverable = min(total_ms, host_critical_ms(ctx))
    share = ctx.share_pct(recoverable)
    severity = grade(share, HOST_HIGH_PCT, HOST_MEDIUM_PCT, MODELED_LOW_PCT) or "low"
    return Finding(
        id="placement.ops_on_host", severity=severity,
        summary=f"{len(ops)} compute op(s) ran with CPU kernels in a GPU run ({total_ms:.2f} ms), "
                f"e.g. {ops[0][0]}.",
        evidence=Evidence({"cpu_ops": len(ops), "cpu_op_ms": total_ms, "recoverable_pct": share},
                          limit("cpu_ops", len(ops), 0), {"host_ops": op_rows(ops)}),
        recoverable_ms=recoverable, window_ms=ctx.window_ms,
        speedup_basis="upper bound: the CPU op time on the critical path (GPU idle) removed")


RULES = (ops_on_host,)
