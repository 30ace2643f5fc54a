"""PyTorch-only rules: host synchronizations inside the step, and zero_grad filling gradients with zeros."""

import numpy as np

from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import Evidence, Finding, grade, limit
from tb_gpu_advisor.findings.thresholds import MODELED_HIGH_PCT, MODELED_LOW_PCT, MODELED_MEDIUM_PCT
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.trace import CopyDirection

# Host ops that read a device tensor's value (each one waits for the GPU).
_READ_OPS = ("aten::item", "aten::_local_scalar_dense")


def is_pytorch(ctx):
    return ctx.model.environment.get("framework") == "pytorch"


def _refill_gaps(ends, gpu_busy):
    """The GPU idle spans from each of `ends` (sorted) to the GPU's next work: the queue a wait drained.

    An end that falls while the GPU is still busy costs nothing.
    """
    if not len(ends) or not len(gpu_busy):
        return intervals.EMPTY
    sync_ends = ends
    index = np.searchsorted(gpu_busy.start_ps, sync_ends, side="left")
    inside = (index > 0) & (gpu_busy.end_ps[np.maximum(index - 1, 0)] > sync_ends)
    has_next = index < len(gpu_busy)
    gap_end = np.where(has_next, gpu_busy.start_ps[np.minimum(index, len(gpu_busy) - 1)], sync_ends)
    keep = ~inside & has_next
    return intervals.union(sync_ends[keep], gap_end[keep])


def _d2h_copy_ends(ctx):
    """End times of device-to-host copies: the waits transfer.d2h_sync_in_step already accounts for."""
    ends = [gpu.activity.end_ps[gpu.activity.copy_direction == int(CopyDirection.D2H)] for gpu in ctx.active_gpus]
    return np.sort(np.concatenate(ends)) if ends else np.zeros(0, np.int64)


def host_syncs_in_step(ctx):
    """The host blocks on the GPU inside the steps (torch.cuda.synchronize, stream or event syncs) and the
    GPU then idles until new work arrives; idle time after device-to-host reads is left to
    transfer.d2h_sync_in_step."""
    if not is_pytorch(ctx) or not ctx.has_gpu or not ctx.step_count:
        return None
    syncs = intervals.intersect(ctx.host.tagged.get("sync", intervals.EMPTY), ctx.window)
    if not len(syncs):
        return None
    gaps = intervals.subtract(_refill_gaps(syncs.end_ps, ctx.gpu_busy),
                              _refill_gaps(_d2h_copy_ends(ctx), ctx.gpu_busy))
    refill_ms = ms(ctx.in_window_ps(gaps))
    share = ctx.share_pct(refill_ms)
    severity = grade(share, MODELED_HIGH_PCT, MODELED_MEDIUM_PCT, MODELED_LOW_PCT)
    if severity is None:
        return None
    reads = ctx.host_ops(lambda name: name in _READ_OPS)
    read_count = sum(count for _, count, _ in reads)
    return Finding(
        id="sync.host_syncs_in_step", severity=severity,
        summary=(f"The host waited for the GPU {len(syncs) / ctx.step_count:,.1f} times per step; after those "
                 f"waits the GPU idled {ctx.time_text(refill_ms)} ({share:.1f}% of the steps) until new work "
                 f"arrived (device-to-host reads aside)."),
        evidence=Evidence({"syncs_per_step": round(len(syncs) / ctx.step_count, 2),
                           "sync_ms": ms(syncs.total_ps), "idle_after_sync_ms": refill_ms,
                           "idle_after_sync_pct": share, "item_reads": read_count},
                          limit("idle_after_sync_pct", share, MODELED_LOW_PCT),
                          {"host_ops": [{"name": n, "count": c, "total_ms": ms(t)} for n, c, t in reads[:5]],
                           "steps": ctx.steps_overlapping(syncs)}),
        recoverable_ms=refill_ms, window_ms=ctx.window_ms,
        speedup_basis="upper bound: the GPU idle time that follows the host's waits")


def zero_grad_fills(ctx):
    """optimizer.zero_grad() without set_to_none: aten::zero_ on each gradient every step."""
    if not is_pytorch(ctx):
        return None
    fills = ctx.host.tagged.get("zero_grad_fill")
    if fills is None or not len(fills):
        return None
    fill_ms = ms(ctx.in_window_ps(fills))
    share = ctx.share_pct(fill_ms)
    if fill_ms <= 0:
        return None
    return Finding(
        id="memory.zero_grad_fills", severity="low",
        summary=f"optimizer.zero_grad() zeroed the gradients for {ctx.time_text(fill_ms)} of host time "
                f"({share:.1f}% of the steps) instead of setting them to None.",
        evidence=Evidence({"zero_grad_fill_ms": fill_ms, "zero_grad_fill_pct": share},
                          limit("zero_grad_fill_ms", fill_ms, 0.0)),
        recoverable_ms=fill_ms, window_ms=ctx.window_ms,
        speedup_basis="upper bound: the host time of the zero fills inside zero_grad")


RULES = (host_syncs_in_step, zero_grad_fills)
