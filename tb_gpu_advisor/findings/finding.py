"""The Finding: one diagnosis with its evidence, estimated speedup and fix; and its JSON shape."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from tb_gpu_advisor.findings.catalog import CATALOG, entry_for
from tb_gpu_advisor.findings.doc_links import matched_docs
from tb_gpu_advisor.vocabulary import SPEEDUP_CAP

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.findings.catalog import Entry
    from tb_gpu_advisor.whatif.estimate import Estimate


SEVERITIES = ("high", "medium", "low")
# "model": the fix applied to this trace's own timeline and the step re-derived (worded "about 1.3x");
# "bound": an upper bound where the trace cannot support a model (worded "up to 3.5x").
SPEEDUP_KINDS = ("model", "bound")
CATEGORIES = (
    "input",
    "host",
    "launch",
    "transfer",
    "occupancy",
    "kernel",
    "precision",
    "fusion",
    "communication",
    "memory",
    "threading",
    "placement",
    "batch",
    "sync",
    "other",
)
# Where a catalog text refers to another finding of the report (Finding.see), its number goes here.
SEE = "#{see}"
# Recoverable time is capped just below the whole window so the ratio stays finite.
MAX_RECOVERABLE_FRACTION = 1.0 - 1.0 / SPEEDUP_CAP


@dataclass(frozen=True)
class Evidence:
    """Measured numbers (units in the key names), the threshold the rule crossed, and where to look."""

    metrics: dict
    threshold: dict
    pointers: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "metrics": dict(self.metrics),
            "threshold": dict(self.threshold),
            "pointers": {key: value for key, value in self.pointers.items() if value},
        }


@dataclass(frozen=True)
class Finding:
    """One finding; `id` is stable and documented in docs/findings.md, the text comes from the catalog."""

    id: str
    severity: str
    summary: str
    evidence: Evidence
    recoverable_ms: float
    window_ms: float
    speedup_basis: str
    fix_note: str = ""  # a sentence about this profile put before the catalog's fix text
    framework: str = "unknown"  # whose idiom the fix is written in (set by the engine from analysis.framework)
    condition: str | None = None  # a catalog variant of the TensorFlow fix the rule chose (catalog.Entry)
    overlaps_with: tuple = ()  # ids of other findings whose recoverable time is partly the same time
    speedup_kind: str = "bound"  # one of SPEEDUP_KINDS; set with `estimated` from a whatif.Estimate
    what_if: bool = False  # the speedup comes from a what-if of the fix (`estimated`), not the lost time alone
    title: str = ""  # a title naming what this profile shows, in place of the catalog's (empty: the catalog's)
    # The number of another finding of the report whose fix this one's refers to: "#{see}" in the catalog's text.
    see: int | None = None

    def __post_init__(self):
        if self.id not in CATALOG:
            raise ValueError(f"finding id {self.id!r} is not in the catalog")
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity {self.severity!r} is not one of {SEVERITIES}")
        if self.speedup_kind not in SPEEDUP_KINDS:
            raise ValueError(f"speedup_kind {self.speedup_kind!r} is not one of {SPEEDUP_KINDS}")

    @property
    def entry(self) -> Entry:
        return CATALOG[self.id]

    @property
    def category(self) -> str:
        return self.entry.category

    @property
    def estimated_speedup(self) -> float:
        return speedup(self.recoverable_ms, self.window_ms)

    def to_dict(self, framework=None, vendor=None):
        """The JSON shape; `framework` ("pytorch") picks the catalog's wording for that framework's users, and
        with `vendor` ("NVIDIA", "AMD") the docs are matched to the run (findings.doc_links). Without `framework`,
        the finding's own picks the wording."""
        wording = framework or self.framework
        entry = entry_for(self.id, wording) if wording == "pytorch" else self.entry
        idiom = entry.idiom(self.framework, self.condition)
        if self.see is not None:
            idiom = replace(
                idiom,
                fix_summary=idiom.fix_summary.replace(SEE, f"#{self.see}"),
                fix=idiom.fix.replace(SEE, f"#{self.see}"),
            )
        return {
            "id": self.id,
            "category": entry.category,
            "severity": self.severity,
            "title": self.title or entry.title,
            "summary": self.summary,
            "evidence": self.evidence.to_dict(),
            "estimated_speedup": self.estimated_speedup,
            "speedup_kind": self.speedup_kind,
            "recoverable_ms": round(self.recoverable_ms, 3),
            "speedup_basis": self.speedup_basis,
            "overlaps_with": list(self.overlaps_with),
            "fix_summary": idiom.fix_summary,
            "fix": f"{self.fix_note}\n\n{idiom.fix}" if self.fix_note else idiom.fix,
            "docs": matched_docs(idiom.docs, framework, vendor),
        }


def speedup(recoverable_ms: float, window_ms: float) -> float:
    """Step-time ratio if `recoverable_ms` of `window_ms` went away: an upper bound, >= 1.0, 2 decimals."""
    if window_ms <= 0 or recoverable_ms <= 0:
        return 1.0
    kept = window_ms - min(recoverable_ms, window_ms * MAX_RECOVERABLE_FRACTION)
    return max(1.0, round(window_ms / kept, 2))


def estimated(finding: Finding, estimate: Estimate) -> Finding:
    """The finding with its speedup from a what-if `estimate` (whatif.estimate.Estimate): the recoverable time is
    the share of the window the fix removes, the kind and basis are the estimate's."""
    return replace(
        finding,
        recoverable_ms=estimate.recoverable_of(finding.window_ms),
        speedup_kind=estimate.kind,
        speedup_basis=estimate.basis,
        what_if=True,
    )


def grade(value: float, high: float, medium: float, low: float | None = None) -> str | None:
    """ "high", "medium", "low" or None for a value against a rule's thresholds (None: below all)."""
    if value is None:
        return None
    if value >= high:
        return "high"
    if value >= medium:
        return "medium"
    if low is not None and value >= low:
        return "low"
    return None


def ladder(metric: str, value: float, high: float, medium: float, low: float | None = None) -> dict:
    """Evidence threshold of a severity ladder: the metric, its value, the levels and the one crossed."""
    levels = {"high": high, "medium": medium} if low is None else {"high": high, "medium": medium, "low": low}
    return {"metric": metric, "value": value, **levels, "crossed": grade(value, high, medium, low)}


def limit(metric: str, value: float | str, level: float | str, direction: str = "above", **more: object) -> dict:
    """Evidence threshold of a firing condition: the metric went `direction` `level`."""
    return {"metric": metric, "value": value, "direction": direction, "level": level, **more}


def capped(finding: Finding, severity: str) -> Finding:
    """The finding with its severity lowered to at most `severity` (advice that is a larger change)."""
    return replace(finding, severity=min(finding.severity, severity, key=_ORDER.index))


_ORDER = ("low", "medium", "high")
