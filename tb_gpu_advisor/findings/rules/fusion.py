"""Fusion findings: many small element-wise kernels that XLA would fuse."""

from tb_gpu_advisor.analysis.kernel_names import is_elementwise, is_xla_kernel
from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Entry, register
from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import limit
from tb_gpu_advisor.findings.modeled import busiest_gpu, modeled_finding, top_kernel_names
from tb_gpu_advisor.findings.thresholds import FUSION_MIN_KERNELS_PER_STEP, FUSION_MIN_SHARE_PCT, FUSION_SAVED_FRACTION

ENTRIES = register("fusion", {
    "fusion.elementwise_kernels": Entry(
        category="fusion",
        title="Many small element-wise kernels that XLA could fuse",
        fix_summary="Compile the step with XLA: @tf.function(jit_compile=True) (JAX: jax.jit the whole step).",
        fix="""\
Most GPU kernels are separate element-wise operations (casts, adds, activations, dropout), each reading
and writing memory and costing a launch. XLA fuses chains of them into a few kernels:

    @tf.function(jit_compile=True)
    def train_step(x, y): ...
    # Keras: model.compile(..., jit_compile=True)
    # or for the whole program: TF_XLA_FLAGS=--tf_xla_auto_jit=2 python train.py

Check the next profile: kernel names become fusion_* / loop_* and their count per step drops. JAX: wrap
the whole training step in jax.jit (not just the model call), so the optimizer update is fused too.""",
        docs=(L.TF_XLA, L.JAX_JIT),
    ),
})


def elementwise_kernels(ctx):
    """Many element-wise kernels, a large share of kernel time, and no sign of XLA."""
    if not ctx.has_gpu or "jax_version" in ctx.model.environment:
        return None
    if any(is_xla_kernel(name) for gpu in ctx.active_gpus for name in gpu.activity.names):
        return None
    ordinal, elementwise_ps = busiest_gpu(ctx.kernel_ps_by_gpu(is_elementwise))
    if elementwise_ps <= 0:
        return None
    gpu = next(g for g in ctx.active_gpus if g.ordinal == ordinal)
    count = ctx.kernel_count_in_windows(gpu, ctx.kernel_mask(gpu, is_elementwise))
    per_step = count / ctx.step_count if ctx.step_count else float(count)
    kernel_ps = ctx.kernel_ps_all[ordinal]
    share = round(100.0 * elementwise_ps / kernel_ps, 2)
    if per_step < FUSION_MIN_KERNELS_PER_STEP or share < FUSION_MIN_SHARE_PCT:
        return None
    elementwise_ms = ms(elementwise_ps)
    return modeled_finding(
        ctx, "fusion.elementwise_kernels",
        f"{ctx.count_text(count, 'element-wise kernels')} take {share:.1f}% of GPU kernel time "
        f"({elementwise_ms:.2f} ms on {gpu.name}); XLA is not in use.",
        elementwise_ms * FUSION_SAVED_FRACTION,
        f"estimate: fusion removes {FUSION_SAVED_FRACTION:.0%} of the element-wise kernel time",
        {"elementwise_kernels_per_step": round(per_step, 1), "elementwise_ms": elementwise_ms,
         "elementwise_share_of_kernel_time_pct": share,
         "elementwise_kernel_mean_us": round(elementwise_ms * 1000.0 / count, 3) if count else None},
        limit("elementwise_kernels_per_step", round(per_step, 1), FUSION_MIN_KERNELS_PER_STEP,
              share_of_kernel_time_pct_above=FUSION_MIN_SHARE_PCT),
        {"kernels": top_kernel_names(ctx, is_elementwise), "device": gpu.name})


RULES = (elementwise_kernels,)
