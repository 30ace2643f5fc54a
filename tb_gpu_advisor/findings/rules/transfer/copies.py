"""How copies are made: pageable memory, synchronous or small copies, bandwidth below the link's."""

from __future__ import annotations

from dataclasses import replace
import numpy as np
from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import Evidence, Finding, estimated, grade, limit
from tb_gpu_advisor.findings.thresholds import (
    LARGE_COPY_BYTES,
    LOW_BANDWIDTH_FRACTION,
    MODELED_HIGH_PCT,
    MODELED_LOW_PCT,
    MODELED_MEDIUM_PCT,
    PCIE_GBPS_BY_CC,
    SMALL_COPIES_MIN_PER_STEP,
    SMALL_COPY_BYTES,
)
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.host import HOST_STAGING_TAG
from tb_gpu_advisor.model.trace import ActivityKind, CopyDirection
from tb_gpu_advisor.whatif import transfer as whatif_transfer
from tb_gpu_advisor.report.units import size_bytes

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.findings.context import Context


HOST_SIDE = (CopyDirection.H2D, CopyDirection.D2H)


def _copies(ctx, predicate, directions=HOST_SIDE):
    """[(gpu, mask)] of copies in `directions` whose CopyDetails satisfy `predicate`."""
    found = []
    for gpu in ctx.active_gpus:
        activity = gpu.activity
        chosen = np.array([bool(predicate(c)) for c in activity.copies] + [False], dtype=bool)
        mask = (
            (activity.kind == ActivityKind.MEMCPY)
            & chosen[activity.copy_id]
            & np.isin(activity.copy_direction, [int(d) for d in directions])
        )
        found.append((gpu, mask))
    return found


def _summarize(ctx, selected):
    """count, bytes, busy ps, exposed ps (inside the window, while no GPU computes) of selected copies."""
    count = size = busy = 0
    spans = []
    for gpu, mask in selected:
        activity = gpu.activity
        count += int(mask.sum())
        size += sum(activity.copies[i].size_bytes for i in activity.copy_id[mask])
        busy += int(activity.duration_ps[mask].sum())
        spans.append(intervals.union(activity.start_ps[mask], activity.end_ps[mask]))
    exposed = ctx.exposed(intervals.union_all(*spans))
    return count, size, busy, ctx.in_window_ps(exposed), exposed


def _copy_finding(ctx, finding_id, summary, exposed_ps, exposed, metrics, crossed, basis):
    exposed_ms = ms(exposed_ps)
    share = ctx.share_pct(exposed_ms)
    severity = grade(share, MODELED_HIGH_PCT, MODELED_MEDIUM_PCT, MODELED_LOW_PCT)
    if severity is None:
        return None
    return Finding(
        id=finding_id,
        severity=severity,
        summary=summary,
        evidence=Evidence(
            {**metrics, "exposed_ms": exposed_ms, "exposed_pct": share},
            crossed,
            {"time_ranges_ms": ctx.longest_ranges_ms(exposed), "steps": ctx.steps_overlapping(exposed)},
        ),
        recoverable_ms=exposed_ms,
        window_ms=ctx.window_ms,
        speedup_basis=basis,
    )


def _pinned_rate_gbps(ctx):
    """The best rate of large host-side copies with no pageable side in this trace (None without such copies)."""
    sizes, durations = [], []
    for gpu, mask in _copies(ctx, lambda c: c.has_pageable_side is False and c.size_bytes >= LARGE_COPY_BYTES):
        activity = gpu.activity
        sizes.extend(activity.copies[i].size_bytes for i in activity.copy_id[mask])
        durations.extend(int(d) for d in activity.duration_ps[mask])
    return whatif_transfer.best_rate_gbps(sizes, durations)


def pageable_memory(ctx: Context) -> Finding | None:
    """Host-side copies from or to pageable memory (only traces that record memory kinds). The estimate is the
    ceiling of pinning and overlapping them (whatif.transfer.overlapped); in PyTorch, whose fix pins them, the
    model of pinning with that ceiling in its basis (whatif.transfer.pinned_then_overlapped)."""
    count, size, busy, exposed_ps, exposed = _summarize(ctx, _copies(ctx, lambda c: c.has_pageable_side))
    if not count:
        return _host_staging(ctx)
    finding = _copy_finding(
        ctx,
        "transfer.pageable_memory",
        f"{count:,} copies ({size_bytes(size)}) use pageable host memory; they run while no GPU computes "
        f"for {ctx.time_text(ms(exposed_ps))}.",
        exposed_ps,
        exposed,
        {"pageable_copies": count, "pageable_bytes": size, "pageable_copy_ms": ms(busy)},
        limit("pageable_copies", count, 0),
        "upper bound: pinned, asynchronous copies fully overlapped with compute",
    )
    if finding is None:
        return None
    # TensorFlow's and JAX's fixes prefetch to the device, overlapping the copies with compute: their ceiling is
    # all exposed copy time removed, with the faster-copy model in the basis. PyTorch's pins the memory
    # (pin_memory, non_blocking): the copy that feeds a step still waits in its stream's order, so the model of
    # pinning is the estimate and the overlap ceiling (a copy stream of its own) goes in the basis.
    cc = ctx.compute_capability
    copies = whatif_transfer.Copies(size, busy / 1e9, exposed_ps / 1e9)
    faster = whatif_transfer.pinned(ctx.window_ms, copies, _pinned_rate_gbps(ctx), _link_gbps(cc) if cc else None)
    if ctx.framework.name == "pytorch":
        if not ctx.has_dataloader:
            finding = replace(finding, condition="no_dataloader")
        return estimated(finding, whatif_transfer.pinned_then_overlapped(ctx.window_ms, copies, faster))
    return estimated(finding, whatif_transfer.overlapped(ctx.window_ms, copies, faster))


def _host_staging(ctx):
    """JAX given a NumPy batch each step: PJRT stages it on the host (`H2D Dispatch`: a copy and relayout of
    pageable memory) before the copy, while the GPU idles. Bound: that idle removed by putting the batch on the
    device ahead of the step."""
    if not ctx.framework.is_jax or not ctx.has_gpu:
        return None
    staging = intervals.intersect(ctx.host.tagged.get(HOST_STAGING_TAG, intervals.EMPTY), ctx.window)
    idle = intervals.subtract(staging, ctx.gpu_busy)
    idle_ps = ctx.in_window_ps(idle)
    if not len(staging) or idle_ps <= 0:
        return None
    count, size, _, _, _ = _summarize(ctx, _copies(ctx, lambda c: True, directions=(CopyDirection.H2D,)))
    finding = _copy_finding(
        ctx,
        "transfer.pageable_memory",
        f"The host stages each batch for the device from host memory (PJRT's H2D Dispatch, "
        f"{ctx.time_text(ms(staging.total_ps))}) while the GPU idles {ctx.time_text(ms(idle_ps))}; "
        f"{count:,} host-to-device copies ({size_bytes(size)}) follow.",
        idle_ps,
        idle,
        {
            "host_staging_ms": ms(staging.total_ps),
            "host_staging_events": len(staging),
            "h2d_copies": count,
            "h2d_bytes": size,
        },
        limit("host_staging_idle_ms", ms(idle_ps), 0),
        "upper bound: the GPU idle while the host stages batches removed, the batch put on the device ahead of the "
        "step",
    )
    return None if finding is None else replace(finding, condition="host_staging")


def sync_copies(ctx: Context) -> None:
    """Synchronous copies that are not pageable (pageable ones are covered by pageable_memory)."""
    selected = _copies(ctx, lambda c: c.is_async is False and not c.has_pageable_side)
    count, size, busy, exposed_ps, exposed = _summarize(ctx, selected)
    if not count:
        return None
    return _copy_finding(
        ctx,
        "transfer.sync_copies",
        f"{count:,} synchronous copies ({size_bytes(size)}) block the host; they run while no GPU "
        f"computes for {ctx.time_text(ms(exposed_ps))}.",
        exposed_ps,
        exposed,
        {"sync_copies": count, "sync_bytes": size, "sync_copy_ms": ms(busy)},
        limit("sync_copies", count, 0),
        "upper bound: asynchronous copies fully overlapped with compute",
    )


def small_copies(ctx: Context) -> None:
    """Many copies below SMALL_COPY_BYTES per step."""
    count, size, busy, exposed_ps, exposed = _summarize(ctx, _copies(ctx, lambda c: c.size_bytes < SMALL_COPY_BYTES))
    per_step = count / ctx.step_count if ctx.step_count else float(count)
    if per_step < SMALL_COPIES_MIN_PER_STEP:
        return None
    return _copy_finding(
        ctx,
        "transfer.small_copies",
        f"{ctx.count_text(count, 'copy', 'copies')} under {SMALL_COPY_BYTES // 1024} KB "
        f"(mean {size / count:,.0f} bytes).",
        exposed_ps,
        exposed,
        {
            "small_copies": count,
            "small_copies_per_step": round(per_step, 1),
            "small_copy_bytes": size,
            "small_copy_ms": ms(busy),
        },
        limit("small_copies_per_step", round(per_step, 1), SMALL_COPIES_MIN_PER_STEP),
        "upper bound: the exposed time of the small copies removed (batched into one)",
    )


def _link_gbps(cc):
    for minimum, gbps in PCIE_GBPS_BY_CC:
        if cc >= minimum:
            return gbps
    return PCIE_GBPS_BY_CC[-1][1]


def low_bandwidth(ctx: Context) -> Finding | None:
    """Large host-to-device copies well below the practical PCIe bandwidth of the GPU's generation; pageable ones
    are left to transfer.pageable_memory, whose staging explains their rate (the link is then not in question)."""
    cc = ctx.compute_capability
    if cc is None:
        return None
    selected = _copies(
        ctx, lambda c: c.size_bytes >= LARGE_COPY_BYTES and not c.has_pageable_side, directions=(CopyDirection.H2D,)
    )
    count, size, busy, exposed_ps, exposed = _summarize(ctx, selected)
    if not count or busy <= 0:
        return None
    achieved = round(size / (busy / 1e12) / 1e9, 3)
    expected = _link_gbps(cc)
    if achieved >= LOW_BANDWIDTH_FRACTION * expected:
        return None
    recoverable_ps = exposed_ps * (1.0 - achieved / expected)
    finding = _copy_finding(
        ctx,
        "transfer.low_bandwidth",
        f"{count:,} large host-to-device copies reach {achieved:.2f} GB/s, under "
        f"{LOW_BANDWIDTH_FRACTION:.0%} of the ~{expected:g} GB/s the link should give.",
        recoverable_ps,
        exposed,
        {"large_copies": count, "large_copy_bytes": size, "achieved_gbps": achieved, "expected_link_gbps": expected},
        limit("achieved_gbps", achieved, round(LOW_BANDWIDTH_FRACTION * expected, 3), "below"),
        "upper bound: the exposed copy time at the link's practical bandwidth",
    )
    return finding
