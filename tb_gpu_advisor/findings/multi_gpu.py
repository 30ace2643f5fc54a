"""Multi-GPU rules: collectives not hidden behind compute, and GPUs unevenly loaded (stragglers)."""

import numpy as np

from tb_gpu_advisor.analysis.kernel_names import collective_dtype, is_nccl
from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import Evidence, Finding, grade, ladder, limit
from tb_gpu_advisor.findings.thresholds import (COLLECTIVES_HIGH_PCT, COLLECTIVES_MEDIUM_PCT, IMBALANCE_SPREAD_PCT,
                                                MODELED_HIGH_PCT, MODELED_LOW_PCT, MODELED_MEDIUM_PCT,
                                                STRAGGLER_SLOWDOWN_MIN)

_SIXTEEN_BIT = {"f16", "bf16", "f8e4m3", "f8e5m2"}
from tb_gpu_advisor.model import intervals


def _nccl_overlap(ctx):
    """(NCCL ps, NCCL ps during compute on the same GPU) summed over active GPUs, inside their windows."""
    total = overlapped = 0
    for gpu in ctx.active_gpus:
        activity = gpu.activity
        nccl = ctx.kernel_mask(gpu, is_nccl)
        compute = ctx.kernel_mask(gpu, lambda name: not is_nccl(name))
        nccl_spans = intervals.union(activity.start_ps[nccl], activity.end_ps[nccl])
        compute_spans = intervals.union(activity.start_ps[compute], activity.end_ps[compute])
        total += ctx.covered_ps(gpu, nccl_spans)
        overlapped += ctx.covered_ps(gpu, intervals.intersect(nccl_spans, compute_spans))
    return total, overlapped


def allreduce_exposed(ctx):
    """Collective kernels running while no GPU computes (XProf's "Device Collective Communication")."""
    if not ctx.has_gpu:
        return None
    exposed_ms = ctx.category_ms("collectives")
    share = ctx.share_pct(exposed_ms)
    severity = grade(share, COLLECTIVES_HIGH_PCT, COLLECTIVES_MEDIUM_PCT)
    if severity is None:
        return None
    nccl_ps, overlapped_ps = _nccl_overlap(ctx)
    overlap_pct = round(100.0 * overlapped_ps / nccl_ps, 2) if nccl_ps else None
    names = sorted({name for gpu in ctx.active_gpus for name in gpu.activity.names if is_nccl(name)})
    dtype = _allreduce_dtype(ctx)
    compute_16bit_pct = _compute_16bit_share(ctx)
    condition, note = _fp32_allreduce(ctx, dtype, compute_16bit_pct)
    return Finding(
        id="communication.allreduce_exposed", severity=severity,
        summary=f"Collectives run with no compute beside them {share:.1f}% of the step time; "
                f"{overlap_pct if overlap_pct is not None else 0:.0f}% of NCCL time overlaps compute.",
        evidence=Evidence({"collectives_exposed_pct": share, "collectives_exposed_ms": round(exposed_ms, 3),
                           "collectives_exposed_ms_per_step": ctx.per_step_ms(exposed_ms), "nccl_ms": ms(nccl_ps),
                           "nccl_overlap_with_compute_pct": overlap_pct,
                           "nccl_share_of_kernel_time_pct": ctx.report["balance"]["nccl_share_pct"],
                           "active_gpus": len(ctx.active_gpus), "allreduce_dtype": dtype,
                           "compute_16bit_share_pct": compute_16bit_pct},
                          ladder("collectives_exposed_pct", share, COLLECTIVES_HIGH_PCT, COLLECTIVES_MEDIUM_PCT),
                          {"kernels": names[:5]}),
        recoverable_ms=exposed_ms, window_ms=ctx.window_ms,
        speedup_basis="upper bound: collectives fully overlapped with compute", condition=condition, fix_note=note)


def _allreduce_dtype(ctx):
    """The element type the busiest collective kernels reduce in (kernel name, else op/HLO name), or None."""
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
    breakdown = ctx.summary["breakdown_pct"]
    compute = (breakdown["compute_16bit"] or 0.0) + (breakdown["compute_32bit"] or 0.0)
    return round(100.0 * (breakdown["compute_16bit"] or 0.0) / compute, 2) if compute else None


def _fp32_allreduce(ctx, dtype, compute_16bit_pct):
    """Mixed precision computes in 16 bits but keeps float32 gradients: the all-reduce moves 4 bytes a value."""
    if dtype != "f32" or compute_16bit_pct is None or compute_16bit_pct < 50.0:
        return None, ""
    return "fp32_allreduce", ""  # the catalog's variants say it, in each idiom


def gpu_imbalance(ctx):
    """Compute share (NCCL excluded: a GPU waiting for a straggler spins inside NCCL) differs across GPUs."""
    if len(ctx.active_gpus) < 2:
        return None
    compute = ctx.kernel_ps_by_gpu(lambda name: not is_nccl(name))
    nccl = ctx.kernel_ps_by_gpu(is_nccl)
    rows, gpus = [], []
    for gpu in ctx.active_gpus:
        window_ps = ctx.gpu_windows(gpu).total_ps
        if window_ps > 0:
            gpus.append(gpu)
            rows.append({"device": gpu.name, "compute_pct": round(100.0 * compute[gpu.ordinal] / window_ps, 2),
                         "compute_ms": ms(compute[gpu.ordinal]), "nccl_ms": ms(nccl[gpu.ordinal])})
    if len(rows) < 2:
        return None
    values = [row["compute_pct"] for row in rows]
    spread = round(max(values) - min(values), 2)
    if spread < IMBALANCE_SPREAD_PCT:
        return None
    mean = sum(values) / len(values)
    slowest = max(range(len(rows)), key=lambda i: (rows[i]["compute_ms"], -i))
    others = [i for i in range(len(rows)) if i != slowest]
    # Synchronous steps wait for the slowest GPU; without its excess they wait for the next slowest.
    recoverable = rows[slowest]["compute_ms"] - max(rows[i]["compute_ms"] for i in others)
    cause, cause_metrics, note = _straggler_cause(ctx, gpus[slowest], [gpus[i] for i in others])
    share = ctx.share_pct(recoverable)
    severity = grade(share, MODELED_HIGH_PCT, MODELED_MEDIUM_PCT, MODELED_LOW_PCT) or "low"
    least = min(rows, key=lambda row: row["compute_pct"])
    most = rows[slowest]
    return Finding(
        id="communication.gpu_imbalance", severity=severity,
        summary=f"GPU compute ranges from {least['compute_pct']:.1f}% ({least['device']}) to "
                f"{most['compute_pct']:.1f}% ({most['device']}) of the step; cause: {cause}.",
        evidence=Evidence({"cause": cause, "compute_pct_spread": spread, "compute_pct_mean": round(mean, 2),
                           "slowest_excess_ms": round(recoverable, 3), **cause_metrics, "per_gpu": rows,
                           "recoverable_pct": share},
                          limit("compute_pct_spread", spread, IMBALANCE_SPREAD_PCT),
                          {"devices": [least["device"], most["device"]]}),
        recoverable_ms=recoverable, window_ms=ctx.window_ms,
        speedup_basis="upper bound: the slowest GPU computing no longer than the next slowest, so the step "
                      "waits that much less", fix_note=note, condition=cause)


def _kernel_stats(ctx, gpu):
    """{kernel name: (count, total ps)} of a GPU's non-collective kernels starting inside its windows."""
    activity = gpu.activity
    mask = ctx.kernel_mask(gpu, lambda name: not is_nccl(name))
    windows = ctx.gpu_windows(gpu)
    index = np.flatnonzero(mask)
    if len(windows):
        starts = activity.start_ps[index]
        slot = np.searchsorted(windows.end_ps, starts, side="right")
        inside = slot < len(windows)
        inside[inside] = starts[inside] >= windows.start_ps[slot[inside]]
        index = index[inside]
    stats = {}
    for name_id, duration in zip(activity.name_id[index], activity.duration_ps[index]):
        count, total = stats.get(int(name_id), (0, 0))
        stats[int(name_id)] = (count + 1, total + int(duration))
    return {activity.names[key]: value for key, value in stats.items()}


def _straggler_cause(ctx, slow, others):
    """("hardware" | "workload", metrics, fix note): the same kernels slower on the straggler, or more work on it."""
    mine = _kernel_stats(ctx, slow)
    theirs = [_kernel_stats(ctx, gpu) for gpu in others]
    common = [name for name in mine if all(name in stats for stats in theirs)]
    slow_ps = sum(mine[name][1] for name in common)
    expected_ps = sum(mine[name][0] * np.mean([stats[name][1] / stats[name][0] for stats in theirs])
                      for name in common)
    slowdown = round(slow_ps / expected_ps, 3) if expected_ps > 0 else None
    extra_kernels = sum(count for count, _ in mine.values()) - \
        round(np.mean([sum(count for count, _ in stats.values()) for stats in theirs]))
    metrics = {"same_kernels_slowdown": slowdown, "extra_kernels_on_slowest": int(extra_kernels)}
    if slowdown is not None and slowdown >= STRAGGLER_SLOWDOWN_MIN:
        note = (f"Cause: hardware. {slow.name} runs the same kernels {slowdown:.2f}x slower than the other GPUs "
                f"({len(common)} kernel names in common).")
        return "hardware", metrics, note
    note = (f"Cause: workload. {slow.name} runs the same kernels at the same speed"
            + (f" ({slowdown:.2f}x)" if slowdown is not None else "")
            + f" but more of them ({extra_kernels:+d} kernels per profile than the others' mean): it is given more "
              "work. Give every replica the same work (see below).")
    return "workload", metrics, note


RULES = (allreduce_exposed, gpu_imbalance)
