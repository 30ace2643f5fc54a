"""Checks each baseline finding's predicted speedup against the speedup the candidate measured."""

from tb_gpu_advisor.vocabulary import PREDICTION_SCORE_LABELS, TIMES

# A prediction is right when it lies within this share of the measured speedup.
TOLERANCE = 0.25
# The kind of an estimate from a report that does not say (reports before `speedup_kind`: a share of the step
# taken away, an upper bound).
DEFAULT_KIND = "bound"


def measured_speedup(ratio, basis):
    """The JSON of a measured stats.Ratio: `{value, low, high, basis, method}`; None without a ratio."""
    if ratio is None:
        return None
    return {"value": round(ratio.value, 4),
            "low": None if ratio.low is None else round(ratio.low, 4),
            "high": None if ratio.high is None else round(ratio.high, 4),
            "basis": basis, "method": ratio.method}


def check(predicted, measured, kind=None):
    """`{ratio, within_tolerance, score, score_text}` of a prediction of `kind` against a measured speedup (both
    > 0), else Nones. within_tolerance is two-sided for any kind; the score is one-sided for a bound (an upper
    limit holds or the fix beat it) and two-sided for a model (vocabulary.PREDICTION_SCORE_LABELS)."""
    if not predicted or not measured:
        return {"ratio": None, "within_tolerance": None, "score": None, "score_text": None}
    within = abs(predicted - measured) <= TOLERANCE * measured + 1e-9
    if kind == "bound":
        held = predicted >= measured - 1e-9
        score = "bound_held" if held else "bound_exceeded"
        sign = "\u2264" if held else ">"
        text = (f"{PREDICTION_SCORE_LABELS[score]} (measured {measured:.2f}{TIMES} {sign} "
                f"{predicted:.2f}{TIMES})")
    else:
        score = "within" if within else "not_within"
        text = PREDICTION_SCORE_LABELS[score]
    return {"ratio": round(predicted / measured, 3), "within_tolerance": within, "score": score,
            "score_text": text}


def _row(finding, status, measured, candidate=None):
    predicted = finding.get("estimated_speedup")
    return {
        "id": finding.get("id"),
        "title": finding.get("title"),
        "status": status,
        "predicted": predicted,
        "predicted_kind": finding.get("speedup_kind") or DEFAULT_KIND,
        "candidate_estimate": None if candidate is None else candidate.get("estimated_speedup"),
        "candidate_kind": None if candidate is None else candidate.get("speedup_kind") or DEFAULT_KIND,
        **check(predicted, measured["value"] if measured else None, finding.get("speedup_kind") or DEFAULT_KIND),
    }


def prediction_checks(baseline, candidate, measured):
    """Per baseline finding the candidate resolved (absent) or reduced (a smaller estimate): what the baseline
    predicted and how it compares with `measured` (a `measured_speedup` dict, or None), in baseline order."""
    cand = {f["id"]: f for f in candidate.get("findings") or [] if f.get("id") is not None}
    rows = []
    for finding in baseline.get("findings") or []:
        key = finding.get("id")
        if key is None:
            continue
        other = cand.get(key)
        if other is None:
            rows.append(_row(finding, "resolved", measured))
        elif (other.get("estimated_speedup") or 1.0) < (finding.get("estimated_speedup") or 1.0):
            rows.append(_row(finding, "reduced", measured, other))
    return rows


def combined_check(baseline, rows, measured):
    """The baseline's combined estimate of its top findings (`summary.combined_estimate`) against the measured
    speedup: `{predicted, predicted_kind, finding_ids, addressed_ids, ratio, within_tolerance}`, where
    `addressed_ids` are those of its findings the candidate resolved or reduced; None without an estimate."""
    combined = (baseline.get("summary") or {}).get("combined_estimate")
    if not combined or combined.get("estimated_speedup") is None:
        return None
    checked = {row["id"] for row in rows}
    ids = list(combined.get("finding_ids") or [])
    return {"predicted": combined["estimated_speedup"],
            "predicted_kind": combined.get("speedup_kind") or DEFAULT_KIND,
            "finding_ids": ids, "addressed_ids": [i for i in ids if i in checked],
            **check(combined["estimated_speedup"], measured["value"] if measured else None,
                    combined.get("speedup_kind") or DEFAULT_KIND)}
