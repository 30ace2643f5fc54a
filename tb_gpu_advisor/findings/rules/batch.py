"""Batch findings: a GPU underused by small kernels, which a larger batch would fill."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Entry, Idiom, register
from tb_gpu_advisor.findings.finding import capped, limit
from tb_gpu_advisor.findings.modeled import modeled_finding
from tb_gpu_advisor.findings.rules.host import JAX_EXECUTIONS
from tb_gpu_advisor.findings.thresholds import (
    BATCH_GPU_BUSY_MAX_PCT,
    BATCH_SCALE,
    EAGER_MIN_OPS_PER_STEP,
    INPUT_HIGH_PCT,
    MEMORY_NEAR_LIMIT_PCT,
    MODELED_HIGH_PCT,
    SMALL_KERNEL_MEAN_US,
)
from tb_gpu_advisor.model.trace import ActivityKind
from tb_gpu_advisor.report.units import size_bytes
from tb_gpu_advisor.vocabulary import TIMES

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.findings.context import Context
    from tb_gpu_advisor.findings.finding import Finding


ENTRIES = register(
    "batch",
    {
        "batch.gpu_underused": Entry(
            category="batch",
            title="Small kernels leave the GPU underused",
            fix_summary="Raise the per-GPU batch size (as memory allows) so fixed per-step costs amortize.",
            fix="""\
The GPU is busy less than half of each step and its kernels are small: per-step overhead (launches, host
work) costs about as much as the math. A larger batch does more work per launch and per step:

    BATCH = 2 * BATCH                       # try doubling; watch memory (tf.config.experimental.get_memory_info)
    ds = ds.batch(BATCH, drop_remainder=True)
    optimizer.learning_rate = base_lr * BATCH / base_batch   # keep convergence: scale LR (or warm up)

If memory is the limit, combine with mixed precision (halves activation memory). Keras:
model.compile(..., steps_per_execution=N) also cuts per-step overhead. The estimate is per example
(throughput), for a doubled batch.""",
            docs=(L.TF_GPU_PERFORMANCE, L.NVIDIA_DL_PERFORMANCE),
            jax=Idiom(
                fix_summary="Raise the per-device batch passed to the jitted step (as memory allows).",
                fix="""\
The GPU is busy less than half of each step and its kernels are small: per-step overhead (dispatch, host
work) costs about as much as the math. Give each jitted step more work:

    BATCH = 2 * BATCH                              # try doubling; watch jax.devices()[0].memory_stats()
    learning_rate = base_lr * BATCH / base_batch   # keep convergence: scale LR (or warm up)

or run several steps per dispatch with jax.lax.scan over a stack of micro-batches inside one jitted
function. The estimate is per example (throughput), for a doubled batch.""",
                docs=(L.JAX_GPU_TIPS, L.NVIDIA_DL_PERFORMANCE),
            ),
            variants=(
                (
                    "jax:not_jitted",
                    Idiom(
                        fix_summary="jax.jit the step first (see the op-by-op finding); raise the batch only after.",
                        fix="""\
The GPU is busy less than half of each step and its kernels are small, but the step is not jitted: each jnp
op is its own dispatch, so a larger batch would mostly grow the same per-op overhead. Compile the step first:

    train_step = jax.jit(train_step, donate_argnums=0)   # one dispatch per step

then, if the GPU is still underused, raise the per-device batch (watch jax.devices()[0].memory_stats()) and
scale the learning rate. The estimate is per example (throughput), for a doubled batch.""",
                        docs=(L.JAX_JIT, L.JAX_GPU_TIPS),
                    ),
                ),
            ),
        ),
    },
)


def gpu_underused(ctx: Context) -> Finding | None:
    """GPU busy under half the step with small kernels, and not input-bound (a larger batch would not help)."""
    busy_pct = ctx.analysis.gpu_busy_pct
    if not ctx.has_gpu or busy_pct is None or busy_pct >= BATCH_GPU_BUSY_MAX_PCT:
        return None
    if (ctx.analysis.input_wait_pct or 0.0) >= INPUT_HIGH_PCT:
        return None
    durations = np.concatenate(
        [g.activity.duration_ps[g.activity.kind == ActivityKind.KERNEL] for g in ctx.active_gpus]
    )
    if not len(durations):
        return None
    mean_us = round(float(durations.mean()) / 1e6, 3)
    if mean_us >= SMALL_KERNEL_MEAN_US:
        return None
    idle_ms = ctx.window_ms * (100.0 - busy_pct) / 100.0
    recoverable = idle_ms * (1.0 - 1.0 / BATCH_SCALE)
    finding = modeled_finding(
        ctx,
        "batch.gpu_underused",
        f"The GPU is busy {busy_pct:.1f}% {ctx.of_the_step} and its kernels average {mean_us:.1f} \u00b5s.",
        recoverable,
        f"per-example estimate for a {BATCH_SCALE:g}{TIMES} batch: the per-step idle time is shared by "
        "twice the examples (upper bound; step time itself grows)",
        {"gpu_busy_pct": busy_pct, "kernel_mean_us": mean_us, "gpu_idle_ms": round(idle_ms, 3)},
        limit("gpu_busy_pct", busy_pct, BATCH_GPU_BUSY_MAX_PCT, "below", kernel_mean_us_below=SMALL_KERNEL_MEAN_US),
        {"steps": [s.name for s in ctx.step_set.steps[:3]]},
        high=MODELED_HIGH_PCT,
    )
    if finding is None:
        return None
    if ctx.framework.name == "pytorch" and not ctx.has_dataloader:
        finding = replace(finding, condition="no_dataloader")
    elif ctx.framework.is_jax and _jax_not_jitted(ctx):
        finding = replace(finding, condition="not_jitted")
    return _with_headroom(ctx, capped(finding, "medium"))


def _jax_not_jitted(ctx):
    """JAX executes many computations per step: jnp ops dispatched one by one, not one jitted step."""
    executions = ctx.host.op_totals.get(JAX_EXECUTIONS, (0, 0))[0]
    return bool(ctx.step_count) and executions / ctx.step_count >= EAGER_MIN_OPS_PER_STEP


def _with_headroom(ctx, finding):
    """The batch advice with the GPUs' memory headroom where the trace records it: a doubled batch surely fits
    (twice the peak within the limit), may not (the activations' share decides), or has no room."""
    active = {gpu.ordinal for gpu in ctx.active_gpus}
    rows = [row for row in ctx.analysis.gpu_memory if row.ordinal in active and row.peak_pct is not None]
    if not rows:
        return finding
    tightest = max(rows, key=lambda row: (row.peak_pct, -row.ordinal))
    peak = (
        f"GPU {tightest.ordinal} peaks at {size_bytes(tightest.peak_bytes)} of its {size_bytes(tightest.limit_bytes)}"
    )
    metrics = {
        **finding.evidence.metrics,
        "gpu_memory_peak_pct": tightest.peak_pct,
        "gpu_memory_headroom_bytes": tightest.headroom_bytes,
        "doubled_batch_fits": all(row.doubled_batch_fits for row in rows) or None,
    }
    if tightest.peak_pct >= MEMORY_NEAR_LIMIT_PCT:
        note = f"{peak} limit: no headroom, so free memory first (see memory.near_limit)."
        finding = capped(finding, "low")
    elif metrics["doubled_batch_fits"]:
        note = f"{peak} limit: a 2{TIMES} batch fits (doubling the batch at most doubles the memory in use)."
    else:
        note = (
            f"{peak} limit: a 2{TIMES} batch fits only if activations take less than the "
            f"{size_bytes(tightest.headroom_bytes)} left; try it and watch the peak."
        )
    return replace(
        finding,
        fix_note=" ".join(part for part in (finding.fix_note, note) if part),
        evidence=replace(finding.evidence, metrics=metrics),
    )


RULES = (gpu_underused,)
