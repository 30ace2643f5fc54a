"""Launch findings: the GPU starved by kernel launches, and kernels too short to hide them."""

import numpy as np

from tb_gpu_advisor.analysis.launch import pair_launches
from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Entry, register
from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import Evidence, Finding, grade, ladder, limit
from tb_gpu_advisor.findings.thresholds import (LAUNCH_GAP_MAX_US, LAUNCH_GPU_BUSY_MAX_PCT, LAUNCH_HIGH_PCT,
                                                LAUNCH_MEDIUM_PCT, MODELED_LOW_PCT, TINY_KERNEL_MIN_SHARE_PCT)
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.trace import ActivityKind

ENTRIES = register("launch", {
    "launch.gpu_starved_by_launches": Entry(
        category="launch",
        title="The GPU idles while kernels are being launched",
        fix_summary="Launch fewer, larger kernels: XLA jit_compile=True, larger batch, CUDA graphs.",
        fix="""\
Between kernels the GPU waits for the host to launch the next one. Fewer, bigger kernels fix it:

    @tf.function(jit_compile=True)        # XLA fuses kernels, so fewer launches per step
    def train_step(x, y): ...
    model.compile(..., jit_compile=True, steps_per_execution=32)   # Keras

If tf.data also runs on this host, give the GPU its own launch threads (before TensorFlow starts):

    TF_GPU_THREAD_MODE=gpu_private TF_GPU_THREAD_COUNT=2 python train.py

JAX: jit the entire step (one launch of a compiled program); recent XLA versions can also replay it as
CUDA graphs (see the XLA flag --xla_gpu_enable_command_buffer).""",
        docs=(L.TF_GPU_PERFORMANCE, L.TF_XLA, L.CUDA_GRAPHS, L.JAX_GPU_TIPS),
    ),
    "launch.tiny_kernels": Entry(
        category="launch",
        title="Kernels run shorter than it takes to launch them",
        fix_summary="Fuse tiny kernels (XLA jit_compile=True) or do more work per kernel (larger batch).",
        fix="""\
Most kernels finish sooner than the host needs to launch them, so the GPU runs in short bursts with gaps in
between. Make each launch do more:

    @tf.function(jit_compile=True)
    def train_step(x, y): ...
    ds = ds.batch(2 * BATCH)             # more work per kernel, if memory allows

Avoid Python-side loops over small tensors inside the step (vectorize them: tf.vectorized_map, batched
ops). JAX: jax.jit the whole step and use jax.vmap / jax.lax.scan instead of Python loops.""",
        docs=(L.TF_GPU_PERFORMANCE, L.TF_XLA, L.JAX_JIT),
    ),
})


def _launch_metrics(ctx):
    launch = ctx.report["launch"]
    calls = launch["count"]
    return {"kernels_per_step": launch["per_step"], "launch_latency_p50_us": launch["latency_us"]["p50"],
            "launch_latency_p95_us": launch["latency_us"]["p95"],
            "launch_call_mean_us": round(launch["launch_call_time_us"] / calls, 3) if calls else None,
            "tiny_kernel_pct": launch["tiny_kernel_pct"]}


def _kernels_text(ctx):
    launch = ctx.report["launch"]
    if launch["per_step"] is not None:
        return f"{launch['per_step']:,.0f} kernels per step"
    return ctx.count_text(launch["kernel_count"], "kernels")


def gpu_starved_by_launches(ctx):
    """Time every GPU idles while a host thread is inside a launch call (XProf's "Kernel Launch")."""
    if not ctx.has_gpu or not ctx.model.has_host_plane:
        return None
    launch_ms = ctx.category_ms("launch")
    share = ctx.share_pct(launch_ms)
    severity = grade(share, LAUNCH_HIGH_PCT, LAUNCH_MEDIUM_PCT)
    if severity is None:
        return None
    starved = intervals.subtract(ctx.host.launch_busy, ctx.gpu_busy)
    return Finding(
        id="launch.gpu_starved_by_launches", severity=severity,
        summary=f"The GPU idles {share:.1f}% of the step while kernels are being launched "
                f"({_kernels_text(ctx)}).",
        evidence=Evidence({"launch_exposed_pct": share, "launch_exposed_ms": round(launch_ms, 3),
                           "launch_exposed_ms_per_step": ctx.per_step_ms(launch_ms), **_launch_metrics(ctx)},
                          ladder("launch_exposed_pct", share, LAUNCH_HIGH_PCT, LAUNCH_MEDIUM_PCT),
                          {"time_ranges_ms": ctx.longest_ranges_ms(starved),
                           "steps": ctx.steps_overlapping(starved)}),
        recoverable_ms=launch_ms, window_ms=ctx.window_ms,
        speedup_basis="upper bound: the step time if the GPU never idled during launch calls")


def _short_gaps(ctx, gpu):
    """(total ps, count, median ps) of the gaps of at most LAUNCH_GAP_MAX_US between a GPU's activities."""
    busy = ctx.busy_by_gpu[gpu.ordinal]
    if len(busy) < 2:
        return 0, 0, 0
    gap_start, gap_end = busy.end_ps[:-1], busy.start_ps[1:]
    short = (gap_end - gap_start) <= LAUNCH_GAP_MAX_US * 1e6
    gaps = intervals.union(gap_start[short], gap_end[short])
    windows = ctx.gpu_windows(gpu)
    inside = intervals.intersect(gaps, windows) if len(windows) else gaps
    lengths = inside.end_ps - inside.start_ps
    return int(lengths.sum()), int(len(lengths)), int(np.median(lengths)) if len(lengths) else 0


def tiny_kernels(ctx):
    """Most kernels run shorter than their launch call and the GPU works in bursts with short gaps."""
    busy_pct = ctx.summary["gpu_busy_pct"]
    if not ctx.has_gpu or busy_pct is None or busy_pct >= LAUNCH_GPU_BUSY_MAX_PCT:
        return None
    paired = shorter = 0
    worst = (0, 0, 0, None)
    for gpu in ctx.active_gpus:
        activity = gpu.activity
        index = pair_launches(ctx.host, activity)
        kernels = (activity.kind == ActivityKind.KERNEL) & (index >= 0)
        paired += int(kernels.sum())
        shorter += int((activity.duration_ps[kernels] < ctx.host.launch_duration_ps[index[kernels]]).sum())
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
    return Finding(
        id="launch.tiny_kernels", severity=severity,
        summary=f"{shorter_pct:.0f}% of kernels run shorter than their launch call; the GPU sits in "
                f"{worst[1]:,} short gaps ({gap_ms:.2f} ms, {share:.1f}% of the step time).",
        evidence=Evidence({"kernels_shorter_than_launch_pct": shorter_pct, "kernels_shorter_than_launch": shorter,
                           "kernels_paired": paired, "short_gap_ms": gap_ms, "short_gap_count": worst[1],
                           "short_gap_median_us": round(worst[2] / 1e6, 3), "short_gap_pct": share,
                           "gpu_busy_pct": busy_pct, **_launch_metrics(ctx)},
                          limit("kernels_shorter_than_launch_pct", shorter_pct, TINY_KERNEL_MIN_SHARE_PCT,
                                gap_max_us=LAUNCH_GAP_MAX_US, gpu_busy_pct_below=LAUNCH_GPU_BUSY_MAX_PCT),
                          {"device": worst[3]}),
        recoverable_ms=gap_ms, window_ms=ctx.window_ms,
        speedup_basis=f"upper bound: the step time without the GPU's gaps of at most {LAUNCH_GAP_MAX_US:g} us")


RULES = (gpu_starved_by_launches, tiny_kernels)
