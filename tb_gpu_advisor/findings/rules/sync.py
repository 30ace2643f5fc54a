"""Sync findings of PyTorch traces: the host blocking on the GPU inside the step."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Entry, register
from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import Evidence, Finding, grade, limit
from tb_gpu_advisor.findings.thresholds import MODELED_HIGH_PCT, MODELED_LOW_PCT, MODELED_MEDIUM_PCT
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.trace import CopyDirection
from tb_gpu_advisor.vocabulary import counted

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.findings.context import Context


ENTRIES = register(
    "sync",
    {
        "sync.host_syncs_in_step": Entry(
            category="sync",
            title="The host waits for the GPU inside the step",
            fix_summary="Remove torch.cuda.synchronize() and host reads (.item(), .cpu()) from the step.",
            fix="""\
Inside the step the host blocks until the GPU has finished everything queued (torch.cuda.synchronize(),
stream or event synchronizations; CUPTI records them as cuda_sync), so the GPU runs dry while Python
builds the next kernels. Besides explicit synchronize calls (often left from timing code: use
torch.cuda.Event(enable_timing=True) pairs and read them once at the end), reading a tensor's value on the
host does it too: loss.item(), tensor.cpu(), .tolist(), .numpy(), print(tensor), `if tensor:`, and
masked indexing that returns a data-dependent shape (x[x > 0], torch.nonzero). Keep values on the GPU and
read them rarely:

    running_loss += loss.detach()                  # stays on the GPU, no sync
    if step % 100 == 0:
        print(running_loss.item() / 100)           # one sync every 100 steps
        running_loss.zero_()

    torch.cuda.set_sync_debug_mode("warn")         # while debugging: warns at every synchronizing call

Copies to the host can be asynchronous: out = t.to("cpu", non_blocking=True) into pinned memory, then
read `out` after an event (torch.cuda.Event) or the next natural sync point.""",
            docs=(L.TORCH_SYNC_DEBUG, L.TORCH_TUNING, L.TORCH_PIN_MEMORY),
        ),
    },
)


# Host ops that read a device tensor's value (each one waits for the GPU).
_READ_OPS = ("aten::item", "aten::_local_scalar_dense")


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


def host_syncs_in_step(ctx: Context) -> Finding | None:
    """The host blocks on the GPU inside the steps (torch.cuda.synchronize, stream or event syncs) and the
    GPU then idles until new work arrives; idle time after device-to-host reads is left to
    transfer.d2h_sync_in_step, the host's input waits in it to the input findings, and the syncs a copy op issues
    itself (a pageable copy's) to the transfer findings."""
    if ctx.framework.name != "pytorch" or not ctx.has_gpu or not ctx.step_count:
        return None
    syncs = intervals.intersect(ctx.host.tagged.get("sync", intervals.EMPTY), ctx.window)
    # A copy from pageable memory synchronizes inside its own op: the copy's wait, which the transfer findings name.
    syncs = intervals.subtract(syncs, ctx.host.tagged.get("copy_op", intervals.EMPTY))
    if not len(syncs):
        return None
    gaps = intervals.subtract(_refill_gaps(syncs.end_ps, ctx.gpu_busy), _refill_gaps(_d2h_copy_ends(ctx), ctx.gpu_busy))
    # The idle the host spends waiting for its next batch is the input findings' time, not the sync's.
    gaps = intervals.subtract(gaps, intervals.union_all(ctx.host.input_waits, ctx.input_time))
    refill_ms = ms(ctx.in_window_ps(gaps))
    share = ctx.share_pct(refill_ms)
    severity = grade(share, MODELED_HIGH_PCT, MODELED_MEDIUM_PCT, MODELED_LOW_PCT)
    if severity is None:
        return None
    reads = ctx.host_ops(lambda name: name in _READ_OPS)
    read_count = sum(count for _, count, _ in reads)
    return Finding(
        id="sync.host_syncs_in_step",
        severity=severity,
        summary=(
            f"The host waited for the GPU {counted(len(syncs) / ctx.step_count, 'time')} per step; after those "
            f"waits the GPU idled {ctx.time_text(refill_ms)} ({share:.1f}% of the step time) until new work "
            f"arrived (device-to-host reads aside)."
        ),
        evidence=Evidence(
            {
                "syncs_per_step": round(len(syncs) / ctx.step_count, 2),
                "sync_ms": ms(syncs.total_ps),
                "idle_after_sync_ms": refill_ms,
                "idle_after_sync_pct": share,
                "item_reads": read_count,
            },
            limit("idle_after_sync_pct", share, MODELED_LOW_PCT),
            {
                "host_ops": [{"name": n, "count": c, "total_ms": ms(t)} for n, c, t in reads[:5]],
                "steps": ctx.steps_overlapping(syncs),
            },
        ),
        recoverable_ms=refill_ms,
        window_ms=ctx.window_ms,
        speedup_basis="upper bound: the GPU idle time that follows the host's waits",
    )


RULES = (host_syncs_in_step,)
