"""Collective time the step waits for, not overlapped with compute (communication.allreduce_exposed)."""

from __future__ import annotations

import numpy as np
from tb_gpu_advisor.analysis.breakdown import COMPUTE_CATEGORIES
from tb_gpu_advisor.analysis.collective_waits import CollectiveWaits, collective_waits
from tb_gpu_advisor.analysis.collective_calls import collective_kinds, exposed_communication, kernel_calls_in_windows
from tb_gpu_advisor.analysis.kernel_names import collective_dtype, is_nccl
from tb_gpu_advisor.analysis.rounding import pct
from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import Evidence, Finding, estimated, grade, ladder
from tb_gpu_advisor.findings.thresholds import BACKWARD_SHARE_OF_COMPUTE, COLLECTIVES_HIGH_PCT, COLLECTIVES_MEDIUM_PCT
from tb_gpu_advisor.whatif.communication import overlap_collectives

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.analysis.collective_calls import CollectiveKind
    from tb_gpu_advisor.analysis.collective_calls import ExposedCommunication
    from tb_gpu_advisor.findings.context import Context


def exposed_collectives_ms(ctx: Context) -> tuple[float, ExposedCommunication]:
    """(exposed ms, ExposedCommunication): each GPU's collectives outside its own compute, on the GPU with the
    least of it (what the others spend beyond it is waiting for that GPU: gpu_imbalance's time), never less than
    the breakdown's `collectives`, which counts only time no GPU computes: with several GPUs in one profile,
    another GPU's compute does not hide this GPU's communication."""
    exposure = _exposure(ctx)
    return max(ctx.category_ms("collectives"), ms(exposure.least_exposed_ps)), exposure


def _exposure(ctx):
    """ExposedCommunication of the active GPUs: each GPU's collective kernels against its own compute."""
    return exposed_communication(
        ctx.active_gpus,
        lambda gpu: ctx.kernel_mask(gpu, is_nccl),
        lambda gpu: ctx.kernel_mask(gpu, lambda name: not is_nccl(name)),
        ctx.gpu_windows,
    )


def collective_waits_of(ctx: Context) -> CollectiveWaits:
    """analysis.collective_waits of the active GPUs' collective kernels that start inside their windows."""
    spans = {}
    for gpu in ctx.active_gpus:
        activity, windows = gpu.activity, ctx.gpu_windows(gpu)
        index = np.flatnonzero(ctx.kernel_mask(gpu, is_nccl))
        starts = activity.start_ps[index]
        slot = np.searchsorted(windows.end_ps, starts, side="right")
        inside = slot < len(windows)
        inside[inside] = starts[inside] >= windows.start_ps[slot[inside]]
        index = index[inside][np.argsort(starts[inside], kind="stable")]
        spans[gpu.ordinal] = (activity.start_ps[index], activity.end_ps[index])
    return collective_waits(spans)


def overlap_compute_ms(ctx: Context, waits: CollectiveWaits) -> tuple[float, str]:
    """(ms, whose) of the compute that could hide collectives: the busiest GPU's, but where the other GPUs wait
    in the collectives for a late one (WAIT_SHARE_MIN), the busiest of the others': the late GPU's excess is the
    straggler finding's to remove, and once removed it hides nothing (counting it in both would count it twice)."""
    compute = ctx.kernel_ps_by_gpu(lambda name: not is_nccl(name))
    late = waits.last_ordinal if late_gpu_waited_for(waits) else None
    if late is None:
        return ms(max(compute.values(), default=0)), "the busiest GPU"
    name = next(ctx.device_text(gpu.name) for gpu in ctx.active_gpus if gpu.ordinal == late)
    return (
        ms(max((ps for ordinal, ps in compute.items() if ordinal != late), default=0)),
        f"the busiest GPU but {name}, which the others wait for",
    )


def late_gpu_waited_for(waits: CollectiveWaits) -> tuple:
    """The GPUs (ordinals) that wait at least WAIT_SHARE_MIN of their collective time for the last-arriving one."""
    return tuple(o for o in waits.waiting_ordinals(WAIT_SHARE_MIN) if o != waits.last_ordinal)


# From this share of a GPU's collective kernel time spent waiting for the last GPU to arrive, the wait is a
# pattern (a late peer), not the jitter of GPUs entering a collective a few microseconds apart.
WAIT_SHARE_MIN = 0.05


def kinds_of(ctx: Context) -> tuple[CollectiveKind, ...]:
    """CollectiveKind rows of the active GPUs' collective kernels inside their windows."""
    active = {gpu.ordinal: gpu for gpu in ctx.active_gpus}
    calls = kernel_calls_in_windows(
        ctx.analysis.collectives, lambda ordinal: ctx.gpu_windows(active[ordinal]) if ordinal in active else None
    )
    return collective_kinds(calls, ctx.step_count)


def allreduce_exposed(ctx: Context) -> Finding | None:
    """Collective kernels running while no GPU computes (XProf's "Device Collective Communication")."""
    if not ctx.has_gpu:
        return None
    exposed_ms, exposure = exposed_collectives_ms(ctx)
    share = ctx.share_pct(exposed_ms)
    severity = grade(share, COLLECTIVES_HIGH_PCT, COLLECTIVES_MEDIUM_PCT)
    if severity is None:
        return None
    nccl_ps = sum(exposure.collective_ps.values())
    overlap_pct = exposure.overlap_pct
    names = sorted({name for gpu in ctx.active_gpus for name in gpu.activity.names if is_nccl(name)})
    rows = kinds_of(ctx)
    dtype = _allreduce_dtype(ctx, rows)
    compute_16bit_pct = _compute_16bit_share(ctx)
    condition, note = _fp32_allreduce(ctx, dtype, compute_16bit_pct)
    kinds = _collective_time_by_kind(ctx, rows)
    allreduce_pct = round(100.0 * kinds.get("allreduce", 0) / sum(kinds.values()), 2) if sum(kinds.values()) else None
    title = ""
    if allreduce_pct is not None and allreduce_pct < ALLREDUCE_DOMINANT_PCT:
        top = max(kinds, key=kinds.get)
        condition = "not_allreduce"
        title = f"{_KIND_TITLES.get(top, 'Collectives are')} not hidden behind compute"
        note = (
            f"Most collective time here is {_KIND_WORDS.get(top, top)} ({100.0 * kinds[top] / sum(kinds.values()):.0f}%), "
            f"not gradient all-reduce ({allreduce_pct:.0f}%): advice for data-parallel all-reduce does not "
            "apply."
        )
    allreduce = next((row for row in rows if row.collective == "allreduce"), None)
    if (
        condition is None
        and allreduce is not None
        and (allreduce.calls_per_step or 0) >= 2
        and (overlap_pct or 0) >= ALREADY_OVERLAPPED_PCT
    ):
        condition = "overlapped_already"
        note = (
            f"{allreduce.calls_per_step:g} all-reduces per step (packed or bucketed gradients) and "
            f"{overlap_pct:.0f}% of NCCL time beside compute: overlap is in use already."
        )
    finding = Finding(
        id="communication.allreduce_exposed",
        severity=severity,
        summary=f"Collectives run with no compute beside them {share:.1f}% of the step time; "
        f"{overlap_pct if overlap_pct is not None else 0:.0f}% of NCCL time overlaps compute.",
        evidence=Evidence(
            {
                "collectives_exposed_pct": share,
                "collectives_exposed_ms": round(exposed_ms, 3),
                "collectives_exposed_ms_per_step": ctx.per_step_ms(exposed_ms),
                "nccl_ms": ms(nccl_ps),
                "nccl_overlap_with_compute_pct": overlap_pct,
                "nccl_share_of_kernel_time_pct": pct(ctx.analysis.balance.nccl_share_pct),
                "active_gpus": len(ctx.active_gpus),
                "allreduce_dtype": dtype,
                "allreduce_share_of_collective_pct": allreduce_pct,
                "collective_ms_by_kind": {kind: ms(ps) for kind, ps in sorted(kinds.items())},
                "compute_16bit_share_pct": compute_16bit_pct,
                "collective_kinds_named_from": sorted({src for row in rows for src in row.named_from}),
                "issued_by": {row.collective: list(row.issued_by) for row in rows if row.issued_by},
            },
            ladder("collectives_exposed_pct", share, COLLECTIVES_HIGH_PCT, COLLECTIVES_MEDIUM_PCT),
            {"kernels": names[:5]},
        ),
        recoverable_ms=exposed_ms,
        window_ms=ctx.window_ms,
        speedup_basis="upper bound: collectives fully overlapped with compute",
        condition=condition,
        fix_note=note,
        title=title,
    )
    compute_ms, whose = overlap_compute_ms(ctx, collective_waits_of(ctx))
    return estimated(
        finding,
        overlap_collectives(
            ctx.window_ms, exposed_ms, compute_ms, ms(exposure.mean_overlapped_ps), BACKWARD_SHARE_OF_COMPUTE, whose
        ),
    )


ALLREDUCE_DOMINANT_PCT = 50.0  # below this share of collective time, all-reduce advice does not fit the job
# From this share of NCCL time beside compute, collectives are being overlapped (a schedule, not chance).
ALREADY_OVERLAPPED_PCT = 25.0
_KIND_WORDS = {
    "sendrecv": "point-to-point send/recv",
    "alltoall": "all-to-all",
    "allgather": "all-gather",
    "reducescatter": "reduce-scatter",
    "broadcast": "broadcast",
    "reduce": "reduce",
}

# The finding's title when one collective kind other than all-reduce takes most of the collective time.
_KIND_TITLES = {
    "sendrecv": "Point-to-point send/recv is",
    "alltoall": "All-to-all exchanges are",
    "allgather": "All-gather is",
    "reducescatter": "Reduce-scatter is",
    "broadcast": "Broadcast is",
    "reduce": "Reduce is",
}


def _collective_time_by_kind(ctx, rows):
    """{collective kind: ps} of the active GPUs' collective kernels, named from the host op (or HLO/TF op) that
    issued them, the kernel's name only where nothing else tells; kernels whose kind nothing tells left out."""
    found = {}
    for row in rows:
        if row.named_from:
            found[row.collective] = found.get(row.collective, 0) + int(round(row.total_ms * 1e9))
    return found


def _allreduce_dtype(ctx, rows):
    """The element type the busiest collectives reduce in: recorded with the call (PyTorch's args, the HLO, the
    TF op's shapes), else from the kernel name or op/HLO name; None when nothing says."""
    for row in rows:
        if row.collective in ("allreduce", "reducescatter") and len(row.dtypes) == 1:
            return row.dtypes[0]
    by_dtype = {}
    for gpu in ctx.active_gpus:
        activity = gpu.activity
        mask = ctx.kernel_mask(gpu, is_nccl)
        for index in np.flatnonzero(mask):
            op = activity.op_names[activity.op_id[index]] if activity.op_id[index] >= 0 else None
            dtype = collective_dtype(activity.names[activity.name_id[index]], op)
            if dtype is not None:
                by_dtype[dtype] = by_dtype.get(dtype, 0) + int(activity.duration_ps[index])
    return max(by_dtype, key=by_dtype.get) if by_dtype else None


def _compute_16bit_share(ctx):
    breakdown = ctx.analysis.breakdown_pct
    compute = sum(breakdown.get(key) or 0.0 for key in COMPUTE_CATEGORIES)
    return round(100.0 * (breakdown["compute_16bit"] or 0.0) / compute, 2) if compute else None


def _fp32_allreduce(ctx, dtype, compute_16bit_pct):
    """Mixed precision computes in 16 bits but keeps float32 gradients: the all-reduce moves 4 bytes a value."""
    if dtype != "f32" or compute_16bit_pct is None or compute_16bit_pct < 50.0:
        return None, ""
    return "fp32_allreduce", ""  # the catalog's variants say it, in each idiom
