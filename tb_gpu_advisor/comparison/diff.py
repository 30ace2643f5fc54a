"""Compares two reports (baseline, candidate) into a JSON-ready Comparison dict (docs/report.md, Comparison)."""

import statistics

from tb_gpu_advisor.analysis.breakdown import BREAKDOWN_CATEGORIES
from tb_gpu_advisor.comparison.comparability import copy_bytes_moved, hardware, kernel_share, warnings_of, work_per_step
from tb_gpu_advisor.comparison.configuration import configuration_changes
from tb_gpu_advisor.comparison.matching import compare_findings, compare_kernels
from tb_gpu_advisor.comparison.predictions import combined_check, measured_speedup, prediction_checks
from tb_gpu_advisor.comparison.stats import (
    mean_difference,
    ratio_of_means_difference,
    ratio_of_medians_difference,
    speedup_of,
)
from tb_gpu_advisor.comparison.verdict import ZERO_STEPS, change_of, driver_of, verdict_of
from tb_gpu_advisor.constants import SCHEMA_VERSION
from tb_gpu_advisor.vocabulary import BREAKDOWN_LABELS
from tb_gpu_advisor.report.busy import busy_figures


def compare_reports(baseline_report, candidate_report):
    """The Comparison of two run reports (`run_report`) or two HostReports; pure, JSON-ready.

    Hosts are matched by name; a run with one host on each side is matched whatever the names.
    """
    baseline, candidate = _as_run_report(baseline_report), _as_run_report(candidate_report)
    pairs, base_only, cand_only = _pair_hosts(baseline["hosts"], candidate["hosts"])
    comparisons = [compare_hosts(b, c) for b, c in pairs]
    if comparisons:
        verdict = comparisons[0]["verdict"]
        if len(comparisons) > 1:
            verdict = f"{comparisons[0]['baseline_host']}: {verdict}"
    else:
        verdict = "Nothing to compare: no host of the baseline matches a host of the candidate."
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "comparison",
        "baseline": _side(baseline),
        "candidate": _side(candidate),
        "verdict": verdict,
        "hosts": comparisons,
        "unmatched_hosts": {"baseline": base_only, "candidate": cand_only},
    }


def _as_run_report(report):
    if "hosts" in report:
        return report
    return {"run": None, "hosts": [report], "errors": []}


def _side(report):
    return {
        "run": report.get("run"),
        "hosts": [h["host"] for h in report["hosts"]],
        "errors": list(report.get("errors") or []),
    }


def _pair_hosts(base_hosts, cand_hosts):
    if len(base_hosts) == 1 and len(cand_hosts) == 1:
        return [(base_hosts[0], cand_hosts[0])], [], []
    cand_by_name = {h["host"]: h for h in cand_hosts}
    pairs = [(h, cand_by_name[h["host"]]) for h in base_hosts if h["host"] in cand_by_name]
    base_names = {h["host"] for h in base_hosts}
    return (
        pairs,
        [h["host"] for h in base_hosts if h["host"] not in cand_by_name],
        [h["host"] for h in cand_hosts if h["host"] not in base_names],
    )


def _round(value, digits=6):
    return None if value is None else round(float(value), digits)


def difference_dict(difference):
    """A stats.Difference as JSON, with the change and its interval also as % of the baseline."""
    base = difference.baseline

    def pct(value):
        return None if value is None or not base else round(100.0 * value / base, 3)

    return {
        "baseline": _round(difference.baseline),
        "candidate": _round(difference.candidate),
        "delta": _round(difference.delta),
        "delta_pct": pct(difference.delta),
        "ci_low": _round(difference.low),
        "ci_high": _round(difference.high),
        "ci_low_pct": pct(difference.low),
        "ci_high_pct": pct(difference.high),
        "significant": difference.significant,
        "method": difference.method,
    }


def _step_times(host):
    return [s["time_ms"] for s in host["steps"] if s["time_ms"] is not None]


def _step_time(base, cand):
    base_times, cand_times = _step_times(base), _step_times(cand)
    result = {
        "baseline": base["summary"]["step_time_ms"],
        "candidate": cand["summary"]["step_time_ms"],
        "mean": None,
        "median": None,
    }
    # Steps that last 0 ms as rounded have no ratio to another side's.
    if sum(base_times) > 0 and sum(cand_times) > 0:
        result["mean"] = difference_dict(ratio_of_means_difference(base_times, cand_times))
    if base_times and cand_times and statistics.median(base_times) > 0 and statistics.median(cand_times) > 0:
        result["median"] = difference_dict(ratio_of_medians_difference(base_times, cand_times))
    return result


def _breakdown(base, cand):
    rows = []
    for category in BREAKDOWN_CATEGORIES:
        base_pct = base["summary"]["breakdown_pct"].get(category)
        cand_pct = cand["summary"]["breakdown_pct"].get(category)
        # A report written before a category existed (compute_unknown) had that time in another category: 0 here.
        base_ms = [s["breakdown_ms"].get(category, 0.0) for s in base["steps"]]
        cand_ms = [s["breakdown_ms"].get(category, 0.0) for s in cand["steps"]]
        rows.append(
            {
                "category": category,
                "label": BREAKDOWN_LABELS[category],
                "baseline_pct": base_pct,
                "candidate_pct": cand_pct,
                "delta_pct_points": None if base_pct is None or cand_pct is None else round(cand_pct - base_pct, 2),
                "per_step_ms": difference_dict(mean_difference(base_ms, cand_ms)) if base_ms and cand_ms else None,
            }
        )
    return rows


def _untraced_batch_prep_ms(base, cand, driver):
    """The baseline's untraced batch preparation per step (input.host_batch_prep at certainty low, gone in the
    candidate) when untraced time is what fell: the breakdown leaves such a stall idle, the finding read it as
    input; else None."""
    if driver["category"] != "idle" or driver["direction"] != "fell":
        return None

    def prep(report):
        return next((f for f in report.get("findings") or [] if f.get("id") == "input.host_batch_prep"), None)

    found = prep(base)
    metrics = (found or {}).get("evidence", {}).get("metrics", {})
    if found is None or prep(cand) is not None or metrics.get("certainty") != "low":
        return None
    return metrics.get("batch_prep_ms_per_step")


def _gpu_busy(base, cand):
    base_pct, cand_pct = base["summary"]["gpu_busy_pct"], cand["summary"]["gpu_busy_pct"]
    available = base_pct is not None and cand_pct is not None
    base_steps = [s["gpu_busy_pct"] for s in base["steps"] if s["gpu_busy_pct"] is not None]
    cand_steps = [s["gpu_busy_pct"] for s in cand["steps"] if s["gpu_busy_pct"] is not None]
    return {
        "baseline": base_pct,
        "candidate": cand_pct,
        "delta_points": round(cand_pct - base_pct, 2) if available else None,
        "per_step": difference_dict(mean_difference(base_steps, cand_steps))
        if available and base_steps and cand_steps
        else None,
        "compute": _compute_busy(base["summary"], cand["summary"]),
    }


def _compute_busy(base, cand):
    """Compute-kernel busy (copies and collectives left out) on both sides, and whether copies add enough to
    either side's busy for the report to show them apart, as analyze's header does."""
    pair = base.get("gpu_kernel_busy_pct"), cand.get("gpu_kernel_busy_pct")
    if None in pair:
        return None
    copies = base.get("gpu_compute_busy_pct"), cand.get("gpu_compute_busy_pct")
    return {
        "baseline": pair[0],
        "candidate": pair[1],
        "delta_points": round(pair[1] - pair[0], 2),
        "with_copies": None if None in copies else {"baseline": copies[0], "candidate": copies[1]},
        "copies_shown_apart": any(label == "with copies" for side in (base, cand) for label, _ in busy_figures(side)),
    }


def _devices(base, cand):
    cand_by_name = {d["name"]: d for d in cand["devices"]}
    rows = []
    for device in base["devices"]:
        other = cand_by_name.get(device["name"])
        if other is None:
            continue
        busy = (device["busy_pct"], other["busy_pct"])
        rows.append(
            {
                "name": device["name"],
                "baseline_busy_pct": busy[0],
                "candidate_busy_pct": busy[1],
                "delta_points": None if None in busy else round(busy[1] - busy[0], 2),
            }
        )
    return rows


def compare_hosts(base, cand):
    """The comparison of one host's HostReport before (base) and after (cand)."""
    step_time = _step_time(base, cand)
    breakdown = _breakdown(base, cand)
    change = change_of(step_time)
    driver = driver_of(change, breakdown)
    if driver is not None:
        driver["untraced_batch_prep_ms"] = _untraced_batch_prep_ms(base, cand, driver)
    gpu_busy = _gpu_busy(base, cand)
    mean = step_time["mean"]
    speedup = mean["baseline"] / mean["candidate"] if mean and mean["candidate"] else None
    findings = compare_findings(base, cand)
    comparability = _comparability(base, cand, findings)
    work_ratio = comparability["work_per_step"]["ratio"]
    comparison = {
        "baseline_host": base["host"],
        "candidate_host": cand["host"],
        "baseline_file": base.get("file"),
        "candidate_file": cand.get("file"),
        "configuration_changes": configuration_changes(base, cand),
        "change": change,
        "speedup": _round(speedup, 4),
        "step_time_ms": step_time,
        "per_example": _per_example(base, cand, comparability["work_per_step"]),
        "comparability": comparability,
        "gpu_busy_pct": gpu_busy,
        "breakdown": breakdown,
        "driver": driver,
        "devices": _devices(base, cand),
        "kernels": compare_kernels(base, cand),
        "findings": findings,
        "predictions": _predictions(base, cand, work_ratio),
        "notes": _notes(base, cand),
    }
    comparison["verdict"] = verdict_of(comparison)
    return comparison


# Findings whose fix changes the bytes copied to the device without changing the work.
_COPY_FINDING_PREFIXES = ("transfer.", "placement.")


def _comparability(base, cand, findings):
    info = {
        "hardware": hardware(base, cand),
        "kernel_share": kernel_share(base, cand),
        "work_per_step": work_per_step(base, cand),
    }
    copies_explained = any(f["id"].startswith(_COPY_FINDING_PREFIXES) for f in findings["resolved"])
    copies_unexplained = copy_bytes_moved(base, cand, info["work_per_step"]) and not copies_explained
    info["warnings"] = warnings_of(info["hardware"], info["kernel_share"], info["work_per_step"], copies_unexplained)
    return info


def _per_example(base, cand, work):
    """Step times divided by the work per step (the baseline's is 1): the change per example, or None when
    both sides do the same work per step. `source` says what measured the work (comparability.work_per_step)."""
    work_ratio = work["ratio"]
    base_times, cand_times = _step_times(base), _step_times(cand)
    if work_ratio is None or not base_times or not cand_times:
        return None
    means = ratio_of_means_difference(base_times, [t / work_ratio for t in cand_times])
    ratio = speedup_of(means)
    difference = difference_dict(means)
    return {
        "work_ratio": work_ratio,
        "time_ms": difference,
        "change": change_of({"mean": difference}),
        "speedup": None if ratio is None else _round(ratio.value, 4),
        "source": work["source"],
        "examples_per_step": work["examples_per_step"] if work["source"] == "examples_per_step" else None,
    }


def _predictions(base, cand, work_ratio=None):
    base_times, cand_times = _step_times(base), _step_times(cand)
    if not base_times or not cand_times:
        measured = None
    elif work_ratio is None:
        measured = measured_speedup(speedup_of(ratio_of_means_difference(base_times, cand_times)), "per_step")
    else:
        per_example = [t / work_ratio for t in cand_times]
        measured = measured_speedup(speedup_of(ratio_of_means_difference(base_times, per_example)), "per_example")
    rows = prediction_checks(base, cand, measured)
    return {"measured": measured, "findings": rows, "combined": combined_check(base, rows, measured)}


def _notes(base, cand):
    notes = []
    for side, host in (("baseline", base), ("candidate", cand)):
        count = host["summary"]["step_time_ms"]["count"]
        if count == 0:
            notes.append(f"The {side} has no step markers: step time cannot be compared.")
        elif not sum(_step_times(host)) > 0:
            notes.append(f"The {side}'s steps {ZERO_STEPS}: step time cannot be compared.")
        elif count == 1:
            notes.append(f"The {side} has a single step: the step-to-step noise cannot be estimated.")
    if base["summary"]["step_source"] != cand["summary"]["step_source"]:
        notes.append(
            f"Steps come from different sources ({base['summary']['step_source']} markers vs "
            f"{cand['summary']['step_source']} markers): step times may not be comparable."
        )
    return notes
