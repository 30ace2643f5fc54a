"""The GPU starved by kernel launches: many launches per step, tiny kernels with gaps between them."""

from __future__ import annotations

import numpy as np
from tb_gpu_advisor.analysis.launch import pair_launches
from tb_gpu_advisor.analysis.rounding import pct, us
from tb_gpu_advisor.findings.compiled import launch_condition
from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import Evidence, Finding, grade, ladder, limit
from tb_gpu_advisor.findings.thresholds import (
    LAUNCH_GAP_MAX_US,
    LAUNCH_GPU_BUSY_MAX_PCT,
    LAUNCH_HIGH_PCT,
    LAUNCH_MEDIUM_PCT,
    MODELED_LOW_PCT,
    TINY_KERNEL_MIN_SHARE_PCT,
)
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.trace import ActivityKind

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.findings.context import Context


def _kernels_per_step(launch):
    return None if launch.launches_per_step is None else round(launch.launches_per_step, 3)


def _launch_metrics(ctx):
    launch = ctx.analysis.launch
    calls = launch.launch_call_count
    return {
        "kernels_per_step": _kernels_per_step(launch),
        "launch_latency_p50_us": us(launch.latency_p50_ps),
        "launch_latency_p95_us": us(launch.latency_p95_ps),
        "launch_call_mean_us": round(us(launch.launch_call_ps) / calls, 3) if calls else None,
        "tiny_kernel_pct": pct(100.0 * launch.tiny_kernel_count / launch.kernel_count) if launch.kernel_count else None,
    }


def _kernels_text(ctx):
    launch = ctx.analysis.launch
    compiled = ctx.analysis.compilation
    if compiled is not None and compiled.graphs_hide_launches and compiled.graph_launch_calls:
        replaying = (
            f" replaying {_kernels_per_step(launch):,.0f} kernels" if launch.launches_per_step is not None else ""
        )
        return f"{ctx.count_text(compiled.graph_launch_calls, 'graph launch', 'graph launches')}{replaying}"
    if launch.launches_per_step is not None:
        return f"{_kernels_per_step(launch):,.0f} kernels per step"
    return ctx.count_text(launch.kernel_count, "kernel")


def gpu_starved_by_launches(ctx: Context) -> Finding | None:
    """Time the GPUs idle waiting for the launch call of the kernel that ends the gap (analysis.idle_attribution:
    the call was running, or started, after the GPU went idle); copies, syncs and blocked calls are not launches."""
    if not ctx.has_gpu or not ctx.model.has_host_plane:
        return None
    launch_ms = ctx.idle_cause_ms("launch")
    share = ctx.share_pct(launch_ms)
    severity = grade(share, LAUNCH_HIGH_PCT, LAUNCH_MEDIUM_PCT)
    if severity is None:
        return None
    starved = ctx.idle_spans("launch")
    condition, note = ctx.xla_advice()
    if ctx.jax_step_jitted:
        condition = "jitted"
    compiled, compiled_note = launch_condition(ctx)
    if ctx.confidence.warmup:
        condition, note = "warmup", ""
    elif compiled is not None:
        condition, note = compiled, compiled_note
    elif ctx.framework.name == "pytorch" and ctx.on_amd:
        condition = "rocm"
    condition = ctx.with_optimizer_fused(condition)
    return Finding(
        id="launch.gpu_starved_by_launches",
        severity=severity,
        summary=f"The GPU idles {share:.1f}% {ctx.of_the_step} while kernels are being launched "
        f"({_kernels_text(ctx)}).",
        evidence=Evidence(
            {
                "launch_exposed_pct": share,
                "launch_exposed_ms": round(launch_ms, 3),
                "launch_exposed_ms_per_step": ctx.per_step_ms(launch_ms),
                **_launch_metrics(ctx),
            },
            ladder("launch_exposed_pct", share, LAUNCH_HIGH_PCT, LAUNCH_MEDIUM_PCT),
            {
                "time_ranges_ms": ctx.longest_ranges_ms(starved),
                "steps": ctx.steps_overlapping(starved),
                "xla_incompatible_ops": list(ctx.step_ops.xla_blockers) if condition == "xla_blocked" else [],
            },
        ),
        recoverable_ms=launch_ms,
        window_ms=ctx.window_ms,
        speedup_basis="upper bound: the step time if the GPU never waited for a kernel's launch call",
        condition=condition,
        fix_note=note,
    )


def _short_gaps(ctx, gpu):
    """(total ps, count, median ps) of the time a GPU waited for a launch call (the idle attribution's `launch`
    cause, as on the Time and Idle lines) inside its gaps of at most LAUNCH_GAP_MAX_US: a gap whose next kernel was
    queued before it began (device wait), or that the host spent elsewhere, is not launch time."""
    busy = ctx.busy_by_gpu[gpu.ordinal]
    idle = ctx.analysis.idle
    found = idle.by_ordinal(gpu.ordinal) if idle is not None else None
    if len(busy) < 2 or found is None:
        return 0, 0, 0
    gap_start, gap_end = busy.end_ps[:-1], busy.start_ps[1:]
    short = (gap_end - gap_start) <= LAUNCH_GAP_MAX_US * 1e6
    gaps = intervals.intersect(intervals.union(gap_start[short], gap_end[short]), found.spans["launch"])
    windows = ctx.gpu_windows(gpu)
    inside = intervals.intersect(gaps, windows) if len(windows) else gaps
    lengths = inside.end_ps - inside.start_ps
    return int(lengths.sum()), int(len(lengths)), int(np.median(lengths)) if len(lengths) else 0


def tiny_kernels(ctx: Context) -> Finding | None:
    """Most kernels run shorter than their launch call and the GPU works in bursts with short gaps. Kernels replayed
    from a graph have no launch call of their own: not when graphs replay most of the work, and never counted."""
    busy_pct = ctx.analysis.gpu_busy_pct
    compiled = ctx.analysis.compilation
    if (
        not ctx.has_gpu
        or busy_pct is None
        or busy_pct >= LAUNCH_GPU_BUSY_MAX_PCT
        or (compiled is not None and compiled.graphs_hide_launches)
    ):
        return None
    paired = shorter = 0
    worst = (0, 0, 0, None)
    short_masks = {}
    for gpu in ctx.active_gpus:
        activity = gpu.activity
        index = pair_launches(ctx.host, activity)
        kernels = (activity.kind == ActivityKind.KERNEL) & (index >= 0)
        if kernels.any():  # one launch call with several device events is a graph launch
            _, inverse, counts = np.unique(activity.correlation_id[kernels], return_inverse=True, return_counts=True)
            kernels[np.flatnonzero(kernels)[counts[inverse] > 1]] = False
        paired += int(kernels.sum())
        short = kernels.copy()
        short[kernels] = activity.duration_ps[kernels] < ctx.host.launch_duration_ps[index[kernels]]
        short_masks[gpu.ordinal] = short
        shorter += int(short.sum())
        gaps = _short_gaps(ctx, gpu)
        if gaps[0] > worst[0]:
            worst = (*gaps, gpu.name)
    if not paired:
        return None
    shorter_pct = round(100.0 * shorter / paired, 2)
    gap_ms = ms(worst[0])
    share = ctx.share_pct(gap_ms)
    severity = grade(share, LAUNCH_HIGH_PCT, LAUNCH_MEDIUM_PCT, MODELED_LOW_PCT)
    if shorter_pct < TINY_KERNEL_MIN_SHARE_PCT or severity is None:
        return None
    condition, note = ctx.xla_advice()
    if ctx.jax_step_jitted:
        condition, note = "jitted", ""
    optimizer_share = ctx.optimizer_kernel_share(lambda device: short_masks[device.ordinal])
    condition = ctx.with_optimizer_kernels(condition, optimizer_share)
    optimizer_text = (
        f" {optimizer_share:.0%} of those short kernels are launched by the optimizer step."
        if condition == "optimizer_kernels"
        else ""
    )
    return Finding(
        id="launch.tiny_kernels",
        severity=severity,
        summary=f"{shorter_pct:.0f}% of kernels run shorter than their launch call; the GPU waits for a launch in "
        f"{ctx.count_text(worst[1], 'short gap')} ({ctx.time_text(gap_ms)}, {share:.1f}% of the step time)."
        + optimizer_text,
        evidence=Evidence(
            {
                "kernels_shorter_than_launch_pct": shorter_pct,
                "kernels_shorter_than_launch": shorter,
                "kernels_paired": paired,
                "short_gap_ms": gap_ms,
                "short_gap_count": worst[1],
                "short_gap_median_us": round(worst[2] / 1e6, 3),
                "short_gap_pct": share,
                "gpu_busy_pct": busy_pct,
                **_launch_metrics(ctx),
                **({} if optimizer_share is None else {"optimizer_step_share_pct": round(100.0 * optimizer_share, 1)}),
            },
            limit(
                "kernels_shorter_than_launch_pct",
                shorter_pct,
                TINY_KERNEL_MIN_SHARE_PCT,
                gap_max_us=LAUNCH_GAP_MAX_US,
                gpu_busy_pct_below=LAUNCH_GPU_BUSY_MAX_PCT,
            ),
            {
                "device": worst[3],
                "xla_incompatible_ops": list(ctx.step_ops.xla_blockers) if condition == "xla_blocked" else [],
            },
        ),
        recoverable_ms=gap_ms,
        window_ms=ctx.window_ms,
        speedup_basis="upper bound: the step time without the GPU's waits for a launch call in its gaps of at most "
        f"{LAUNCH_GAP_MAX_US:g} \u00b5s",
        condition=condition,
        fix_note=note,
    )
