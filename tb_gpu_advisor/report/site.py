"""A static site of a whole logdir: index.html (every run's row, as the tab's overview: sortable, filterable)
and one self-contained report page per run under runs/."""

import os
import re
from html import escape

from tb_gpu_advisor import __version__
from tb_gpu_advisor.overview.rows import run_summary, with_changes
from tb_gpu_advisor.report.html import render_html
from tb_gpu_advisor.report.safe_text import escape_controls
from tb_gpu_advisor.vocabulary import BOTTLENECK_LABELS

# Inline styles and the index's own small sorting/filtering script only; nothing is fetched.
_CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'"
_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;margin:0;background:#f6f8fa}
main{max-width:1200px;margin:0 auto;padding:24px 20px 48px;background:#fff}h1{font-size:22px;margin:0 0 4px}
.meta{color:#59636e;margin:0 0 12px}input{font:inherit;padding:4px 8px;width:320px;margin-bottom:8px}
table{border-collapse:collapse;font-size:13px;width:100%}th,td{border-bottom:1px solid #eaeef2;padding:4px 8px;
text-align:left;vertical-align:top}th{background:#f6f8fa;cursor:pointer;user-select:none}td.num,th.num{
text-align:right;white-space:nowrap}td.error{color:#cf222e}
"""
_SCRIPT = """
const table=document.querySelector('table'),body=table.tBodies[0],filter=document.querySelector('input');
let key=null,desc=false;
function value(row,i){const c=row.cells[i];if(!c||c.colSpan>1)return null;const v=c.dataset.sort;return v===undefined||v===''?null:(isNaN(v)?v:Number(v));}
table.tHead.addEventListener('click',(e)=>{const th=e.target.closest('th');if(!th)return;const i=th.cellIndex;
desc=key===i?!desc:th.classList.contains('num');key=i;const rows=[...body.rows];
rows.sort((a,b)=>{const x=value(a,i),y=value(b,i);if(x===null||y===null)return (x===null)-(y===null);
return (x<y?-1:x>y?1:0)*(desc?-1:1);});rows.forEach((r)=>body.append(r));});
filter.addEventListener('input',()=>{const words=filter.value.toLowerCase().split(/\\s+/).filter(Boolean);
for(const r of body.rows){const t=r.textContent.toLowerCase();r.hidden=!words.every((w)=>t.includes(w));}});
"""
COLUMNS = (
    ("Run", False),
    ("Verdict", False),
    ("Confidence", False),
    ("Step time", True),
    ("GPU busy", True),
    ("Top finding", False),
    ("Change vs previous", True),
)


def page_name(index, run):
    """runs/<n>_<run id with anything but letters, digits, '.', '_' and '-' replaced>.html"""
    return f"runs/{index:04d}_{re.sub(r'[^A-Za-z0-9._-]+', '_', run or 'run')[:120]}.html"


def site_rows(run_reports):
    """Overview rows (overview.rows) of run reports: each run's first analyzed host, or its first error."""
    rows = []
    for index, report in enumerate(run_reports):
        hosts, errors = report["hosts"], report.get("errors") or []
        row = {
            "run": report["run"],
            "page": page_name(index, report["run"]),
            "hosts": len(hosts) + len(errors),
            "summary": run_summary(hosts[0]) if hosts else None,
            "error": None if hosts else (errors[0]["error"] if errors else "no host could be analyzed"),
        }
        rows.append(row)
    return with_changes(rows)


def render_site(run_reports, root=None):
    """{relative file name: HTML text}: index.html and one page per run report, each with a link back to the
    index; a file's path is shown relative to `root` (the logdir), so no page prints where it was written."""
    files = {"index.html": _index(site_rows(run_reports))}
    for index, report in enumerate(run_reports):
        files[page_name(index, report["run"])] = render_html(
            report, back="../index.html", shown_path=lambda path: shown_path(path, root)
        )
    return files


def shown_path(path, root):
    """`path` relative to `root` when it lies inside it (with forward slashes), else only its file name."""
    text = str(path or "")
    if root is not None:
        remote = "://" in text
        base = str(root).rstrip("/") if remote else os.path.abspath(str(root))
        full = text if remote else os.path.abspath(text)
        separator = "/" if remote else os.sep
        if full.startswith(base + separator):
            return full[len(base) + 1 :].replace(os.sep, "/")
    return text.replace(os.sep, "/").rstrip("/").rsplit("/", 1)[-1]


def _cell(text, sort=None, numeric=False, css=None):
    classes = " ".join(c for c in ("num" if numeric else None, css) if c)
    attributes = (f' class="{classes}"' if classes else "") + (
        f' data-sort="{escape(str(sort), quote=True)}"' if sort is not None else ""
    )
    return f"<td{attributes}>{text}</td>"


def _signed(value, unit):
    if value is None:
        return ""
    return f"{'+' if value > 0 else '−' if value < 0 else '±'}{abs(value):.1f}{unit}"


def _row(row):
    run = f'<a href="{escape(row["page"], quote=True)}">{escape(row["run"] or "")}</a>'
    cells = [_cell(run, sort=row["run"])]
    summary = row["summary"]
    if summary is None:
        cells.append(f'<td class="error" colspan="{len(COLUMNS) - 1}">{escape(row["error"] or "")}</td>')
        return "<tr>" + "".join(cells) + "</tr>"
    label = BOTTLENECK_LABELS.get(summary["bottleneck"], summary["bottleneck"] or "—")
    top = summary["top_finding"]
    speedup = top and top.get("estimated_speedup")
    top_text = (
        "none"
        if top is None
        else escape(top.get("title") or top.get("id") or "")
        + (f" ({'about' if top.get('speedup_kind') == 'model' else 'up to'} {speedup:.2f}× faster)" if speedup else "")
    )
    step, busy, change = summary["step_time_ms"], summary["gpu_busy_pct"], row["change"] or {}
    change_text = " · ".join(
        part
        for part in (
            _signed(change.get("step_time_pct"), "% step"),
            _signed(change.get("gpu_busy_pct_points"), " pt busy"),
        )
        if part
    )
    cells += [
        f'<td title="{escape(summary["verdict"] or "", quote=True)}" data-sort="{escape(label)}">'
        f"{escape(label)}<br>{escape(summary['verdict'] or '')}</td>",
        _cell(escape(summary["confidence"] or "—"), sort=summary["confidence"] or ""),
        _cell("—" if step is None else f"{step:,.2f} ms", sort="" if step is None else step, numeric=True),
        _cell("—" if busy is None else f"{busy:.1f}%", sort="" if busy is None else busy, numeric=True),
        _cell(top_text, sort="" if not speedup else speedup),
        _cell(escape(change_text), sort=change.get("step_time_pct", ""), numeric=True),
    ]
    return "<tr>" + "".join(cells) + "</tr>"


def _index(rows):
    head = "".join(f'<th class="num">{name}</th>' if numeric else f"<th>{name}</th>" for name, numeric in COLUMNS)
    body = "\n".join(_row(row) for row in rows)
    return escape_controls(
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>GPU Advisor: all runs</title><style>{_CSS}</style></head>\n<body><main>\n"
        f'<h1>GPU Advisor: all runs</h1><p class="meta">{len(rows)} run(s) · tb-gpu-advisor '
        f"{escape(__version__)} · click a column to sort, type to filter</p>\n"
        '<input type="search" placeholder="Filter by run, verdict or finding" '
        'aria-label="Filter runs">\n'
        f"<table><thead><tr>{head}</tr></thead><tbody>\n{body}\n</tbody></table>\n"
        f"<script>{_SCRIPT}</script>\n</main></body></html>\n",
        keep="\n\t",
    )
