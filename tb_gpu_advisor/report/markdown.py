"""Renders reports as GitHub-flavoured markdown for pull requests and tickets."""

import html

from tb_gpu_advisor.report.multi_host import multi_host_sections
from tb_gpu_advisor.report.ranks_sections import ranks_sections
from tb_gpu_advisor.report.safe_text import escape_controls
from tb_gpu_advisor.report.sections import host_sections


def _cell(value):
    return html.escape(str(value), quote=False).replace("|", "\\|").replace("\n", " ")


def _fixes(findings):
    """Each finding's full fix and links, folded so the report stays short in a pull request."""
    out = []
    for index, finding in enumerate(findings, 1):
        if not finding.get("fix"):
            continue
        out.append(f"<details><summary>{index}. Fix: {_cell(finding['title'])}</summary>")
        out.append("")
        fence = "~~~~" if "```" in finding["fix"] else "```"
        out.extend([fence, finding["fix"].rstrip(), fence])
        links = " · ".join(f"<{url}>" for url in finding.get("docs", []))
        if links:
            out.extend(["", f"Read more: {links}"])
        out.extend(["", "</details>", ""])
    return out


def _render_section(out, section, heading):
    out.append(f"{heading} {_cell(section.title)}")
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


def render_markdown(report):
    out = []
    title = f"GPU Advisor report: {report['run']}" if report.get("run") else "GPU Advisor report"
    out.append(f"# {_cell(title)}")
    out.append("")
    for section in ranks_sections(report):
        _render_section(out, section, "##")
    for host in report["hosts"]:
        for index, section in enumerate(host_sections(host)):
            _render_section(out, section, "##" if index == 0 else "###")
            if section.title == "Findings":
                out.extend(_fixes(host["findings"]))
    for section in multi_host_sections(report):
        _render_section(out, section, "##")
    for error in report.get("errors", []):
        out.append(f"> **error**: `{_cell(error['file'])}`: {_cell(error['error'])}")
    return escape_controls("\n".join(out).rstrip() + "\n")
