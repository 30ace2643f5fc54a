"""The host's summary section: verdict, confidence, GPUs busy, steps, where the time went and why each GPU idled."""

from __future__ import annotations

from tb_gpu_advisor.report import units
from tb_gpu_advisor.report.busy import busy_figures, busy_scope
from tb_gpu_advisor.vocabulary import (
    device_label,
    BREAKDOWN_LABELS,
    IDLE_CAUSE_LABELS,
    in_sentence,
)
from tb_gpu_advisor.report.section_model import Section


# How the Steps line names a step left out of the step statistics (summary.steps_left_out[].reason).
LEFT_OUT_WORDS = {"cut": "cut by the capture:", "warm-up": "warm-up:"}
# How the Time line's 16-bit/32-bit split is read (analysis.kernel_names.kernel_precision): a comparison writes
# bool, so it counts by the type it compares (as XProf counts it, docs/report.md).
PRECISION_BASIS = "16-bit/32-bit by the float type a kernel writes, or compares"


def summary_section(report: dict) -> Section:
    s = report["summary"]
    st = s["step_time_ms"]
    lines = []
    if s.get("verdict"):
        lines.append(f"Verdict: {s['verdict']}")
    elif s.get("bottleneck"):
        lines.append(f"Verdict: {s['bottleneck']}")
    lines.extend(confidence_lines(s))
    gpus = f"GPUs: {s['active_gpu_count']} active of {s['gpu_count']}" if s["gpu_count"] else "GPUs: none"
    (label, value), *others = busy_figures(s)
    busy = f"{label}: {units.percent(value)}   " if s["gpu_count"] else ""  # no GPU, no GPU busy figure
    scope = busy_scope(s) if s["gpu_count"] else None
    if others or scope:
        parts = ", ".join(f"{other} {units.percent(pct)}" for other, pct in others)
        busy = busy.rstrip() + " (" + "; ".join(part for part in (scope, parts) if part) + ")   "
    prep = f", host batch prep: {units.percent(s['batch_prep_pct'])}" if s.get("batch_prep_pct") else ""
    lines.append(f"{gpus}   {busy}input wait: {units.percent(s['input_wait_pct'])}{prep}")
    if st["count"]:
        mean, median, stdev = units.durations_ms(st["mean"], st["median"], st["stdev"])
        spread = f", stdev {stdev}" if st["stdev"] is not None else ""
        timed = ", timed on the device" if s.get("step_timing") == "device" and s["step_source"] != "device" else ""
        left = s.get("steps_left_out") or []
        gone = "".join(
            f"; {LEFT_OUT_WORDS[step['reason']]} {step['name']} ({units.duration_ms(step['time_ms'])}) left out"
            for step in left
        )
        lines.append(
            f"Steps: {st['count']} ({s['step_source']} markers{timed}{gone})   mean {mean}, median {median}{spread}"
        )
    else:
        lines.append(f"Steps: none found; measured over {units.duration_ms(s['analysis_window_ms'])} of activity")
    shares = [(BREAKDOWN_LABELS[k], v) for k, v in s["breakdown_pct"].items() if v]
    shares.sort(key=lambda item: -item[1])
    if shares:
        notes = []
        count = s.get("active_gpu_count") or 0
        computing = s.get("breakdown_gpus") or []
        if count > 1 and len(computing) == 1:  # the others' kernels lie outside the steps (a partial capture)
            notes.append(f"compute: {computing[0]}'s; the other GPUs ran no kernel in the profiled steps")
        elif count > 1:  # not the header's busy mean: compute where any of the GPUs computes (BREAKDOWN_DEFINITION)
            notes.append(f"compute: any of the {len(computing) or count} GPUs computing")
        if s["breakdown_pct"].get("compute_unknown"):
            notes.append(f"{PRECISION_BASIS}; other: no float type in the name")
        elif s["breakdown_pct"].get("compute_16bit"):
            notes.append(PRECISION_BASIS)
        basis = f"   ({'; '.join(notes)})" if notes else ""
        lines.append(
            "Time: " + ", ".join(f"{in_sentence(label)} {units.percent(value)}" for label, value in shares) + basis
        )
    lines.extend(idle_lines(report.get("idle_attribution"), report.get("trace_format")))
    return Section(f"{report['host']}", lines=tuple(lines))


IDLE_GPUS_LISTED = 4


def idle_lines(idle, trace_format=None):
    """One line per GPU (at most IDLE_GPUS_LISTED): its idle share and why, largest cause first."""
    if not idle:
        return []
    lines = []
    for gpu in idle["gpus"][:IDLE_GPUS_LISTED]:
        causes = sorted(((IDLE_CAUSE_LABELS[k], v) for k, v in gpu["cause_pct"].items() if v), key=lambda c: -c[1])
        why = ", ".join(f"{in_sentence(label)} {units.percent(value)}" for label, value in causes)
        lines.append(
            f"Idle {device_label(gpu['device'], trace_format)}: {units.percent(gpu['idle_pct'])}"
            + (f" ({why})" if why else "")
        )
    hidden = len(idle["gpus"]) - IDLE_GPUS_LISTED
    if hidden > 0:
        lines.append(f"  ... {hidden} more GPUs in the JSON report (idle_attribution)")
    return lines


def confidence_lines(summary: dict) -> list[str]:
    """`Confidence: low (framework: tensorflow)` and each reason as an indented line; none for older reports."""
    confidence = summary.get("confidence")
    if not isinstance(confidence, dict) or not confidence.get("level"):
        return []
    framework = summary.get("framework")
    head = f"Confidence: {confidence['level']}" + (f"   Framework: {framework}" if framework else "")
    return [head] + [f"   - {reason}" for reason in confidence.get("reasons") or []]
