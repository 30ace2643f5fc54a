"""Renders reports as GitHub-flavoured markdown for pull requests and tickets."""

import html

from tb_gpu_advisor.report.multi_host import multi_host_sections
from tb_gpu_advisor.report.sections import host_sections


def _cell(value):
    return html.escape(str(value), quote=False).replace("|", "\\|").replace("\n", " ")


def render_markdown(report):
    out = []
    title = f"GPU Advisor report: {report['run']}" if report.get("run") else "GPU Advisor report"
    out.append(f"# {_cell(title)}")
    out.append("")
    sections = [(index, section) for host in report["hosts"] for index, section in enumerate(host_sections(host))]
    sections += [(0, section) for section in multi_host_sections(report)]
    for index, section in sections:
        out.append(f"{'##' if index == 0 else '###'} {_cell(section.title)}")
        out.append("")
        for line in section.lines:
            out.append(f"{_cell(line.strip())}  " if not line.startswith("   ") else f"  {_cell(line.strip())}  ")
        if section.table:
            table = section.table
            out.append("| " + " | ".join(_cell(h) for h in table.headers) + " |")
            out.append("|" + "|".join("---:" if right else "---" for right in table.numeric) + "|")
            for row in table.rows:
                out.append("| " + " | ".join(_cell(c) for c in row) + " |")
        out.append("")
    for error in report.get("errors", []):
        out.append(f"> **error**: `{_cell(error['file'])}`: {_cell(error['error'])}")
    return "\n".join(out).rstrip() + "\n"
