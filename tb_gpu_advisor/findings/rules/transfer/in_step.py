"""Copies on the step's path: device-to-host syncs, wide input copies, input copied inside the step."""

from __future__ import annotations

from dataclasses import replace
import numpy as np
from tb_gpu_advisor.analysis.input_dtypes import eight_bit_source_events
from tb_gpu_advisor.analysis.breakdown import CAUSE_CATEGORY
from tb_gpu_advisor.analysis.idle_attribution import HOST_CAUSES
from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import Evidence, Finding, estimated, grade, ladder, limit
from tb_gpu_advisor.findings.thresholds import (
    INPUT_HIGH_PCT,
    INPUT_MEDIUM_PCT,
    MANY_INPUT_COPIES_PER_STEP,
    SMALL_COPY_BYTES,
    SYNC_GAP_MIN_US,
)
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.trace import CopyDirection
from tb_gpu_advisor.whatif.estimate import model as whatif_model
from tb_gpu_advisor.report.units import size_bytes
from tb_gpu_advisor.findings.rules.transfer.copies import _copies, _copy_finding, _summarize

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.findings.context import Context
    from tb_gpu_advisor.model.intervals import Intervals


def _count_within(ends_ps: np.ndarray, windows: Intervals) -> int:
    """How many of the instants `ends_ps` fall inside `windows` (all of them without windows)."""
    if not len(windows):
        return len(ends_ps)
    inside = np.searchsorted(windows.start_ps, ends_ps, side="right") - 1
    valid = inside >= 0
    return int(np.sum(valid & (ends_ps <= windows.end_ps[np.maximum(inside, 0)])))


def _gaps_after(gpu, busy, mask, windows):
    """Intervals from the end of each selected copy that left the GPU idle (it ended the GPU's busy block: no
    other stream still ran) to the GPU's next activity (`busy`), clipped to `windows`."""
    ends = gpu.activity.end_ps[mask]
    block = np.minimum(np.searchsorted(busy.end_ps, ends, side="left"), max(len(busy) - 1, 0))
    last = (busy.end_ps[block] == ends) if len(busy) else np.zeros(len(ends), dtype=bool)
    following = block + 1
    has_next = last & (following < len(busy))
    gaps = intervals.union(ends[has_next], busy.start_ps[following[has_next]])
    return intervals.intersect(gaps, windows) if len(windows) else gaps


def _host_late(ctx, gpu):
    """The instants `gpu` idled waiting for the host (analysis.idle_attribution HOST_CAUSES); all of its time when
    the attribution does not cover it."""
    idle = ctx.analysis.idle.by_ordinal(gpu.ordinal) if ctx.analysis.idle is not None else None
    if idle is None:
        return intervals.union([-(2**62)], [2**62])
    return intervals.union_all(*(idle.spans[cause] for cause in HOST_CAUSES))


def d2h_sync_in_step(ctx: Context) -> Finding | None:
    """Device-to-host copies inside steps after which the GPU idles (the host waited for the value)."""
    if not ctx.step_count:
        return None
    worst = (0, 0, None, intervals.EMPTY)
    for gpu, mask in _copies(ctx, lambda c: True, directions=(CopyDirection.D2H,)):
        windows = ctx.gpu_windows(gpu)
        gaps = _gaps_after(gpu, ctx.busy_by_gpu[gpu.ordinal], mask, windows)
        gaps = intervals.subtract(intervals.subtract(gaps, ctx.host.input_waits), ctx.explained_host_time)
        # Only the host's lateness (analysis.idle_attribution): where the next work was queued before the gap,
        # the GPU waited on the device side, not for the host that read the value.
        gaps = intervals.intersect(gaps, _host_late(ctx, gpu))
        long = (gaps.end_ps - gaps.start_ps) > SYNC_GAP_MIN_US * 1e6
        gaps = intervals.union(gaps.start_ps[long], gaps.end_ps[long])
        if gaps.total_ps > worst[0]:
            worst = (gaps.total_ps, _count_within(gpu.activity.end_ps[mask], windows), gpu.name, gaps)
    gap_ps, d2h_count, device, gaps = worst
    if gap_ps <= 0:
        return None
    syncs = ctx.host.op_totals.get("cuStreamSynchronize", (0, 0))
    reads = ctx.count_text(d2h_count, "device-to-host copy", "device-to-host copies")
    # What the host did in the idle: still blocked on the read, or (once it had the value) dispatching the next
    # call; the read is what serializes that dispatch with the GPU, but the idle is the dispatch's time.
    blocked_ps = intervals.intersect(gaps, ctx.host_waits).total_ps
    dispatch_ps = gap_ps - blocked_ps
    dispatching = dispatch_ps > blocked_ps
    if dispatching:
        summary = (
            f"After its device-to-host reads ({reads}) the GPU idles {ms(gap_ps):.2f} ms in total "
            f"({ctx.time_text(ms(gap_ps))}): {100.0 * dispatch_ps / gap_ps:.0f}% of it is the host's work on the "
            f"next call once it has the value (dispatch, Python: {ctx.time_text(ms(dispatch_ps))}), not the copy."
        )
    else:
        summary = (
            f"After its device-to-host copies ({reads}) the GPU idles {ms(gap_ps):.2f} ms in total "
            f"({ctx.time_text(ms(gap_ps))}) until the host sends more work."
        )
    finding = _copy_finding(
        ctx,
        "transfer.d2h_sync_in_step",
        summary,
        gap_ps,
        gaps,
        {
            "d2h_copies": d2h_count,
            "d2h_copies_per_step": round(d2h_count / ctx.step_count, 1),
            "stalls_after_d2h": len(gaps),
            "stall_ms": ms(gap_ps),
            "stall_host_blocked_ms": ms(blocked_ps),
            "stall_host_dispatch_ms": ms(dispatch_ps),
            "host_stream_synchronize_calls": syncs[0],
            "host_stream_synchronize_ms": ms(syncs[1]),
            "stall_pct_by_category": _stall_by_category(ctx, gaps),
        },
        limit("stalls_after_d2h", len(gaps), 0, gap_min_us=SYNC_GAP_MIN_US),
        "upper bound: the step time without the GPU idle that follows device-to-host reads",
    )
    if finding is None or not dispatching:
        return finding
    return replace(finding, title=DISPATCH_TITLE, fix_note=_dispatch_note(ctx, ms(dispatch_ps)))


def _stall_by_category(ctx, gaps):
    """{breakdown category: % of the step} of the idle after the reads, by the Time line's categories (the idle
    attribution's host causes), largest first: which of the Time line's shares this idle is."""
    shares = {}
    for cause in HOST_CAUSES:
        inside_ms = ctx.idle_cause_ms(cause) - ctx.idle_cause_ms(cause, gaps)
        category = CAUSE_CATEGORY[cause]
        shares[category] = shares.get(category, 0.0) + inside_ms
    return {k: ctx.share_pct(v) for k, v in sorted(shares.items(), key=lambda item: -item[1]) if ctx.share_pct(v) > 0}


# The title where the idle after the reads is mostly the host's next dispatch (the verdict quotes it).
DISPATCH_TITLE = "Reading results back each step serializes the host's dispatch with the GPU"


def _dispatch_note(ctx, dispatch_ms):
    """Why reading rarely still helps when the idle after a read is the host's dispatch of the next call."""
    overlap = ctx.say(
        "TensorFlow's asynchronous execution",
        "JAX's asynchronous dispatch",
        "CUDA's asynchronous kernel launches",
    )
    return (
        f"The idle after each read is the host preparing and dispatching the next call "
        f"({ctx.time_text(dispatch_ms)}), not the copy: the host only starts it once the value arrives. Read "
        f"rarely and {overlap} prepares the next call while the GPU still runs this one; the step then takes "
        "about the longer of the host's dispatch and the GPU's work, so past that only less host work per call "
        "helps."
    )


def _spans_exposed_ps(ctx, spans):
    exposed = ctx.exposed(intervals.union([a for a, _ in spans], [b for _, b in spans]))
    return ctx.in_window_ps(exposed), exposed


def wide_input_copies(ctx: Context) -> Finding | None:
    """Host-to-device copies whose size is an image-shaped 32-bit input of a compiled program (XLA HLO):
    8-bit pixels widened on the host (analysis.input_dtypes). Model: copy time scales with bytes, so the exposed
    copy time shrinks by 3/4."""
    inputs = ctx.analysis.wide_inputs
    if not ctx.has_gpu or not inputs:
        return None
    spans = [span for item in inputs for span in item.spans]
    exposed_ps, exposed = _spans_exposed_ps(ctx, spans)
    saved_ps = exposed_ps * inputs[0].saved_fraction
    sources = eight_bit_source_events(ctx.host.op_totals)
    certainty = "high" if sources else "medium"
    top = inputs[0]
    shape = "x".join(str(d) for d in top.shape)
    note = (
        f"{top.parameter} of {top.module} is {top.dtype}[{shape}] ({size_bytes(top.bytes)}), and "
        f"{top.copies} host-to-device copies have exactly that size. "
    )
    note += (
        f"The host shows 8-bit image work ({sources[0][:60]}), so the data is narrower at the source."
        if sources
        else "Image pixels are 8-bit at the source in almost every dataset; check what your "
        "loader reads before acting on this."
    )
    finding = _copy_finding(
        ctx,
        "transfer.wide_input_copies",
        f"{sum(i.copies for i in inputs):,} image batches cross to the GPU as {top.dtype} ({top.dtype}[{shape}], "
        f"{size_bytes(top.bytes)} each); uint8 would be a quarter of the bytes.",
        saved_ps,
        exposed,
        {
            "wide_copies": sum(i.copies for i in inputs),
            "wide_copy_bytes": sum(i.bytes * i.copies for i in inputs),
            "wide_copy_ms": ms(sum(i.copy_ps for i in inputs)),
            "wide_copy_exposed_ms": ms(exposed_ps),
            "certainty": certainty,
        },
        limit("input_dtype_bits", 32, 8),
        "model: the exposed copy time scales with the bytes, a quarter of them in uint8",
    )
    if finding is None:
        return None
    metrics = dict(finding.evidence.metrics)
    metrics["saved_ms"], metrics["saved_pct"] = metrics.pop("exposed_ms"), metrics.pop("exposed_pct")
    finding = replace(
        finding,
        fix_note=note,
        evidence=replace(
            finding.evidence,
            metrics=metrics,
            pointers={
                **finding.evidence.pointers,
                "inputs": [
                    {
                        "parameter": i.parameter,
                        "program": i.module,
                        "dtype": i.dtype,
                        "shape": list(i.shape),
                        "bytes": i.bytes,
                        "copies": i.copies,
                    }
                    for i in inputs[:5]
                ],
                "host_ops": sources[:5],
            },
        ),
    )
    return estimated(finding, whatif_model(ctx.window_ms, ctx.window_ms - ms(saved_ps), finding.speedup_basis))


def input_copy_in_step(ctx: Context) -> Finding | None:
    """Host-to-device copies of 64 KiB or more, asynchronous and not pageable (those rules cover the rest),
    running inside the steps while no GPU computes: nothing copied the batch ahead. The GPU waits for its input,
    so the input ladder grades it (no low level: restructuring the feed for under 5% is not advised)."""
    if not ctx.step_count:
        return None
    selected = _copies(
        ctx,
        lambda c: c.size_bytes >= SMALL_COPY_BYTES and c.is_async is not False and not c.has_pageable_side,
        directions=(CopyDirection.H2D,),
    )
    count, size, busy, exposed_ps, exposed = _summarize(ctx, selected)
    share = ctx.share_pct(ms(exposed_ps))
    severity = grade(share, INPUT_HIGH_PCT, INPUT_MEDIUM_PCT)
    if not count or severity is None:
        return None
    per_step = round(count / ctx.step_count, 1)
    # From pinned memory already (PyTorch's pin_memory): the fix left is when the copy is issued, not the memory.
    pinned = all(
        gpu.activity.copies[i].src_kind == "pinned" for gpu, mask in selected for i in gpu.activity.copy_id[mask]
    )
    note = (
        f"Each step sends {per_step:g} separate copies: stacked into one batched copy per input they would "
        "also pay the per-copy cost once."
        if per_step >= MANY_INPUT_COPIES_PER_STEP
        else ""
    )
    return Finding(
        id="transfer.input_copy_in_step",
        severity=severity,
        summary=f"The GPU waits {ctx.time_text(ms(exposed_ps))} ({share:.1f}% {ctx.of_the_step}) for "
        f"{ctx.count_text(count, 'host-to-device copy', 'host-to-device copies')} "
        f"({size_bytes(size / count)} on average).",
        evidence=Evidence(
            {
                "input_copies": count,
                "input_copies_per_step": per_step,
                "input_copy_bytes": size,
                "input_copy_ms": ms(busy),
                "exposed_ms": ms(exposed_ps),
                "exposed_pct": share,
            },
            ladder("exposed_pct", share, INPUT_HIGH_PCT, INPUT_MEDIUM_PCT),
            {"time_ranges_ms": ctx.longest_ranges_ms(exposed), "steps": ctx.steps_overlapping(exposed)},
        ),
        recoverable_ms=ms(exposed_ps),
        window_ms=ctx.window_ms,
        fix_note=note,
        condition="pinned" if pinned else None,
        speedup_basis="upper bound: the copies overlapped with the previous step's compute, none of them exposed",
    )
