"""Precision findings: FP32 matrix multiplies on GPUs with Tensor Cores."""

from tb_gpu_advisor.analysis.kernel_names import is_fp32_matmul, is_low_precision
from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Entry, register
from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import limit
from tb_gpu_advisor.findings.modeled import busiest_gpu, modeled_finding, top_kernel_names
from tb_gpu_advisor.findings.thresholds import (FP32_MATMUL_MIN_SHARE_PCT, LOW_PRECISION_MAX_SHARE_PCT,
                                                MIXED_PRECISION_GAIN, TENSOR_CORE_MIN_CC)

ENTRIES = register("precision", {
    "precision.fp32_matmul": Entry(
        category="precision",
        title="Matrix math runs in 32-bit on a Tensor Core GPU",
        fix_summary="Enable mixed precision: tf.keras.mixed_precision.set_global_policy('mixed_float16').",
        fix="""\
Matrix multiplies and convolutions run as 32-bit kernels that do not use Tensor Cores. Compute in 16 bits
and keep variables in 32 bits:

    tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")  # Ampere (cc 8.0) and newer
    tf.keras.mixed_precision.set_global_policy("mixed_float16")   # Volta/Turing (cc 7.x)
    # keep the final softmax/logits in float32: layers.Activation("softmax", dtype="float32")
    # custom loops with float16: optimizer = tf.keras.mixed_precision.LossScaleOptimizer(optimizer)

Keep layer sizes (units, channels, batch) multiples of 8 so Tensor Cores apply. JAX: cast parameters and
inputs to jnp.bfloat16 (params = jax.tree.map(lambda p: p.astype(jnp.bfloat16), params)), or at least
allow TF32 with jax.config.update("jax_default_matmul_precision", "tensorfloat32").""",
        docs=(L.TF_MIXED_PRECISION, L.NVIDIA_MIXED_PRECISION, L.JAX_MATMUL_PRECISION),
    ),
})


def fp32_matmul(ctx):
    """32-bit matrix math without Tensor Cores on a GPU that has them."""
    cc = ctx.compute_capability
    if not ctx.has_gpu or cc is None or cc < TENSOR_CORE_MIN_CC:
        return None
    eligible = {k["name"] for k in ctx.report["kernels"]
                if k["tensor_core_eligible"] and not k["uses_tensor_cores"]}

    def is_target(name):
        return is_fp32_matmul(name) or (name in eligible and not is_low_precision(name))

    ordinal, fp32_ps = busiest_gpu(ctx.kernel_ps_by_gpu(is_target))
    if fp32_ps <= 0:
        return None
    kernel_ps = ctx.kernel_ps_all[ordinal]
    share = round(100.0 * fp32_ps / kernel_ps, 2)
    if share < FP32_MATMUL_MIN_SHARE_PCT:
        return None
    breakdown = ctx.summary["breakdown_pct"]
    compute = (breakdown["compute_16bit"] or 0.0) + (breakdown["compute_32bit"] or 0.0)
    low_share = round(100.0 * (breakdown["compute_16bit"] or 0.0) / compute, 2) if compute else None
    fp32_ms = ms(fp32_ps)
    return modeled_finding(
        ctx, "precision.fp32_matmul",
        f"32-bit matmul/conv kernels without Tensor Cores take {share:.1f}% of GPU kernel time "
        f"on a compute capability {cc[0]}.{cc[1]} GPU.",
        fp32_ms * (1.0 - 1.0 / MIXED_PRECISION_GAIN),
        f"estimate: those kernels {MIXED_PRECISION_GAIN:g}x faster in 16 bits, nothing else changing",
        {"fp32_matmul_ms": fp32_ms, "fp32_matmul_share_of_kernel_time_pct": share,
         "compute_16bit_share_pct": low_share, "compute_capability": f"{cc[0]}.{cc[1]}"},
        limit("fp32_matmul_share_of_kernel_time_pct", share, FP32_MATMUL_MIN_SHARE_PCT,
              xprof_16bit_share_below_pct=LOW_PRECISION_MAX_SHARE_PCT),
        {"kernels": top_kernel_names(ctx, is_target)})


RULES = (fp32_matmul,)
