"""Turns a HostReport dict into titled sections of lines and tables, shared by the text and markdown renderers."""

from __future__ import annotations

from tb_gpu_advisor.report import units
from tb_gpu_advisor.report.collectives_section import collectives_section
from tb_gpu_advisor.report.configuration_section import configuration_rows
from tb_gpu_advisor.report.device_sections import devices_section, launch_section, transfers_section
from tb_gpu_advisor.report.kernel_sections import kernels_section, roofline_section
from tb_gpu_advisor.report.section_model import Section, Table
from tb_gpu_advisor.report.summary_section import summary_section
from tb_gpu_advisor.vocabulary import BREAKDOWN_LABELS, BREAKDOWN_SHORT_LABELS

STEPS_LISTED = 10


def host_sections(report: dict) -> list[Section]:
    """Sections of one host, in reading order: verdict and findings first."""
    sections = [summary_section(report)]
    findings = _findings(report)
    if findings:
        sections.append(findings)
    if report["notes"]:
        sections.append(Section("Notes", lines=tuple(report["notes"])))
    if report.get("configuration"):
        sections.append(
            Section(
                "Configuration",
                table=Table(("setting", "value"), configuration_rows(report["configuration"]), (False, False)),
            )
        )
    if report["steps"]:
        sections.append(_steps(report))
    if report["devices"]:
        sections.append(devices_section(report))
    if report["kernels"]:
        sections.append(kernels_section(report))
    roofline = roofline_section(report)
    if roofline:
        sections.append(roofline)
    if report["launch"]["kernel_count"]:
        sections.append(launch_section(report))
    if any(t["count"] for t in report["transfers"].values()):
        sections.append(transfers_section(report))
    if report.get("collectives"):
        sections.append(collectives_section(report))
    return sections


def _findings(report):
    findings = report.get("findings") or []
    if not findings:
        return None
    lines = []
    number = {finding.get("id"): index for index, finding in enumerate(findings, 1)}
    for index, finding in enumerate(findings, 1):
        speedup = finding.get("estimated_speedup")
        shared = [f"#{number[other]}" for other in finding.get("overlaps_with") or [] if other in number]
        overlap = f"; shares time with {', '.join(shared)}" if shared else ""
        phrase = units.speedup_phrase(speedup, finding.get("speedup_kind"))
        gain = f" ({phrase}{overlap})" if phrase else ""
        lines.append(f"{index}. [{finding['severity']}] {finding['title']}{gain}")
        if finding.get("summary"):
            lines.append(f"   {finding['summary']}")
        if finding.get("fix_summary"):
            lines.append(f"   Fix: {finding['fix_summary']}")
    return Section(
        "Findings",
        lines=tuple(lines),
        terminal_hint="Fixes with code to paste: --format markdown (or json, findings[].fix).",
    )


STEP_COLUMNS = 3


def _steps(report):
    totals = {k: sum(step["breakdown_ms"].get(k, 0.0) for step in report["steps"]) for k in BREAKDOWN_LABELS}
    keys = [k for k in sorted(totals, key=lambda k: -totals[k]) if totals[k] > 0][:STEP_COLUMNS]
    keys.sort(key=list(BREAKDOWN_LABELS).index)
    rest = [k for k in BREAKDOWN_LABELS if k not in keys]
    shown = report["steps"][:STEPS_LISTED]
    times = [
        [step["time_ms"]]
        + [step["breakdown_ms"][k] for k in keys]
        + ([sum(step["breakdown_ms"].get(k, 0.0) for k in rest)] if any(totals[k] for k in rest) else [])
        for step in shown
    ]
    texts = iter(units.durations_ms(*(value for row in times for value in row)))  # one unit for the table
    gpu = bool(report["summary"]["gpu_count"])  # no GPU busy column on a trace without a GPU
    rows = []
    for step, row in zip(shown, times):
        cells = [next(texts) for _ in row]
        busy = (units.percent(step["gpu_busy_pct"]),) if gpu else ()
        rows.append((units.shorten(step["name"], 18), cells[0]) + busy + tuple(cells[1:]))
    title = (
        "Steps" if len(report["steps"]) <= STEPS_LISTED else f"Steps (first {STEPS_LISTED} of {len(report['steps'])})"
    )
    headers = (
        ("step", "time")
        + (("GPU busy",) if gpu else ())
        + tuple(BREAKDOWN_SHORT_LABELS[k] for k in keys)
        + (("other",) if any(totals[k] for k in rest) else ())
    )
    return Section(title, table=Table(headers, tuple(rows), (False,) + (True,) * (len(headers) - 1)))
