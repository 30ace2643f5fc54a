"""Causes before their symptoms: a finding that measures a generic symptom (the GPU idles while the host works,
waits for launches, runs tiny kernels, copies slowly) yields its place to a specific cause that accounts for
most of the same time (allocator churn, a per-tensor optimizer loop, eager dispatch, pageable memory): the cause
is what to fix."""

from __future__ import annotations

from dataclasses import replace

from tb_gpu_advisor.findings.finding import SEVERITIES
from tb_gpu_advisor.findings.overlaps import POOLS

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator
    from tb_gpu_advisor.findings.finding import Finding
    from typing import Any


# Findings that measure where step time goes, whatever causes it.
SYMPTOMS = frozenset(
    {
        "host.gpu_idle_host_busy",
        "launch.gpu_starved_by_launches",
        "launch.tiny_kernels",
        "batch.gpu_underused",
        "transfer.low_bandwidth",
    }
)
# Contention for the host's cores: a suspicion the trace supports but cannot prove, so it never leads the
# symptom it would explain (its rule caps it below that).
SUSPICIONS = frozenset({"threading.tf_data_contention", "threading.host_cpu_saturated"})
# A cause explains a symptom when it claims at least this share of the symptom's time, from a common pool.
CAUSE_MIN_SHARE = 0.5


def explains(cause: Finding, symptom: Finding) -> bool:
    """Whether `cause` (a specific finding of high or medium severity: a low one is not established) accounts for
    most of `symptom`'s time."""
    return (
        symptom.id in SYMPTOMS
        and cause.id not in SYMPTOMS | SUSPICIONS
        and symptom.recoverable_ms > 0
        and cause.severity in ("high", "medium")
        and cause.recoverable_ms >= CAUSE_MIN_SHARE * symptom.recoverable_ms
        and bool(POOLS.get(cause.id, set()) & POOLS.get(symptom.id, set()))
    )


def causes_first(findings: Iterator[Any]) -> tuple:
    """`findings` (ranked) with each symptom's first explaining cause moved just before it, at the symptom's
    severity where that is higher (it carries most of that time)."""
    ranked = list(findings)
    index = 0
    while index < len(ranked):
        symptom = ranked[index]
        cause = next((f for f in ranked[index + 1 :] if explains(f, symptom)), None)
        if cause is not None:
            ranked.remove(cause)
            if SEVERITIES.index(symptom.severity) < SEVERITIES.index(cause.severity):
                cause = replace(cause, severity=symptom.severity)
            ranked.insert(index, cause)
        index += 1
    return tuple(ranked)
