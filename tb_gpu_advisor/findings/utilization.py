"""GPU utilization rules: larger batch for an underused GPU, mixed precision, XLA fusion of element-wise kernels."""

import numpy as np

from tb_gpu_advisor.analysis.kernel_names import is_elementwise, is_fp32_matmul, is_low_precision, is_xla_kernel
from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import Evidence, Finding, capped, grade, limit
from tb_gpu_advisor.findings.thresholds import (
    BATCH_GPU_BUSY_MAX_PCT, BATCH_SCALE, FP32_MATMUL_MIN_SHARE_PCT, FUSION_MIN_KERNELS_PER_STEP, FUSION_MIN_SHARE_PCT,
    FUSION_SAVED_FRACTION, INPUT_HIGH_PCT, KERNEL_HIGH_PCT, LOW_PRECISION_MAX_SHARE_PCT, MIXED_PRECISION_GAIN,
    MODELED_HIGH_PCT, MODELED_LOW_PCT, MODELED_MEDIUM_PCT, SMALL_KERNEL_MEAN_US, TENSOR_CORE_MIN_CC)
from tb_gpu_advisor.model.trace import ActivityKind


def _busiest(by_gpu):
    """(ordinal, ps) of the GPU with the most time in `by_gpu`; GPUs run in parallel, so the max is wall time."""
    return max(by_gpu.items(), key=lambda item: (item[1], -item[0])) if by_gpu else (None, 0)


def _top_kernels(ctx, predicate, limit=3):
    rows = [k for k in ctx.report["kernels"] if predicate(k["name"])]
    return [k["name"] for k in rows[:limit]]


def _modeled(ctx, finding_id, summary, recoverable_ms, basis, metrics, crossed, pointers, high=KERNEL_HIGH_PCT):
    share = ctx.share_pct(recoverable_ms)
    severity = grade(share, high, MODELED_MEDIUM_PCT, MODELED_LOW_PCT)
    if severity is None:
        return None
    return Finding(id=finding_id, severity=severity, summary=summary,
                   evidence=Evidence({**metrics, "recoverable_pct": share}, crossed, pointers),
                   recoverable_ms=recoverable_ms, window_ms=ctx.window_ms, speedup_basis=basis)


def gpu_underused(ctx):
    """GPU busy under half the step with small kernels, and not input-bound (a larger batch would not help)."""
    busy_pct = ctx.summary["gpu_busy_pct"]
    if not ctx.has_gpu or busy_pct is None or busy_pct >= BATCH_GPU_BUSY_MAX_PCT:
        return None
    if (ctx.summary["input_wait_pct"] or 0.0) >= INPUT_HIGH_PCT:
        return None
    durations = np.concatenate([g.activity.duration_ps[g.activity.kind == ActivityKind.KERNEL]
                                for g in ctx.active_gpus])
    if not len(durations):
        return None
    mean_us = round(float(durations.mean()) / 1e6, 3)
    if mean_us >= SMALL_KERNEL_MEAN_US:
        return None
    idle_ms = ctx.window_ms * (100.0 - busy_pct) / 100.0
    recoverable = idle_ms * (1.0 - 1.0 / BATCH_SCALE)
    finding = _modeled(
        ctx, "batch.gpu_underused",
        f"The GPU is busy {busy_pct:.1f}% of the step and its kernels average {mean_us:.1f} us.",
        recoverable, f"per-example estimate for a {BATCH_SCALE:g}x batch: the per-step idle time is shared by "
        "twice the examples (upper bound; step time itself grows)",
        {"gpu_busy_pct": busy_pct, "kernel_mean_us": mean_us, "gpu_idle_ms": round(idle_ms, 3)},
        limit("gpu_busy_pct", busy_pct, BATCH_GPU_BUSY_MAX_PCT, "below", kernel_mean_us_below=SMALL_KERNEL_MEAN_US),
        {"steps": [s["name"] for s in ctx.steps[:3]]}, high=MODELED_HIGH_PCT)
    return finding and capped(finding, "medium")


def fp32_matmul(ctx):
    """32-bit matrix math without Tensor Cores on a GPU that has them."""
    cc = ctx.compute_capability
    if not ctx.has_gpu or cc is None or cc < TENSOR_CORE_MIN_CC:
        return None
    eligible = {k["name"] for k in ctx.report["kernels"]
                if k["tensor_core_eligible"] and not k["uses_tensor_cores"]}

    def is_target(name):
        return is_fp32_matmul(name) or (name in eligible and not is_low_precision(name))

    ordinal, fp32_ps = _busiest(ctx.kernel_ps_by_gpu(is_target))
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
    return _modeled(
        ctx, "precision.fp32_matmul",
        f"32-bit matmul/conv kernels without Tensor Cores take {share:.1f}% of GPU kernel time "
        f"on a compute capability {cc[0]}.{cc[1]} GPU.",
        fp32_ms * (1.0 - 1.0 / MIXED_PRECISION_GAIN),
        f"estimate: those kernels {MIXED_PRECISION_GAIN:g}x faster in 16 bits, nothing else changing",
        {"fp32_matmul_ms": fp32_ms, "fp32_matmul_share_of_kernel_time_pct": share,
         "compute_16bit_share_pct": low_share, "compute_capability": f"{cc[0]}.{cc[1]}"},
        limit("fp32_matmul_share_of_kernel_time_pct", share, FP32_MATMUL_MIN_SHARE_PCT,
              xprof_16bit_share_below_pct=LOW_PRECISION_MAX_SHARE_PCT),
        {"kernels": _top_kernels(ctx, is_target)})


def elementwise_kernels(ctx):
    """Many element-wise kernels, a large share of kernel time, and no sign of XLA."""
    if not ctx.has_gpu or "jax_version" in ctx.model.environment:
        return None
    if any(is_xla_kernel(name) for gpu in ctx.active_gpus for name in gpu.activity.names):
        return None
    pytorch = ctx.model.environment.get("framework") == "pytorch"
    if pytorch and any(name.startswith("triton_") for gpu in ctx.active_gpus for name in gpu.activity.names):
        return None  # torch.compile's Inductor kernels: fusion is already in use
    ordinal, elementwise_ps = _busiest(ctx.kernel_ps_by_gpu(is_elementwise))
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
    return _modeled(
        ctx, "fusion.elementwise_kernels",
        f"{ctx.count_text(count, 'element-wise kernels')} take {share:.1f}% of GPU kernel time "
        f"({elementwise_ms:.2f} ms on {gpu.name}); {'torch.compile' if pytorch else 'XLA'} is not in use.",
        elementwise_ms * FUSION_SAVED_FRACTION,
        f"estimate: fusion removes {FUSION_SAVED_FRACTION:.0%} of the element-wise kernel time",
        {"elementwise_kernels_per_step": round(per_step, 1), "elementwise_ms": elementwise_ms,
         "elementwise_share_of_kernel_time_pct": share,
         "elementwise_kernel_mean_us": round(elementwise_ms * 1000.0 / count, 3) if count else None},
        limit("elementwise_kernels_per_step", round(per_step, 1), FUSION_MIN_KERNELS_PER_STEP,
              share_of_kernel_time_pct_above=FUSION_MIN_SHARE_PCT),
        {"kernels": _top_kernels(ctx, is_elementwise), "device": gpu.name})


RULES = (gpu_underused, fp32_matmul, elementwise_kernels)
