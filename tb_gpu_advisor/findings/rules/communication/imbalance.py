"""GPUs of one job doing unequal work, the others waiting at the collective (communication.gpu_imbalance)."""

from __future__ import annotations

import numpy as np
from tb_gpu_advisor.analysis.kernel_names import is_nccl, is_runtime_copy
from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import Evidence, Finding, estimated, grade, limit
from tb_gpu_advisor.findings.thresholds import (
    IMBALANCE_SPREAD_PCT,
    MODELED_HIGH_PCT,
    MODELED_LOW_PCT,
    MODELED_MEDIUM_PCT,
    STRAGGLER_SLOWDOWN_MIN,
)
from tb_gpu_advisor.findings.rules.communication.exposed import collective_waits_of, late_gpu_waited_for
from tb_gpu_advisor.whatif.communication import straggler
from tb_gpu_advisor.vocabulary import TIMES


def gpu_imbalance(ctx):
    """Compute share (NCCL excluded: a GPU waiting for a straggler spins inside NCCL) differs across GPUs."""
    if len(ctx.active_gpus) < 2:
        return None
    compute = ctx.kernel_ps_by_gpu(_is_compute)
    nccl = ctx.kernel_ps_by_gpu(is_nccl)
    rows, gpus = [], []
    for gpu in ctx.active_gpus:
        window_ps = ctx.gpu_windows(gpu).total_ps
        # Only GPUs that compute can straggle: one that only copies (or only communicates) takes no part in
        # the step's compute, so its low compute share is not imbalance.
        if window_ps > 0 and compute[gpu.ordinal] > 0:
            gpus.append(gpu)
            rows.append(
                {
                    "device": gpu.name,
                    "compute_pct": round(100.0 * compute[gpu.ordinal] / window_ps, 2),
                    "compute_ms": ms(compute[gpu.ordinal]),
                    "nccl_ms": ms(nccl[gpu.ordinal]),
                }
            )
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
    condition = f"{cause}_rocm" if cause == "hardware" and ctx.on_amd else cause
    share = ctx.share_pct(recoverable)
    severity = grade(share, MODELED_HIGH_PCT, MODELED_MEDIUM_PCT, MODELED_LOW_PCT) or "low"
    least = min(rows, key=lambda row: row["compute_pct"])
    most = rows[slowest]
    finding = Finding(
        id="communication.gpu_imbalance",
        severity=severity,
        summary=f"{most['device']} is the straggler: it computes {most['compute_pct']:.1f}% of the step, the "
        f"least busy GPU {least['compute_pct']:.1f}% ({least['device']}); cause: {cause}."
        + _wait_text(ctx, gpus[slowest]),
        evidence=Evidence(
            {
                "cause": cause,
                "compute_pct_spread": spread,
                "compute_pct_mean": round(mean, 2),
                "slowest_excess_ms": round(recoverable, 3),
                **cause_metrics,
                "per_gpu": rows,
                "recoverable_pct": share,
            },
            limit("compute_pct_spread", spread, IMBALANCE_SPREAD_PCT),
            {"devices": [least["device"], most["device"]], "straggler": most["device"]},
        ),
        recoverable_ms=recoverable,
        window_ms=ctx.window_ms,
        speedup_basis="upper bound: the slowest GPU computing no longer than the next slowest, so the step "
        "waits that much less",
        fix_note=note,
        condition=condition,
    )
    return estimated(finding, straggler(ctx.window_ms, recoverable))


def _wait_text(ctx, slow):
    """Where the other GPUs wait in the collectives for the straggler: how long, as a wait (not communication)."""
    waits = collective_waits_of(ctx)
    waiting = late_gpu_waited_for(waits)
    if waits.last_ordinal != slow.ordinal or not waiting:
        return ""
    wait_ms = ms(sum(waits.wait_ps[o] for o in waiting) / len(waiting))
    return (
        f" The other GPUs spend {ctx.time_text(wait_ms)} inside the collectives waiting for it: NCCL kernel time "
        "that is a wait, not communication."
    )


def _is_compute(name):
    """A compute kernel: neither a collective nor the runtime's own copy/fill kernel."""
    return not is_nccl(name) and not is_runtime_copy(name)


def _kernel_stats(ctx, gpu):
    """{kernel name: (count, total ps)} of a GPU's non-collective kernels starting inside its windows."""
    activity = gpu.activity
    mask = ctx.kernel_mask(gpu, _is_compute)
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
    expected_ps = sum(mine[name][0] * np.mean([stats[name][1] / stats[name][0] for stats in theirs]) for name in common)
    slowdown = round(slow_ps / expected_ps, 3) if expected_ps > 0 else None
    extra_kernels = sum(count for count, _ in mine.values()) - round(
        np.mean([sum(count for count, _ in stats.values()) for stats in theirs])
    )
    metrics = {"same_kernels_slowdown": slowdown, "extra_kernels_on_slowest": int(extra_kernels)}
    if slowdown is not None and slowdown >= STRAGGLER_SLOWDOWN_MIN:
        note = (
            f"Cause: hardware. {slow.name} runs the same kernels {slowdown:.2f}{TIMES} slower than the other GPUs "
            f"({len(common)} kernel names in common)."
        )
        return "hardware", metrics, note
    note = (
        f"Cause: workload. {slow.name} runs the same kernels at the same speed"
        + (f" ({slowdown:.2f}{TIMES})" if slowdown is not None else "")
        + f" but more of them ({extra_kernels:+d} kernels per profile than the others' mean): it is given more "
        "work. Give every replica the same work (see below)."
    )
    return "workload", metrics, note
