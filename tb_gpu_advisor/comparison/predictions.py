"""Checks each baseline finding's predicted speedup against the speedup the candidate measured."""

from tb_gpu_advisor.vocabulary import PREDICTION_SCORE_LABELS, TIMES
from tb_gpu_advisor.whatif.estimate import is_bound

# A prediction is right when it lies within this share of the measured speedup.
TOLERANCE = 0.25
# The kind of an estimate from a report that does not say (reports before `speedup_kind`: a share of the step
# taken away, an upper bound).
DEFAULT_KIND = "bound"


def measured_speedup(ratio, basis):
    """The JSON of a measured stats.Ratio: `{value, low, high, basis, method}`; None without a ratio."""
    if ratio is None:
        return None
    return {
        "value": round(ratio.value, 4),
        "low": None if ratio.low is None else round(ratio.low, 4),
        "high": None if ratio.high is None else round(ratio.high, 4),
        "basis": basis,
        "method": ratio.method,
    }


def check(predicted, measured, kind=None, low=None):
    """`{ratio, within_tolerance, score, score_text}` of a prediction of `kind` against a measured speedup (both
    > 0), else Nones. within_tolerance is two-sided for any kind; the score is one-sided for a bound (an upper
    limit holds, holds within noise where the measured speedup is above it but its 95% CI low end `low` is not,
    or the fix beat it) and two-sided for a model (vocabulary.PREDICTION_SCORE_LABELS)."""
    if not predicted or not measured:
        return {"ratio": None, "within_tolerance": None, "score": None, "score_text": None}
    within = abs(predicted - measured) <= TOLERANCE * measured + 1e-9
    if is_bound(kind):
        score = bound_score(predicted, measured, low)
        sign = ">" if score == "bound_exceeded" else "\u2264"
        if score == "bound_held_noise":
            numbers = f"measured {measured:.2f}{TIMES}, 95% CI from {low:.2f}{TIMES}, includes {predicted:.2f}{TIMES}"
        elif score == "bound_exceeded" and low is not None:
            numbers = f"measured {measured:.2f}{TIMES}, 95% CI from {low:.2f}{TIMES} > {predicted:.2f}{TIMES}"
        else:
            numbers = f"measured {measured:.2f}{TIMES} {sign} {predicted:.2f}{TIMES}"
        text = f"{PREDICTION_SCORE_LABELS[score]} ({numbers})"
    else:
        score = "within" if within else "not_within"
        text = PREDICTION_SCORE_LABELS[score]
    return {"ratio": round(predicted / measured, 3), "within_tolerance": within, "score": score, "score_text": text}


def bound_score(predicted, measured, low=None):
    """ "bound_held" (predicted >= measured), "bound_held_noise" (below the measured speedup but not below the
    low end of its 95% CI) or "bound_exceeded" (below the CI's low end, or below the measurement without a CI)."""
    if predicted >= measured - 1e-9:
        return "bound_held"
    if low is not None and predicted >= low - 1e-9:
        return "bound_held_noise"
    return "bound_exceeded"


def _unchecked(score):
    return {"ratio": None, "within_tolerance": None, "score": score, "score_text": PREDICTION_SCORE_LABELS[score]}


def _row(finding, status, measured, candidate=None, scored=None):
    predicted = finding.get("estimated_speedup")
    kind = finding.get("speedup_kind") or DEFAULT_KIND
    if scored is None:
        result = check(predicted, measured["value"] if measured else None, kind, measured and measured["low"])
    else:
        result = _unchecked(scored)
    return {
        "id": finding.get("id"),
        "title": finding.get("title"),
        "status": status,
        "predicted": predicted,
        "predicted_kind": kind,
        "candidate_estimate": None if candidate is None else candidate.get("estimated_speedup"),
        "candidate_kind": None if candidate is None else candidate.get("speedup_kind") or DEFAULT_KIND,
        **result,
    }


def _changed(baseline, candidate):
    """(finding, status, candidate's finding or None) per baseline finding the candidate resolved or reduced."""
    cand = {f["id"]: f for f in candidate.get("findings") or [] if f.get("id") is not None}
    out = []
    for finding in baseline.get("findings") or []:
        key = finding.get("id")
        if key is None:
            continue
        other = cand.get(key)
        if other is None:
            out.append((finding, "resolved", None))
        elif (other.get("estimated_speedup") or 1.0) < (finding.get("estimated_speedup") or 1.0):
            out.append((finding, "reduced", other))
    return out


def prediction_checks(baseline, candidate, measured):
    """Per baseline finding the candidate resolved (absent) or reduced (a smaller estimate): what the baseline
    predicted and how it compares with `measured` (a `measured_speedup` dict, or None), in baseline order.

    The measured speedup is every change at once, so only the finding(s) the baseline's combined estimate names
    (the verdict's) are its fix: one such finding is checked alone; several are checked together by the
    combined estimate (score "checked_together"). Every other resolved or reduced finding went with them and
    is not checked alone (score "not_checked_alone"). Without a combined estimate the first-ranked resolved
    or reduced finding is checked."""
    changed = _changed(baseline, candidate)
    named = set(_combined_ids(baseline))
    addressed = [finding["id"] for finding, _, _ in changed if finding["id"] in named]
    if not named and changed:
        addressed = [changed[0][0]["id"]]
    rows = []
    for finding, status, other in changed:
        if finding["id"] not in addressed:
            scored = "not_checked_alone"
        elif len(addressed) > 1:
            scored = "checked_together"
        else:
            scored = None
        rows.append(_row(finding, status, measured, other, scored))
    return rows


def _combined_ids(baseline):
    combined = (baseline.get("summary") or {}).get("combined_estimate") or {}
    return list(combined.get("finding_ids") or []) if combined.get("estimated_speedup") is not None else []


def combined_check(baseline, rows, measured):
    """The baseline's combined estimate of its top findings (`summary.combined_estimate`) against the measured
    speedup: `{predicted, predicted_kind, finding_ids, addressed_ids, other_ids, ratio, within_tolerance, ...}`,
    where `addressed_ids` are those of its findings the candidate resolved or reduced and `other_ids` the
    resolved or reduced findings it does not name; None without an estimate."""
    combined = (baseline.get("summary") or {}).get("combined_estimate")
    if not combined or combined.get("estimated_speedup") is None:
        return None
    checked = {row["id"] for row in rows}
    ids = list(combined.get("finding_ids") or [])
    return {
        "predicted": combined["estimated_speedup"],
        "predicted_kind": combined.get("speedup_kind") or DEFAULT_KIND,
        "finding_ids": ids,
        "addressed_ids": [i for i in ids if i in checked],
        "other_ids": [row["id"] for row in rows if row["id"] not in ids],
        **check(
            combined["estimated_speedup"],
            measured["value"] if measured else None,
            combined.get("speedup_kind") or DEFAULT_KIND,
            measured and measured["low"],
        ),
    }
