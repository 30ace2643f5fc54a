"""Renders a run report as one self-contained HTML page: inline CSS and SVG charts, no scripts, no network."""

from tb_gpu_advisor import __version__
from tb_gpu_advisor.report import units
from tb_gpu_advisor.report.busy import busy_figures, busy_scope
from tb_gpu_advisor.report.fix_blocks import fix_blocks
from tb_gpu_advisor.report.safe_text import escape_controls
from tb_gpu_advisor.report.sections import host_sections
from tb_gpu_advisor.vocabulary import (
    BOTTLENECK_LABELS,
    BREAKDOWN_LABELS,
    BUSY_DEFINITIONS,
    LEFT_ARROW,
    OCCUPANCY_LABELS,
    in_sentence,
    matrix_unit_labels,
    occupancy_kind,
)
from tb_gpu_advisor.report.html_escape import _e
from tb_gpu_advisor.report.html_charts import _charts

KERNELS_TABULATED = 25
NAME_SHOWN = 90  # longer kernel names are shortened in tables, the full name one click away
# No scripts, no fetches: only inline styles and data: images may load, even if a string slipped through.
_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;margin:0;background:#f6f8fa}
main{max-width:920px;margin:0 auto;padding:24px 20px 48px;background:#fff}
h1{font-size:22px;margin:0 0 4px}.back{margin:0 0 8px;font-size:13px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #d0d7de;
padding-bottom:4px}h3{font-size:15px;margin:20px 0 6px}.meta{color:#59636e;margin:0}
.verdict{background:#fff8c5;border:1px solid #d4a72c;border-radius:6px;padding:10px 14px;margin:12px 0;
font-weight:600}.cards{display:flex;gap:10px;flex-wrap:wrap;margin:12px 0}.card{border:1px solid #d0d7de;
border-radius:6px;padding:8px 12px;min-width:130px}.card b{display:block;font-size:20px}.card span{color:#59636e;
font-size:12px}ol.findings li{margin-bottom:8px}.sev{display:inline-block;border-radius:10px;padding:0 8px;
font-size:12px;color:#fff;background:#59636e;margin-right:6px}.sev-high{background:#cf222e}
.sev-medium{background:#bc4c00}.sev-low{background:#0969da}.fix{color:#1a7f37}
.fix-text summary{cursor:pointer;color:#59636e;font-size:13px}.fix-text p{margin:6px 0;white-space:normal;
overflow-wrap:anywhere}.fix-text pre{margin:6px 0;padding:8px 10px;background:#f6f8fa;border:1px solid #d0d7de;
border-radius:6px;max-width:100%;box-sizing:border-box;overflow-x:auto;white-space:pre}.fix-text code{
font:12px/1.45 ui-monospace,SFMono-Regular,Menlo,monospace;white-space:pre}.notes li{color:#59636e}
table{border-collapse:collapse;margin:6px 0 12px;font-size:13px}th,td{border-bottom:1px solid #eaeef2;
padding:3px 8px;text-align:left;vertical-align:top}th{background:#f6f8fa}td.num,th.num{text-align:right;
white-space:nowrap}td.name{word-break:break-all;font-family:ui-monospace,SFMono-Regular,Menlo,monospace;
font-size:12px}td.name summary{cursor:pointer}svg.chart{display:block;width:100%;height:auto}
svg .label{font-size:12px;fill:#1f2328}
svg .axis-title{font-size:12px;fill:#59636e}svg .on-bar{font-size:12px;fill:#fff;font-weight:600}
svg .grid{stroke:#eaeef2}.legend{display:flex;flex-wrap:wrap;gap:4px 14px;font-size:12px;margin:4px 0 10px}
.legend i{display:inline-block;width:11px;height:11px;margin-right:5px;vertical-align:-1px}
.confidence{border-left:4px solid #1a7f37;padding:4px 12px;margin:0 0 12px}.confidence ul{margin:4px 0;
padding-left:18px;color:#59636e}.confidence-medium{border-color:#bc4c00}.confidence-low{border-color:#cf222e;
background:#fff5f5}.overlap{color:#59636e;font-style:italic}.speedup{color:#1a7f37}.error{color:#cf222e}figure{margin:8px 0 16px}figcaption{font-size:12px;color:#59636e}
"""


def _title(text):
    """A title attribute (the definition shown on hover), or nothing."""
    return f' title="{_e(text)}"' if text else ""


def report_title(report):
    """ "GPU Advisor report: <run>", or the hosts when the report is of files outside a run."""
    if report.get("run"):
        return f"GPU Advisor report: {report['run']}"
    hosts = [host["host"] for host in report["hosts"]]
    return f"GPU Advisor report: {', '.join(hosts)}" if hosts else "GPU Advisor report"


def render_html(report, back=None, shown_path=None):
    """The whole report as an HTML document string; every string from the profile is escaped, and control,
    bidirectional-override and surrogate characters made visible (report.safe_text). `back` (a relative URL) adds
    a link back to the site's index; `shown_path(path)` writes a file's path as the page shows it."""
    title = report_title(report)
    shown_path = shown_path or (lambda path: path)
    body = ([f'<nav class="back"><a href="{_e(back)}">{LEFT_ARROW} All runs</a></nav>'] if back else []) + [
        f"<h1>{_e(title)}</h1>",
        f'<p class="meta">{len(report["hosts"])} host(s) · tb-gpu-advisor {_e(__version__)}</p>',
    ]
    for host in report["hosts"]:
        body.extend(_host(host))
    for error in report.get("errors", []):
        body.append(f'<p class="error">Error: {_e(shown_path(error["file"]))}: {_e(error["error"])}</p>')
    return escape_controls(
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{_CSS}</style></head>\n<body><main>\n"
        + "\n".join(body)
        + "\n</main></body></html>\n",
        keep="\n\t",
    )


def _verdict(host):
    summary = host["summary"]
    if summary.get("verdict"):
        label = BOTTLENECK_LABELS.get(summary.get("bottleneck"), summary.get("bottleneck"))
        said = not label or summary["verdict"].lower().startswith(label.lower())
        return summary["verdict"] if said else f"{label}: {summary['verdict']}"
    if host.get("findings"):
        return host["findings"][0]["title"]
    shares = sorted(((v, k) for k, v in summary["breakdown_pct"].items() if v), reverse=True)
    if not shares:
        return "No activity to break down in this profile."
    value, key = shares[0]
    return f"Most of the time is {in_sentence(BREAKDOWN_LABELS[key])} ({units.percent(value)})."


def _confidence(summary):
    """The trace confidence beside the verdict, with each reason and how to recapture."""
    confidence = summary.get("confidence")
    if not isinstance(confidence, dict) or not confidence.get("level"):
        return []
    level = str(confidence["level"])
    framework = f" · framework: {_e(summary['framework'])}" if summary.get("framework") else ""
    out = [f'<div class="confidence confidence-{_e(level)}"><b>Confidence: {_e(level)}</b>{framework}']
    reasons = confidence.get("reasons") or []
    if reasons:
        out.append("<ul>" + "".join(f"<li>{_e(reason)}</li>" for reason in reasons) + "</ul>")
    out.append("</div>")
    return ["".join(out)]


def _host(host):
    s = host["summary"]
    st = s["step_time_ms"]
    out = [
        f"<h2>{_e(host['host'])}</h2>",
        f'<div class="verdict">{_e(_verdict(host))}</div>',
        *_confidence(s),
        '<div class="cards">',
    ]
    (label, value), *others = busy_figures(s)
    lead = BUSY_DEFINITIONS["gpu_compute_busy" if others else "gpu_busy"]
    scope = busy_scope(s)
    busy = [(f"{label} ({scope})" if scope else label, units.percent(value), lead)] + [
        (f"GPU busy {other}", units.percent(pct), BUSY_DEFINITIONS["gpu_busy"]) for other, pct in others
    ]
    prep = [("host batch prep", units.percent(s["batch_prep_pct"]), None)] if s.get("batch_prep_pct") else []
    cards = (
        busy
        + [("input wait", units.percent(s["input_wait_pct"]), None)]
        + prep
        + [
            ("mean step", units.duration_ms(st["mean"]), None),
            ("steps", str(st["count"]), None),
            ("GPUs active", f"{s['active_gpu_count']} of {s['gpu_count']}", None),
        ]
    )
    out += [
        f'<div class="card"{_title(title)}><b>{_e(value)}</b><span>{_e(name)}</span></div>'
        for name, value, title in cards
    ]
    out.append("</div>")
    out += _findings(host.get("findings") or [])
    if host["notes"]:
        out.append('<h3>Notes</h3><ul class="notes">' + "".join(f"<li>{_e(n)}</li>" for n in host["notes"]) + "</ul>")
    out += _charts(host)
    out += _tables(host)
    return out


def _findings(findings):
    if not findings:
        return []
    out = ['<h3>Findings</h3><ol class="findings">']
    number = {finding.get("id"): index for index, finding in enumerate(findings, 1)}
    for finding in findings:
        severity = str(finding.get("severity") or "info")
        item = f'<li><span class="sev sev-{_e(severity)}">{_e(severity)}</span><b>{_e(finding["title"])}</b>'
        phrase = units.speedup_phrase(finding.get("estimated_speedup"), finding.get("speedup_kind"))
        if phrase:
            item += f' <span class="speedup">{_e(phrase)} faster</span>'
        if finding.get("summary"):
            item += f"<br>{_e(finding['summary'])}"
        shared = [f"#{number[other]}" for other in finding.get("overlaps_with") or [] if other in number]
        if shared:
            item += (
                f'<br><span class="overlap">Shares recoverable time with {_e(", ".join(shared))}: their '
                "speedups do not add up.</span>"
            )
        if finding.get("fix_summary"):
            item += f'<br><span class="fix">Fix: {_e(finding["fix_summary"])}</span>'
        item += _fix_text(finding.get("fix"))
        out.append(item + "</li>")
    return out + ["</ol>"]


def _fix_text(fix):
    """The whole fix, folded: prose paragraphs that wrap, code blocks that keep their lines and scroll sideways
    (the tab's split, report.fix_blocks)."""
    blocks = fix_blocks(fix)
    if not blocks:
        return ""
    body = "".join(
        f"<pre><code>{_e(block.text)}</code></pre>" if block.kind == "code" else f"<p>{_e(block.text)}</p>"
        for block in blocks
    )
    return f'<details class="fix-text"><summary>How to fix</summary>{body}</details>'


def _table(headers, rows, numeric, name_column=None):
    head = "".join(f'<th class="{"num" if right else ""}">{_e(h)}</th>' for h, right in zip(headers, numeric))
    body = []
    for row in rows:
        cells = []
        for index, (cell, right) in enumerate(zip(row, numeric)):
            if index == name_column and len(str(cell)) > NAME_SHOWN:
                cells.append(
                    f'<td class="name"><details><summary>{_e(units.kernel_name(str(cell), NAME_SHOWN))}'
                    f"</summary>{_e(cell)}</details></td>"
                )
                continue
            css = "num" if right else ("name" if index == name_column else "")
            cells.append(f'<td class="{css}">{_e(cell)}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _kernel_table(host):
    kernels = host["kernels"][:KERNELS_TABULATED]
    occupancy = occupancy_kind(host["kernels"])
    occupancy_key = "occupancy_pct" if occupancy == "theoretical" else "achieved_occupancy_pct"
    rows = [
        (
            k["name"],
            k["op_name"] or "-",
            units.launch_dims(k["grid"], k["block"]),
            units.count(k["occurrences"]),
            units.duration_us(k["total_us"]),
            units.duration_us(k["avg_us"]),
            units.percent(k.get(occupancy_key)),
            "yes" if k["uses_tensor_cores"] else "no",
            units.percent(k.get("peak_pct")),
        )
        for k in kernels
    ]
    title = (
        "Kernels"
        if len(host["kernels"]) <= KERNELS_TABULATED
        else f"Kernels (top {KERNELS_TABULATED} of {len(host['kernels'])} by total time)"
    )
    return [
        f"<h3>{_e(title)}</h3>",
        _table(
            (
                "kernel",
                "op",
                "grid / block",
                "count",
                "total",
                "avg",
                OCCUPANCY_LABELS[occupancy][0].lower(),
                matrix_unit_labels(host["devices"])[1],
                "of roof",
            ),
            rows,
            (False, False, False, True, True, True, True, False, True),
            name_column=0,
        ),
    ]


def _tables(host):
    out = []
    for index, section in enumerate(host_sections(host)):
        if index == 0 or section.title in ("Findings", "Notes"):
            continue
        if section.title.startswith("Kernels"):
            out += _kernel_table(host)
            continue
        out.append(f"<h3>{_e(section.title)}</h3>")
        out += [f"<p>{_e(line.strip())}</p>" for line in section.lines]
        if section.table:
            out.append(_table(section.table.headers, section.table.rows, section.table.numeric))
    return out
