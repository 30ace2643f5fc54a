"""The verdict of a low-confidence trace: it says the trace is not enough, then what the trace shows as captured."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tb_gpu_advisor.findings.verdict import Verdict, _p

if TYPE_CHECKING:
    from tb_gpu_advisor.analysis.confidence import Confidence


# The share of the verdict's idle cause that first-use setup may hold before the "as captured" label names the
# setup instead of the cause: more than half of it is not the program's steady state.
SETUP_MOSTLY_SHARE = 0.5


def not_enough(
    verdict: Verdict, confidence: Confidence, busy_pct: float | None = None, setup_share: float | None = None
) -> Verdict:
    """The verdict of a low-confidence trace: it says the trace is not enough, then what it shows as captured
    (only the busy share when no step repeats: the time between kernels is not a step's; first-use setup when
    `setup_share`, the part of the verdict's idle cause that is warm-up, is most of it)."""
    if confidence.tpu_only or confidence.counters_only:  # the verdict already says what cannot be told
        return verdict
    why = "; ".join(confidence.labels)
    if setup_share is not None and setup_share > SETUP_MOSTLY_SHARE:
        return Verdict(
            "unknown",
            f"Not enough trace for a verdict ({why}; see confidence). As captured: first-use setup (context "
            "creation, kernel module loading, first allocations) is most of the time the GPU waited for the "
            "host; nothing steady-state to judge.",
            "first-use setup in the capture",
            None,
        )
    if confidence.no_step and busy_pct is not None:
        return Verdict(
            "unknown",
            f"Not enough trace for a verdict ({why}; see confidence). As captured: the GPU "
            f"is busy {_p(busy_pct)} of the profiled time; the host time between kernels "
            "belongs to the code around them, not to a training step.",
            "no repeating step in the capture",
            None,
        )
    shown = verdict.sentence[0].lower() + verdict.sentence[1:]
    return Verdict(
        verdict.bottleneck,
        f"Not enough trace for a verdict ({why}; see confidence). As captured: {shown}",
        verdict.reason,
        verdict.finding_id,
    )
