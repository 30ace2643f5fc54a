"""Renders a Comparison dict as text for a terminal or markdown for a pull request."""

import html

from tb_gpu_advisor.comparison.predictions import TOLERANCE
from tb_gpu_advisor.report import units
from tb_gpu_advisor.report.section_model import Section, Table
from tb_gpu_advisor.report.text import render_section
from tb_gpu_advisor.report.finite import to_json
from tb_gpu_advisor.report.safe_text import escape_controls
from tb_gpu_advisor.vocabulary import ARROW, FINDING_CHANGE_LABELS, LEFT_ARROW, TIMES, counted

KERNELS_SHOWN = 8
NAME_WIDTH = 60
_KERNEL_GROUP_TITLES = {
    "slower": "Slower kernels",
    "faster": "Faster kernels",
    "new": "New kernels",
    "fused": "Fused kernels (new, replacing kernels gone)",
    "gone": "Kernels gone",
}


def _signed_ms(value):
    if value is None:
        return "-"
    return ("+" if value > 0 else "-" if value < 0 else "") + units.duration_ms(abs(value))


def _signed_pct(value, suffix="%"):
    return "-" if value is None else f"{value:+.1f}{suffix}"


def _interval_pct(diff):
    if diff is None or diff["ci_low_pct"] is None:
        return "-"
    return f"{diff['ci_low_pct']:+.1f}% to {diff['ci_high_pct']:+.1f}%"


def _side_line(label, run, file, host):
    where = f"run {run}, host {host}" if run else (file or host)
    return f"{label}: {where}"


def _step_section(host):
    st = host["step_time_ms"]
    rows = []
    for key in ("mean", "median"):
        diff = st[key]
        if diff is not None:
            rows.append(
                (
                    key,
                    units.duration_ms(diff["baseline"]),
                    units.duration_ms(diff["candidate"]),
                    f"{_signed_ms(diff['delta'])} ({_signed_pct(diff['delta_pct'])})",
                    _interval_pct(diff),
                    "yes" if diff["significant"] else "no",
                )
            )
    per_example = host.get("per_example")
    if per_example:
        diff = per_example["time_ms"]
        rows.append(
            (
                f"mean / {per_example['work_ratio']:.2f}x work",
                units.duration_ms(diff["baseline"]),
                units.duration_ms(diff["candidate"]),
                f"{_signed_ms(diff['delta'])} ({_signed_pct(diff['delta_pct'])})",
                _interval_pct(diff),
                "yes" if diff["significant"] else "no",
            )
        )
    rows.append(("steps", str(st["baseline"]["count"]), str(st["candidate"]["count"]), "", "", ""))
    rows.append(
        ("stdev", units.duration_ms(st["baseline"]["stdev"]), units.duration_ms(st["candidate"]["stdev"]), "", "", "")
    )
    rows = _one_unit(rows, (1, 2), skip=("steps",))
    headers = ("step time", "baseline", "candidate", "change", "95% CI", "beyond noise")
    return Section("Step time", table=Table(headers, tuple(rows), (False, True, True, True, True, False)))


def _one_unit(rows, columns, skip=()):
    """`rows` with the durations of `columns` rewritten in one unit for the table (units.durations_ms), so a
    stdev of `0.07 ms` stands under a mean of `14.89 ms`, not `71.3 µs`."""
    cells = [
        (r, c)
        for r, row in enumerate(rows)
        if row[0] not in skip
        for c in columns
        if units.parse_duration_ms(row[c]) is not None
    ]
    texts = units.durations_ms(*(units.parse_duration_ms(rows[r][c]) for r, c in cells))
    out = [list(row) for row in rows]
    for (r, c), text in zip(cells, texts):
        out[r][c] = text
    return [tuple(row) for row in out]


def _breakdown_section(host):
    rows = []
    for row in host["breakdown"]:
        per_step = row["per_step_ms"]
        shares = (row["baseline_pct"], row["candidate_pct"])
        if not any(shares) and not (per_step and (per_step["baseline"] or per_step["candidate"])):
            continue
        marker = f" {LEFT_ARROW}" if host["driver"] and host["driver"]["category"] == row["category"] else ""
        rows.append(
            (
                row["label"] + marker,
                units.duration_ms(per_step["baseline"]) if per_step else "-",
                units.duration_ms(per_step["candidate"]) if per_step else "-",
                _signed_ms(per_step["delta"]) if per_step else "-",
                units.percent(shares[0]),
                units.percent(shares[1]),
                _signed_pct(row["delta_pct_points"], " pt"),
            )
        )
    rows = _one_unit(rows, (1, 2))
    headers = ("category", "base/step", "cand/step", "change", "base share", "cand share", "share change")
    lines = (
        (
            f"Time per step in each category (each instant counted once); {LEFT_ARROW} marks the change that "
            "made the difference.",
        )
        if host["driver"]
        else ()
    )
    return Section(
        "Where the time went", lines=lines, table=Table(headers, tuple(rows), (False,) + (True,) * 6) if rows else None
    )


def gpu_busy_change(busy):
    """ "GPU busy a → b (±n points)"; or, when copies are shown apart (as analyze's header does), compute busy
    first and busy with copies in brackets."""
    compute = busy.get("compute")
    total = f"{units.percent(busy['baseline'])} {ARROW} {units.percent(busy['candidate'])}"
    if not compute or not compute["copies_shown_apart"]:
        return f"GPU busy {total} ({_signed_pct(busy['delta_points'], ' points')})"
    copies = compute["with_copies"] or busy
    return (
        f"GPU compute busy {units.percent(compute['baseline'])} {ARROW} {units.percent(compute['candidate'])} "
        f"({_signed_pct(compute['delta_points'], ' points')}; with copies {units.percent(copies['baseline'])} "
        f"{ARROW} {units.percent(copies['candidate'])})"
    )


def _gpu_section(host):
    busy = host["gpu_busy_pct"]
    if busy["delta_points"] is None:
        return Section("GPU busy", lines=("Not available: a side has no GPU activity.",))
    lines = [gpu_busy_change(busy)]
    rows = tuple(
        (
            d["name"],
            units.percent(d["baseline_busy_pct"]),
            units.percent(d["candidate_busy_pct"]),
            _signed_pct(d["delta_points"], " pt"),
        )
        for d in host["devices"]
    )
    table = (
        Table(("device", "baseline", "candidate", "change"), rows, (False, True, True, True)) if len(rows) > 1 else None
    )
    return Section("GPU busy", lines=tuple(lines), table=table)


def _kernel_sections(host):
    kernels = host["kernels"]
    counts = kernels["counts"]
    if not any(counts.values()):
        return [Section("Kernels", lines=("No kernels on either side.",))]
    basis = "per step" if kernels["basis"] == "per_step" else "over each profile"
    summary = (
        f"Matched by name, op and launch shape, time {basis} (per launch where a kernel runs more or less "
        f"often per step): {counts['new']} new, {counts.get('fused', 0)} fused, {counts['gone']} gone, {counts['faster']} "
        f"faster, {counts['slower']} slower, {counts['unchanged']} unchanged."
    )
    sections = [Section("Kernels", lines=(summary,))]
    for group in ("slower", "faster", "new", "fused", "gone"):
        entries = kernels.get(group, [])[:KERNELS_SHOWN]
        if not entries:
            continue
        rows = tuple(
            (
                units.shorten(e["name"], NAME_WIDTH),
                units.duration_us(e["baseline_us"]),
                units.duration_us(e["candidate_us"]),
                _signed_pct(e["delta_pct"]),
            )
            for e in entries
        )
        title = _KERNEL_GROUP_TITLES[group] + (
            f" (top {KERNELS_SHOWN} of {counts[group]})" if counts[group] > KERNELS_SHOWN else ""
        )
        sections.append(
            Section(title, table=Table(("kernel", "baseline", "candidate", "change"), rows, (False, True, True, True)))
        )
    return sections


def _findings_section(host):
    findings = host["findings"]
    if not findings["baseline_count"] and not findings["candidate_count"]:
        return Section("Findings", lines=("No findings on either side.",))
    lines = []
    for group in ("resolved", "new", "persisting"):
        for f in findings[group]:
            label = FINDING_CHANGE_LABELS["no_longer_costs" if f.get("cause_still_present") else group]
            lines.append(f"{label}: [{f['severity']}] {f['title']} ({f['id']})")
    return Section("Findings", lines=tuple(lines) or ("The same findings on both sides.",))


def _comparability_section(host):
    info = host.get("comparability")
    if not info or not info["warnings"]:
        return None
    hardware, share, work = info["hardware"], info["kernel_share"], info["work_per_step"]
    lines = [f"Caution: {warning}." for warning in info["warnings"]]
    lines.append(f"GPUs: {hardware['baseline'] or 'none'} {ARROW} {hardware['candidate'] or 'none'}.")
    if None not in share.values():
        lines.append(
            f"Kernel time matched by name: baseline {100 * share['baseline']:.0f}%, candidate "
            f"{100 * share['candidate']:.0f}%."
        )
    examples = work.get("examples_per_step")
    if examples:
        scope = "" if examples["scope"] == "global" else " per device"
        lines.append(
            f"Examples per step{scope} (from the input tensors): baseline {examples['baseline']}, candidate "
            f"{examples['candidate']}."
        )
    ratios = [
        f"{label} {work[key]:.2f}x"
        for key, label in (
            ("h2d_bytes_ratio", "host-to-device bytes per step"),
            ("launch_ratio", "kernel launches per step"),
        )
        if work[key] is not None
    ]
    if ratios:
        lines.append("Candidate / baseline: " + ", ".join(ratios) + ".")
    return Section("Comparability", lines=tuple(lines))


def measured_text(measured):
    """`2.17× faster (95% CI 1.98× to 2.40×)` for a `predictions.measured` dict, or `-`."""
    if measured is None:
        return "-"
    text = units.speed_change(measured["value"])
    if measured["low"] is None:
        return f"{text} (noise unknown)"
    return f"{text} (95% CI {measured['low']:.2f}{TIMES} to {measured['high']:.2f}{TIMES})"


def _estimate(value, kind):
    return units.speedup_phrase(value, kind) or "none"


_PREDICTION_STATUS = {"resolved": "resolved", "reduced": "reduced"}


PREDICTIONS_HINT = (
    "Each finding the candidate resolved or reduced, with the speedup the baseline predicted for its fix; ratio = "
    "predicted / measured. The measured change is every change made at once, so only the verdict's finding(s), "
    "which the combined estimate names, are checked against it; the others went with them and are not checked "
    f"alone. An estimate (about) is checked within {TOLERANCE:.0%} of the measured speedup; a bound (up to) is an "
    "upper limit: it held (within noise where the measured 95% CI includes it), or the fix beat it (the CI above "
    "it) and the estimate was too low."
)


def combined_line(combined, score, ratio):
    """ "Combined estimate of the verdict's finding(s) (ids): up to 3.57×, bound held …; 2 other findings also
    resolved or reduced." """
    ids = combined["finding_ids"]
    noun = "finding" if len(ids) == 1 else "findings"
    text = (
        f"Combined estimate of the verdict's {noun} ({', '.join(ids)}): "
        f"{_estimate(combined['predicted'], combined['predicted_kind'])}, {score}{ratio}"
    )
    missed = [i for i in ids if i not in combined["addressed_ids"]]
    if missed:
        text += f"; the candidate did not resolve or reduce {', '.join(missed)}"
    others = combined.get("other_ids")
    if others:
        text += f"; {counted(len(others), 'other finding')} also resolved or reduced, not checked alone"
    return text + "."


def _predictions_section(host):
    predictions = host.get("predictions") or {}
    rows = predictions.get("findings") or []
    if not rows:
        return None
    measured = predictions.get("measured")
    basis = "mean time per example" if measured and measured["basis"] == "per_example" else "mean step time"
    table_rows = []
    for row in rows:
        within = row.get("score_text") or {True: "yes", False: "no", None: "-"}[row["within_tolerance"]]
        status = _PREDICTION_STATUS[row["status"]]
        if row["candidate_estimate"] is not None:
            status += f" (now {_estimate(row['candidate_estimate'], row['candidate_kind'])})"
        table_rows.append(
            (
                units.shorten(row["title"] or row["id"], NAME_WIDTH),
                status,
                _estimate(row["predicted"], row["predicted_kind"]),
                "-" if row["ratio"] is None else f"{row['ratio']:.2f}",
                within,
            )
        )
    lines = (f"Measured: {measured_text(measured)}, {basis}, baseline / candidate.", PREDICTIONS_HINT)
    combined = predictions.get("combined")
    if combined:
        score = combined.get("score_text") or "not checked"
        if combined.get("score") in ("within", "not_within"):
            score += " of the measured speedup"
        ratio = "" if combined["ratio"] is None else f" (ratio {combined['ratio']:.2f})"
        lines += (combined_line(combined, score, ratio),)
    return Section(
        "Prediction checked",
        lines=lines,
        table=Table(
            ("finding", "status", "predicted", "ratio", "check"), tuple(table_rows), (False, False, True, True, False)
        ),
    )


def comparison_sections(comparison):
    """Sections for every matched host pair, verdict first."""
    sections = []
    for host in comparison["hosts"]:
        lines = (
            _side_line("Baseline", comparison["baseline"]["run"], host["baseline_file"], host["baseline_host"]),
            _side_line("Candidate", comparison["candidate"]["run"], host["candidate_file"], host["candidate_host"]),
            f"Verdict: {host['verdict']}",
        )
        title = "Comparison" if len(comparison["hosts"]) == 1 else f"Comparison: {host['baseline_host']}"
        sections.append(Section(title, lines=lines))
        if host.get("configuration_changes"):
            sections.append(
                Section(
                    "Configuration changes", lines=tuple(change["text"] for change in host["configuration_changes"])
                )
            )
        sections += [_step_section(host), _breakdown_section(host), _gpu_section(host)]
        sections += _kernel_sections(host) + [_findings_section(host)]
        predictions = _predictions_section(host)
        if predictions:
            sections.append(predictions)
        comparability = _comparability_section(host)
        if comparability:
            sections.append(comparability)
        if host["notes"]:
            sections.append(Section("Notes", lines=tuple(host["notes"])))
    unmatched = comparison["unmatched_hosts"]
    lines = [f"Only in the {side}: {', '.join(names)}" for side, names in unmatched.items() if names]
    for side in ("baseline", "candidate"):
        lines += [f"{side} error: {e['file']}: {e['error']}" for e in comparison[side]["errors"]]
    if lines or not comparison["hosts"]:
        sections.append(Section("Not compared", lines=tuple(lines) or (comparison["verdict"],)))
    return sections


def render_comparison_text(comparison):
    out = []
    for section in comparison_sections(comparison):
        out.extend(render_section(section))
        out.append("")
    return escape_controls("\n".join(out).rstrip() + "\n")


def _md(value):
    return html.escape(str(value), quote=False).replace("|", "\\|").replace("\n", " ")


def render_comparison_markdown(comparison):
    out = ["# GPU Advisor comparison", "", f"**Verdict:** {_md(comparison['verdict'])}", ""]
    single = len(comparison["hosts"]) == 1
    for section in comparison_sections(comparison):
        out += [f"## {_md(section.title)}", ""]
        out += [f"{_md(line)}  " for line in section.lines if not (single and line.startswith("Verdict: "))]
        if section.table:
            table = section.table
            out.append("| " + " | ".join(_md(h) for h in table.headers) + " |")
            out.append("|" + "|".join("---:" if right else "---" for right in table.numeric) + "|")
            out += ["| " + " | ".join(_md(c) for c in row) + " |" for row in table.rows]
        out.append("")
    return escape_controls("\n".join(out).rstrip() + "\n")


COMPARISON_RENDERERS = {
    "text": render_comparison_text,
    "markdown": render_comparison_markdown,
    "json": to_json,
}
