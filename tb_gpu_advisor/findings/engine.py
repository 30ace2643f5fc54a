"""Runs every rule family over a host's model and analyses and returns the ranked findings and the verdict."""

from __future__ import annotations

from dataclasses import dataclass, replace

from tb_gpu_advisor.analysis.capture_overhead import UNPROFILED_STEP, host_inflation, overhead_of
from tb_gpu_advisor.analysis.capture_facts import warmup_spans
from tb_gpu_advisor.findings.causes import causes_first, explains
from tb_gpu_advisor.findings.context import Context
from tb_gpu_advisor.findings.finding import SEVERITIES, capped, speedup
from tb_gpu_advisor.findings.rules.host_stalls import INFERRED_CAUSES
from tb_gpu_advisor.findings.host_time import host_critical_ms
from tb_gpu_advisor.findings.overlaps import POOLS, WAIT_FIXES, with_overlaps
from tb_gpu_advisor.findings.rules import RULES
from tb_gpu_advisor.findings.step_excess import with_input_named
from tb_gpu_advisor.findings.low_confidence import not_enough
from tb_gpu_advisor.findings.verdict import BOTTLENECK_OF_CATEGORY, decide
from tb_gpu_advisor.report.units import durations_ms, speedup_phrase
from tb_gpu_advisor.findings import pytorch_fixes  # noqa: F401 (registers PyTorch's wording of the findings)
from tb_gpu_advisor.whatif.combined import CAPPED_BY, DEVICE_POOLS, HOST_POOLS, INPUT_POOL, Claim, combine
from tb_gpu_advisor.whatif.estimate import BOUND, MODEL

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.analysis.capture_overhead import HostInflation, UnprofiledStep
    from tb_gpu_advisor.analysis.confidence import Confidence
    from tb_gpu_advisor.analysis.host_analysis import HostAnalysis
    from tb_gpu_advisor.findings.finding import Finding
    from tb_gpu_advisor.model.trace import TraceModel
    from tb_gpu_advisor.whatif.combined import Combined


# The findings whose fixes the combined estimate applies together: the first few of high or medium severity
# that name a bottleneck (batch-size advice and step-time notes are not a fix of lost time).
COMBINED_TOP = 5


@dataclass(frozen=True)
class Diagnosis:
    verdict: object  # verdict.Verdict
    findings: tuple  # Finding, most impactful first
    errors: tuple  # one line per rule that failed on this trace
    combined: object = None  # whatif.combined.Combined of the top findings, or None
    inferred: str | None = None  # why the confidence is at most medium: the first finding's cause is inferred
    # the step without the profiler's own host time that the findings are set against (capture_overhead.
    # UnprofiledStep), or None where they use the captured step
    unprofiled: UnprofiledStep | None = None


def diagnose(model: TraceModel, analysis: HostAnalysis) -> Diagnosis:
    """Diagnosis of one host from its model and HostAnalysis: every rule, ranked by severity
    then estimated speedup, and the verdict. With the trace's confidence low, no finding is high and the verdict
    says the trace is not enough."""
    ctx = Context(model, analysis)
    found, errors = [], []
    for order, rule in enumerate(RULES):
        try:
            result = rule(ctx)
        except Exception as error:  # one faulty rule must not take the report down
            errors.append(
                f"Finding rule {rule.__module__.rsplit('.', 1)[-1]}.{rule.__name__} failed on this "
                f"trace ({type(error).__name__}: {error}); its finding is missing."
            )
            continue
        if result is not None:
            found.append((order, replace(result, framework=ctx.framework.name)))
    found = [(order, finding) for order, finding in _within_capture(ctx.confidence, found)]
    busy = max(ctx.analysis.active_busy_pct, default=None)
    device_busy = None if busy is None else ctx.window_ms * busy / 100.0
    host_work = ctx.host_work_ms if any(f.id in WAIT_FIXES for _, f in found) else None
    found = [(order, within_work_left(finding, host_work, device_busy)) for order, finding in found]
    if not ctx.has_gpu:
        found = [(order, on_shared_cores(finding)) for order, finding in found]
    found.sort(key=lambda item: (SEVERITIES.index(item[1].severity), -item[1].estimated_speedup, item[0]))
    inflation = _inflation(ctx)

    def ranked():  # the claims set against the step the report's Note gives (review finalA 2, 3)
        ordered = causes_first(finding for _, finding in found)
        return ordered if inflation is None else tuple(unprofiled(f, inflation, ctx.step_count) for f in ordered)

    findings = ranked()
    verdict = decide(ctx, findings)
    if ctx.confidence.level == "low":
        verdict = not_enough(verdict, ctx.confidence, ctx.analysis.gpu_busy_pct, _setup_share(ctx, verdict))
        found = [(order, capped(finding, "medium")) for order, finding in found]
        found.sort(key=lambda item: (SEVERITIES.index(item[1].severity), -item[1].estimated_speedup, item[0]))
        findings = ranked()
    # After the verdict, which reads the warm-up findings' time ("As captured: host-bound ..."): their fix is to
    # recapture, so they promise no speedup and the combined estimate leaves them out.
    findings = tuple(without_recapture_speedup(finding) for finding in findings)
    if inflation is not None:
        device_busy = None if device_busy is None else inflation.as_profiled(device_busy, host_side=False)
        host_work = None if host_work is None else inflation.as_profiled(host_work, host_side=True)
    findings = with_input_named(with_overlaps(findings))
    combined = combined_estimate(findings, ctx.window_ms, device_busy, host_work)
    # A trace too thin for a verdict is too thin for a joint speedup claim in it (the findings keep theirs).
    if ctx.confidence.level != "low":
        verdict = with_combined(verdict, combined, findings)
    inferred = INFERRED_CAUSES.get(findings[0].id) if findings else None
    return Diagnosis(
        verdict=verdict,
        findings=findings,
        errors=tuple(errors),
        combined=combined,
        inferred=inferred,
        unprofiled=None if inflation is None else inflation.per_step(ctx.step_count),
    )


def _inflation(ctx: Context) -> HostInflation | None:
    """The profiler's own host time in the window (capture_overhead.HostInflation) where the report's Note says
    the step is likely shorter without it (CaptureOverhead.shortens_step): the findings are then set against
    that step, and only then (review finalA 4)."""
    if not ctx.model.profiler_options or not ctx.has_gpu or not overhead_of(ctx.model, ctx.analysis).shortens_step():
        return None
    # The profiler's own time between recorded ops is in no event: the host's untraced time holds it too.
    untraced = ctx.idle_cause_ms("host_untraced")
    return host_inflation(ctx.model, ctx.window_ms, ctx.host_work_ms, host_critical_ms(ctx), untraced)


def combined_estimate(
    findings: tuple, window_ms: float, device_busy_ms: float | None = None, host_work_ms: float | None = None
) -> Combined | None:
    """whatif.combined.Combined of the top high and medium findings with time to recover, or None; never a step
    shorter than the busiest GPU's own work (`device_busy_ms` over the window) that the fixes leave, nor, where a
    fix only removes a wait, than the host's own work (`host_work_ms`) that they leave."""
    top = [
        f
        for f in findings
        if f.severity in ("high", "medium") and f.recoverable_ms > 0 and f.category in BOTTLENECK_OF_CATEGORY
    ][:COMBINED_TOP]
    return combine(
        window_ms,
        [
            Claim(
                f.id,
                f.recoverable_ms,
                f.speedup_kind,
                frozenset(POOLS.get(f.id, {f.id})),
                f.what_if,
                f.id in WAIT_FIXES,
                any(explains(f, other) for other in top),
            )
            for f in top
        ],
        device_busy_ms,
        host_work_ms,
    )


def with_combined(verdict, combined, findings):
    """The verdict with a sentence on the joint effect when two or more fixes count (a single one says its own
    speedup)."""
    # Under "no bottleneck" no measured loss reaches the findings' estimates: no joint figure in the verdict.
    if combined is None or verdict.bottleneck == "none":
        return verdict
    number = {f.id: index for index, f in enumerate(findings, 1)}
    # One fix counted: the verdict's own says it, unless that fix counts the verdict finding's time (shared).
    if not combined.counted or (len(combined.counted) < 2 and verdict.finding_id not in combined.shared):
        return verdict
    phrase = speedup_phrase(combined.speedup, combined.kind)
    if phrase is None:
        return verdict
    covered = set(combined.counted) | ({*combined.shared} if len(combined.counted) < 2 else set())
    counted = ", ".join(f"#{number[i]}" for i in sorted(covered & number.keys(), key=number.get))
    # The verdict's "(up to N% of each step recoverable)" stays its own finding's share; the joint figure follows.
    sentence = verdict.sentence
    notes = [text for text in (_kinds_text(combined, findings, number),) if text]
    if combined.shared:
        notes.append(
            f"#{', #'.join(str(number[i]) for i in sorted(combined.shared, key=number.get))} "
            f"{'shares' if len(combined.shared) == 1 else 'share'} that time, counted once"
        )
    if combined.capped_by is not None:
        notes.append(CAPPED_BY[combined.capped_by])
    shared = f" ({'; '.join(notes)})" if notes else ""
    which = f"findings {counted} together" if "," in counted else f"finding {counted}"
    return replace(verdict, sentence=f"{sentence} Fixing {which}: {phrase} faster{shared}.")


def _kinds_text(combined, findings, number):
    """ "bounds #1, #3; model #2" when the combined number mixes bounds and models: it is then a bound (whatif.
    combined.combine), and the reader sees which parts are which; "" when all are of one kind."""
    kind = {f.id: f.speedup_kind for f in findings}
    parts = {}
    for finding_id in sorted(combined.counted, key=number.get):
        parts.setdefault(kind[finding_id], []).append(f"#{number[finding_id]}")
    if len(parts) < 2:
        return ""
    words = {"bound": ("bound", "bounds"), "model": ("model", "models")}
    return "; ".join(f"{words[k][len(ids) > 1]} {', '.join(ids)}" for k, ids in sorted(parts.items()))


# Findings that measure host time between kernels: in a capture with no repeating step it is the harness's time.
_BETWEEN_KERNELS = ("host", "launch", "batch")


# Confidence labels (analysis/confidence.py) of a capture whose time is mostly warm-up.
_MOSTLY_WARMUP = ("only warm-up steps", "mostly warm-up")
_NO_SPEEDUP_TO_RECAPTURE = "none: the fix is to recapture after warm-up; this time includes first-use setup"


def mostly_warmup(confidence: Confidence) -> bool:
    """Whether the captured time is mostly warm-up: every step (or the activity) is, or the one step holds it."""
    labels = set(confidence.labels)
    one_step = bool(labels & {"1 complete step", "1 step"})
    return bool(labels & set(_MOSTLY_WARMUP)) or ("warm-up in the steps" in labels and one_step)


def without_recapture_speedup(finding: Finding) -> Finding:
    """A finding whose fix is to recapture after warm-up claims no speedup (its time is setup, not the step's)."""
    if finding.condition != "warmup":
        return finding
    return replace(finding, recoverable_ms=0.0, what_if=False, speedup_basis=_NO_SPEEDUP_TO_RECAPTURE)


def host_side(finding_id: str) -> bool:
    """Whether a finding's time is the host's work (host or launch pools, none of the GPU's own)."""
    pools = POOLS.get(finding_id, set())
    return bool(pools & HOST_POOLS) and not pools & DEVICE_POOLS


def unprofiled(finding: Finding, inflation: HostInflation, steps: int = 0) -> Finding:
    """The finding's claim as the unprofiled program's (capture_overhead.HostInflation): host time the profiler
    added is neither the program's to recover nor in its step. Where that moves the finding's speedup off the one
    its own time and share of the captured step give, the summary says which time is set against which step, so
    the text, the share and the bound read as one (review final3 5)."""
    if finding.recoverable_ms <= 0:
        return finding
    side = host_side(finding.id)
    recoverable = inflation.as_unprofiled(finding.recoverable_ms, side)
    summary = finding.summary
    moved = speedup(recoverable, finding.window_ms) != speedup(finding.recoverable_ms, finding.window_ms)
    if moved and steps > 0 and inflation.unprofiled_window_ms > 0:
        kept = finding.recoverable_ms * (1.0 - inflation.work_share) if side else finding.recoverable_ms
        claim, step = durations_ms(kept / steps, inflation.unprofiled_window_ms / steps)
        what = f"the program's own {claim} per step of its time" if side else f"its {claim} per step"
        summary += (
            f" The estimate sets {what} against {UNPROFILED_STEP} ({step}), so it "
            f"is {100.0 * kept / inflation.unprofiled_window_ms:.1f}% of that step."
        )
    return replace(
        finding,
        summary=summary,
        recoverable_ms=recoverable,
        speedup_basis=f"{finding.speedup_basis}; on {UNPROFILED_STEP}",
    )


# Why the input wait removed is no upper bound where the step computes on the CPU (on_shared_cores).
_UPPER = "upper bound"
_SHARED_CORES = (
    "not a bound: on a profile without a GPU the input pipeline's threads run on the cores the step "
    "computes on, so its fix can also change the step's own compute time"
)


def on_shared_cores(finding: Finding) -> Finding:
    """A finding whose time is the input wait alone (overlaps.POOLS), on a profile without a GPU: removing that
    wait is no upper bound, since the pipeline competes with the step for the same cores and a fix that changes
    its threads changes the step's compute too (a parallel map measured 1.61x beside a 1.36x "bound": review
    final3 7). Its figure is an estimate ("about"), not a bound ("up to")."""
    if POOLS.get(finding.id) != {INPUT_POOL} or finding.speedup_kind != BOUND or finding.recoverable_ms <= 0:
        return finding
    basis = finding.speedup_basis
    if basis.startswith(_UPPER):
        basis = "estimate" + basis[len(_UPPER) :]
    return replace(finding, speedup_kind=MODEL, speedup_basis=f"{basis}; {_SHARED_CORES}")


def within_work_left(finding: Finding, host_work_ms: float | None, device_busy_ms: float | None) -> Finding:
    """A finding whose fix removes a wait (overlaps.WAIT_FIXES) recovers at most the window less the work that
    stays, the host's (`host_work_ms`) or the GPU's (`device_busy_ms`), whichever is longer: removing a wait
    lets them overlap, it does not remove either."""
    if finding.id not in WAIT_FIXES or finding.recoverable_ms <= 0:
        return finding
    left = max(host_work_ms or 0.0, device_busy_ms or 0.0)
    most = max(0.0, finding.window_ms - left)
    if finding.recoverable_ms <= most:
        return finding
    return replace(
        finding,
        recoverable_ms=most,
        speedup_basis=f"{finding.speedup_basis}, held at the host's or the GPU's own work per step, which stays",
    )


def _within_capture(confidence, found):
    """The findings the capture supports: none about host time between kernels when no step repeats; host and
    launch findings at most medium when warm-up is in the captured time; no batch-size advice when the capture is
    mostly warm-up (its idle time is setup, not small kernels); collective findings at most medium when the file
    is one rank of several (its collectives include waiting for ranks it does not show)."""
    mostly = mostly_warmup(confidence)
    for order, finding in found:
        category = finding.category
        if confidence.no_step and category in _BETWEEN_KERNELS:
            continue
        if mostly and category == "batch":
            continue
        if confidence.warmup and category in ("host", "launch"):
            finding = capped(finding, "medium")
        if confidence.one_rank_of and category == "communication":
            finding = capped(finding, "medium")
        yield order, finding


# Verdicts whose time is an idle cause of analysis.idle_attribution that first-use setup can fill.
_SETUP_CAUSES = {"launch": "launch", "host": "host"}


def _setup_share(ctx: Context, verdict) -> float | None:
    """The share of the verdict's idle cause (launch calls, host work) that is first-use setup
    (analysis.capture_facts.warmup_spans); None when the capture has no warm-up or the verdict is no such cause."""
    cause = _SETUP_CAUSES.get(verdict.bottleneck)
    if not ctx.confidence.warmup or cause is None:
        return None
    total = ctx.idle_cause_ms(cause)
    if total <= 0:
        return None
    return 1.0 - ctx.idle_cause_ms(cause, warmup_spans(ctx.model)) / total
