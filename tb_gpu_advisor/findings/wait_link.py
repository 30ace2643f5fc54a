"""The verdict's link from a wait it names to the Time line's shares that are the work after that wait."""

from __future__ import annotations

from tb_gpu_advisor.findings.causes import CAUSE_MIN_SHARE
from tb_gpu_advisor.findings.overlaps import WAIT_FIXES
from tb_gpu_advisor.findings.thresholds import VERDICT_MIN_PCT
from tb_gpu_advisor.report.units import percent
from tb_gpu_advisor.vocabulary import BREAKDOWN_LABELS, in_sentence

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.findings.finding import Finding


def time_line_link(finding: Finding, breakdown_pct: dict) -> str:
    """ " Most of the Time line's kernel launch 40.6% and host compute 11.4% is this idle (36.3% and 10.3% of the
    step): ...": where the verdict names a wait (a read back, a sync) whose idle is, by the idle attribution, most
    of Time-line categories as large as a verdict (VERDICT_MIN_PCT), the sentence says so, so that a Time line led
    by those categories reads as the same story; "" where none is."""
    inside = finding.evidence.metrics.get("stall_pct_by_category") or {}
    if finding.id not in WAIT_FIXES or not inside:
        return ""
    named = [
        (category, breakdown_pct[category], share)
        for category, share in inside.items()
        if category in BREAKDOWN_LABELS
        and (breakdown_pct.get(category) or 0.0) >= VERDICT_MIN_PCT
        and share >= CAUSE_MIN_SHARE * breakdown_pct[category]
    ]
    if not named:
        return ""
    shares = " and ".join(f"{in_sentence(BREAKDOWN_LABELS[c])} {percent(total)}" for c, total, _ in named)
    parts = " and ".join(percent(share) for _, _, share in named)
    return (
        f" Most of the Time line's {shares} is this idle ({parts} of the step): the host dispatching the next "
        "call, which starts only once the value arrives."
    )
