"""Occupancy findings: dominant kernels with low occupancy or a grid too small for the GPU."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from tb_gpu_advisor.analysis.kernel_families import occupancy_by_design
from tb_gpu_advisor.analysis.kernel_names import is_custom_kernel, is_library_math, is_nccl
from tb_gpu_advisor.analysis.launch import pair_launches
from tb_gpu_advisor.analysis.occupancy import theoretical_occupancy
from tb_gpu_advisor.analysis.rounding import pct, us
from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Entry, Idiom, register
from tb_gpu_advisor.findings.finding import Evidence, Finding, estimated, grade, limit
from tb_gpu_advisor.findings.modeled import busiest_gpu
from tb_gpu_advisor.findings.thresholds import (
    DOMINANT_KERNEL_SHARE_PCT,
    GOOD_OCCUPANCY_PCT,
    KERNEL_HIGH_PCT,
    LOW_OCCUPANCY_PCT,
    MIN_KERNEL_US,
    MODELED_LOW_PCT,
    MODELED_MEDIUM_PCT,
)
from tb_gpu_advisor.model.trace import ActivityKind
from tb_gpu_advisor.report.units import kernel_label
from tb_gpu_advisor.vocabulary import counted
from tb_gpu_advisor.whatif.occupancy import (
    OccupancyKernel,
    occupancy_raised,
    relaunched_over_sms,
    replayed_saving_ps,
    spread_fraction,
)

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.findings.context import Context


ENTRIES = register(
    "occupancy",
    {
        "occupancy.low_occupancy": Entry(
            category="occupancy",
            title="Time-dominant kernels run at low occupancy",
            fix_summary="Raise occupancy of the named kernels (registers, shared memory or block size).",
            fix="""\
These kernels keep few warps resident per SM, so the SM cannot hide memory latency. The limiter is in the
evidence:
- registers: for your own CUDA/Triton kernels cap them (__launch_bounds__(threads, minBlocks) or
  -maxrregcount; Triton: smaller BLOCK sizes / num_warps);
- shared memory: use smaller tiles or fewer pipeline stages;
- block size: launch blocks of 128-256 threads so more warps fit per SM.
For framework kernels you do not own, change what they are given: larger batch or hidden sizes, fused
ops (XLA compilation of the step), a different layout (channels_last for convolutions). Tensor-core and library
GEMM/attention kernels (cuBLAS incl. nvjet, cuDNN, CUTLASS, FlashAttention, Triton matmuls) and kernels with
96 KiB or more of shared memory per block are excluded: they trade occupancy for large tiles by design, and
the roofline judges them by their FLOP rate.""",
            docs=(L.CUDA_OCCUPANCY, L.NVIDIA_DL_PERFORMANCE),
        ),
        "occupancy.tiny_grid": Entry(
            category="occupancy",
            title="Time-dominant kernels launch fewer blocks than the GPU has SMs",
            fix_summary="Give these kernels more parallel work (larger batch, fused ops) so every SM is used.",
            fix="""\
These kernels launch fewer thread blocks than the GPU has SMs, so most SMs sit idle while they run. Give
them more parallel work: a larger batch, larger tensors per op (fuse small ops with XLA), or, for your own
kernels, split the work into more, smaller blocks (grid-stride loops, split-K for GEMMs).""",
            docs=(L.NVIDIA_DL_PERFORMANCE, L.CUDA_OCCUPANCY),
            variants=(
                (
                    "any:custom_kernels",
                    Idiom(
                        fix_summary="Launch these custom kernels with more blocks (grid size in the op's launch code).",
                        fix="""\
These kernels are a custom op's own CUDA kernels (not a library's or the framework's), and their launch
code fixes a grid smaller than the GPU's SM count, so most SMs sit idle while they run. A larger batch does
not help when the grid is one block per batch element or a constant. Change the launch: give each block
less work and launch more of them, for example a block per (batch element, group of points) instead of one
per batch element, with a grid-stride loop inside the kernel:

    // before: kernel<<<batch, 512>>>(...)   -- one block per batch element
    dim3 grid(batch, (n + 255) / 256);        // batch x point tiles: enough blocks to fill every SM
    kernel<<<grid, 256, 0, stream>>>(...);    // in the kernel: b = blockIdx.x, i = blockIdx.y * 256 + threadIdx.x

Where a block must see all points of an element (a sequential farthest-point sampling), split that work
over several blocks with a reduction step, or run several elements' searches per launch.""",
                        docs=(L.CUDA_OCCUPANCY, L.NVIDIA_DL_PERFORMANCE),
                    ),
                ),
            ),
        ),
    },
)


KERNELS_LISTED = 5
KERNEL_LABEL_WIDTH = 60  # characters of the kernel's name in the summary


def _dominant_rows(ctx):
    """[(row, share %, wall ms)]: kernel rows with at least DOMINANT_KERNEL_SHARE_PCT of all kernel time; wall
    ms is that share of the busiest GPU's kernel time (GPUs run in parallel)."""
    rows = ctx.analysis.kernels
    total = sum(us(row.total_ps) for row in rows)
    busiest_ms = max(ctx.kernel_ps_all.values(), default=0) / 1e9
    found = []
    for row in rows:
        share = 100.0 * us(row.total_ps) / total if total else 0.0
        if share >= DOMINANT_KERNEL_SHARE_PCT and not is_nccl(row.name):
            found.append((row, round(share, 2), busiest_ms * share / 100.0))
    return found


def _finding(ctx, finding_id, flagged, summary, estimate, crossed):
    """The finding of the `flagged` kernels with its speedup from the what-if `estimate`; None below the ladder."""
    recoverable = estimate.recoverable_of(ctx.window_ms)
    share = ctx.share_pct(recoverable)
    severity = grade(share, KERNEL_HIGH_PCT, MODELED_MEDIUM_PCT, MODELED_LOW_PCT)
    if severity is None:
        return None
    flagged = sorted(flagged, key=lambda item: -item["share_of_kernel_time_pct"])[:KERNELS_LISTED]
    finding = Finding(
        id=finding_id,
        severity=severity,
        summary=summary(flagged[0]),
        evidence=Evidence(
            {"kernels_flagged": len(flagged), "recoverable_pct": share, "per_kernel": flagged},
            crossed,
            {"kernels": [item["kernel"] for item in flagged]},
        ),
        recoverable_ms=recoverable,
        window_ms=ctx.window_ms,
        speedup_basis=estimate.basis,
    )
    return estimated(finding, estimate)


def _kernel(row, wall_ms, occupancy=None):
    """The what-if's view of a kernel row whose time on the critical path is `wall_ms`."""
    return OccupancyKernel(
        kernel_label(row.name, KERNEL_LABEL_WIDTH),
        wall_ms,
        row.total_ps / row.occurrences / 1e9 if row.occurrences else 0.0,
        row.grid[0] * row.grid[1] * row.grid[2],
        occupancy,
    )


def _shortest_kernel_ms(ctx):
    """What a launch costs the GPU at least, in ms: MIN_KERNEL_US, or the shortest compute kernel of the trace if
    shorter."""
    found = [row.min_ps for row in ctx.analysis.kernels if row.min_ps > 0 and not is_nccl(row.name)]
    return min([MIN_KERNEL_US * 1e6] + found) / 1e9


def _step_bounds(ctx, ordinal):
    """[(start ps, end ps)] of each step the GPU's work is replayed in (its own Steps markers in pre-grouped
    traces), else of the analysis window: a step ends when its work does, so each is replayed apart."""
    step_set = ctx.step_set
    own = step_set.device_markers.get(ordinal)
    if step_set.source == "device" and own:
        return sorted((start, end) for _, start, end in own)
    if step_set.steps:
        return [(step.start_ps, step.end_ps) for step in step_set.timed_steps]
    return list(zip(ctx.window.start_ps.tolist(), ctx.window.end_ps.tolist()))


def _replayed_saving_ms(ctx, kept_by_launch):
    """The step time saved on the busiest GPU's timeline, summed over its windows, with each kernel launch of
    (name, grid) in `kept_by_launch` keeping that share of its time (whatif.occupancy.replayed_saving_ps). A launch
    is ready as soon after its host launch call began as the quickest launch of this GPU started; one the trace
    pairs with no launch call waited only for the work before it."""
    ordinal, _ = busiest_gpu(ctx.kernel_ps_all)
    gpu = next((g for g in ctx.active_gpus if g.ordinal == ordinal), None)
    if gpu is None or not len(gpu.activity):
        return None
    activity = gpu.activity
    order = np.argsort(activity.start_ps, kind="stable")
    starts = activity.start_ps[order]
    ends = starts + activity.duration_ps[order]
    launch = pair_launches(ctx.host, activity)[order]
    ready = np.full(len(order), -np.inf)
    paired = launch >= 0
    if paired.any():
        launched = ctx.host.launch_start_ps[launch[paired]]
        ready[paired] = launched + max(0, int((starts[paired] - launched).min()))
    kept = np.ones(len(order))
    config = activity.config_id[order]
    launches = np.flatnonzero((activity.kind[order] == ActivityKind.KERNEL) & (config >= 0))
    pairs, which = np.unique(
        np.stack([activity.name_id[order][launches], config[launches]], axis=1), axis=0, return_inverse=True
    )
    shares = np.array(
        [
            kept_by_launch.get((activity.names[name_id], activity.configs[config_id].grid), 1.0)
            for name_id, config_id in pairs.tolist()
        ]
    )
    if len(shares):
        kept[launches] = shares[which.reshape(-1)]
    saved = 0.0
    for start, end in _step_bounds(ctx, ordinal):
        inside = slice(np.searchsorted(starts, start), np.searchsorted(starts, end))
        saved += replayed_saving_ps(starts[inside], np.minimum(ends[inside], end), ready[inside], kept[inside])
    return saved / 1e9


def _summary(flagged, plural_verb, singular_verb, top_figure):
    """`query_ball_point_gpu runs at low occupancy: 19% limited by registers (58.7% of kernel time).`, or for
    several kernels their count and shared share, then the largest by name with its own figure and share."""
    names = list(dict.fromkeys(item["kernel"] for item in flagged))
    top = max(flagged, key=lambda item: item["share_of_kernel_time_pct"])
    top_share = sum(item["share_of_kernel_time_pct"] for item in flagged if item["kernel"] == top["kernel"])
    label = kernel_label(top["kernel"], KERNEL_LABEL_WIDTH)
    if len(names) == 1:
        return f"{label} {singular_verb}: {top_figure} ({top_share:.1f}% of kernel time)."
    total = sum(item["share_of_kernel_time_pct"] for item in flagged)
    return (
        f"{len(names)} time-dominant kernels {plural_verb} ({total:.1f}% of kernel time together); the "
        f"largest, {label}: {top_figure} ({top_share:.1f}% of kernel time)."
    )


def low_occupancy(ctx: Context) -> None:
    """Dominant non-library kernels whose (recorded, else computed) occupancy is below LOW_OCCUPANCY_PCT. Raised to
    GOOD_OCCUPANCY_PCT, each runs at most occupancy-proportionally faster (whatif.occupancy.occupancy_raised)."""
    cc = ctx.compute_capability
    if not ctx.has_gpu:
        return None
    flagged, kernels = [], []
    for row, share, wall_ms in _dominant_rows(ctx):
        if occupancy_by_design(row.name, row.shared_memory_bytes, row.uses_tensor_cores, is_library_math(row.name)):
            continue  # one large tile per SM by design: judged by its FLOP rate (roofline), not its occupancy
        if row.block is None or row.registers_per_thread is None or row.shared_memory_bytes is None:
            continue  # a value no GPU allows: unknown, never advice
        if ctx.sm_count and row.grid and row.grid[0] * row.grid[1] * row.grid[2] < ctx.sm_count:
            continue  # fewer blocks than SMs: each SM holds one block at most, whatever its registers (tiny_grid)
        threads = row.block[0] * row.block[1] * row.block[2]
        computed, limiter = (
            theoretical_occupancy(cc, threads, row.registers_per_thread, row.shared_memory_bytes)
            if cc
            else (None, None)
        )
        recorded = pct(row.occupancy_pct)
        occupancy = recorded if recorded else computed
        if occupancy is None or occupancy >= LOW_OCCUPANCY_PCT:
            continue
        kernels.append(_kernel(row, wall_ms, occupancy))
        flagged.append(
            {
                "kernel": row.name,
                "share_of_kernel_time_pct": share,
                "occupancy_pct": occupancy,
                "occupancy_source": "recorded" if recorded else "computed",
                "limiter": limiter,
                "registers_per_thread": row.registers_per_thread,
                "shared_memory_bytes": row.shared_memory_bytes,
                "threads_per_block": threads,
                "at_most_faster": round(GOOD_OCCUPANCY_PCT / occupancy, 2) if occupancy > 0 else None,
            }
        )
    if not flagged or any(k.occupancy_pct <= 0 for k in kernels):
        return None
    return _finding(
        ctx,
        "occupancy.low_occupancy",
        flagged,
        lambda top: _summary(
            flagged,
            "run at low occupancy",
            "runs at low occupancy",
            f"{top['occupancy_pct']:.0f}% limited by {top['limiter'] or 'an unknown resource'}",
        ),
        occupancy_raised(ctx.window_ms, kernels, GOOD_OCCUPANCY_PCT),
        limit(
            "occupancy_pct",
            min(item["occupancy_pct"] for item in flagged),
            LOW_OCCUPANCY_PCT,
            "below",
            min_share_of_kernel_time_pct=DOMINANT_KERNEL_SHARE_PCT,
        ),
    )


def _launch_shape_recorded(row):
    """False where the trace gave no launch shape: the readers fill a missing grid and block with 1 x 1 x 1, and a
    time-dominant kernel of one thread is far less likely than a trace without the shape (Kineto on ROCm)."""
    return not (row.grid == (1, 1, 1) and row.block in ((1, 1, 1), None))


def tiny_grid(ctx: Context) -> Finding | None:
    """Dominant kernels launching fewer blocks than the GPU has SMs. Relaunched with a block per SM, each runs its
    work over every SM (whatif.occupancy.relaunched_over_sms)."""
    sms = ctx.sm_count
    if not ctx.has_gpu or not sms:
        return None
    shortest_ms = _shortest_kernel_ms(ctx)
    flagged, kernels, kept_by_launch = [], [], {}
    for row, share, wall_ms in _dominant_rows(ctx):
        blocks = row.grid[0] * row.grid[1] * row.grid[2]
        if blocks >= sms or not _launch_shape_recorded(row):
            continue
        kernel = _kernel(row, wall_ms)
        kernels.append(kernel)
        kept_by_launch[(row.name, row.grid)] = spread_fraction(kernel, sms, shortest_ms)
        flagged.append(
            {
                "kernel": row.name,
                "share_of_kernel_time_pct": share,
                "blocks": blocks,
                "sm_count": sms,
                "modeled_faster": round(1.0 / kept_by_launch[(row.name, row.grid)], 2),
            }
        )
    if not flagged:
        return None
    finding = _finding(
        ctx,
        "occupancy.tiny_grid",
        flagged,
        lambda top: _summary(
            flagged,
            f"launch fewer blocks than the {sms} SMs",
            f"launches fewer blocks than the {sms} SMs",
            counted(top["blocks"], "block"),
        ),
        relaunched_over_sms(ctx.window_ms, kernels, sms, shortest_ms, _replayed_saving_ms(ctx, kept_by_launch)),
        limit(
            "blocks",
            min(item["blocks"] for item in flagged),
            sms,
            "below",
            min_share_of_kernel_time_pct=DOMINANT_KERNEL_SHARE_PCT,
        ),
    )
    if finding is not None and all(is_custom_kernel(item["kernel"]) for item in flagged):
        # Their own launch code sets the grid (often a block per batch element): a larger batch or fusion is not
        # the fix, more blocks per launch is. Library and framework kernels keep the batch advice (their grid
        # scales with the tensors).
        finding = replace(finding, condition="custom_kernels")
    return finding


RULES = (low_occupancy, tiny_grid)
