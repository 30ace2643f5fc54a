"""Helpers of the findings whose recoverable time is modeled kernel time: severity, busiest GPU, top kernels."""

from __future__ import annotations

from tb_gpu_advisor.findings.finding import Evidence, Finding, grade
from tb_gpu_advisor.findings.thresholds import KERNEL_HIGH_PCT, MODELED_LOW_PCT, MODELED_MEDIUM_PCT

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from tb_gpu_advisor.findings.context import Context
    from typing import Any


def busiest_gpu(by_gpu):
    """(ordinal, ps) of the GPU with the most time in `by_gpu`; GPUs run in parallel, so the max is wall time."""
    return max(by_gpu.items(), key=lambda item: (item[1], -item[0])) if by_gpu else (None, 0)


def gpu_peaks(ctx, ordinal):
    """analysis.peaks.DevicePeaks of the GPU with `ordinal`, or None."""
    index = next((i for i, gpu in enumerate(ctx.model.gpus) if gpu.ordinal == ordinal), None)
    peaks = ctx.analysis.device_peaks
    return peaks[index] if index is not None and index < len(peaks) else None


def top_kernel_names(ctx: Context, predicate: Callable[..., Any], limit: int = 3) -> list[str]:
    return [row.name for row in ctx.analysis.kernels if predicate(row.name)][:limit]


def modeled_finding(
    ctx: Context,
    finding_id: str,
    summary: str,
    recoverable_ms: float,
    basis: str,
    metrics: dict,
    crossed: dict,
    pointers: dict,
    high: float = KERNEL_HIGH_PCT,
    condition: str | None = None,
    fix_note: str = "",
    graded_ms: float | None = None,
) -> Finding | None:
    """The finding, its severity graded on `graded_ms` (default: the recoverable time); None below the ladder."""
    share = ctx.share_pct(recoverable_ms)
    severity = grade(
        ctx.share_pct(recoverable_ms if graded_ms is None else graded_ms), high, MODELED_MEDIUM_PCT, MODELED_LOW_PCT
    )
    if severity is None:
        return None
    return Finding(
        id=finding_id,
        severity=severity,
        summary=summary,
        evidence=Evidence({**metrics, "recoverable_pct": share}, crossed, pointers),
        recoverable_ms=recoverable_ms,
        window_ms=ctx.window_ms,
        speedup_basis=basis,
        condition=condition,
        fix_note=fix_note,
    )
