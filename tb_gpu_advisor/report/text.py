"""Renders reports as plain text for an 80-column terminal."""

from __future__ import annotations

import textwrap

from tb_gpu_advisor.report.multi_host import multi_host_sections
from tb_gpu_advisor.report.ranks_sections import ranks_sections
from tb_gpu_advisor.report.safe_text import escape_controls
from tb_gpu_advisor.report.sections import host_sections
from tb_gpu_advisor.vocabulary import NBSP, bind_units

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.report.section_model import Section
    from tb_gpu_advisor.report.section_model import Table


WIDTH = 80


def render_table(table: Table) -> list[str]:
    headers = [escape_controls(cell, keep="") for cell in table.headers]
    rows = [[escape_controls(cell, keep="") for cell in row] for row in table.rows]
    widths = [max(len(cell) for cell in column) for column in zip(headers, *rows)]

    def line(cells: list[str]) -> str:
        parts = [c.rjust(w) if right else c.ljust(w) for c, w, right in zip(cells, widths, table.numeric)]
        return "  ".join(parts).rstrip()

    # A text last column too wide for the terminal (a configuration value listing thread pools) wraps under itself.
    lead = sum(widths[:-1]) + 2 * (len(widths) - 1)
    room = WIDTH - lead
    if lead + widths[-1] > WIDTH and not table.numeric[-1] and room >= 20:
        widths[-1] = min(widths[-1], room)
    out = [line(headers), "  ".join("-" * w for w in widths)]
    for row in rows:
        pieces = [
            piece.replace(NBSP, " ")
            for piece in textwrap.wrap(row[-1], widths[-1], break_long_words=True, break_on_hyphens=False)
        ] or [""]
        out.append(line(row[:-1] + [pieces[0]]))
        out.extend((" " * lead + piece).rstrip() for piece in pieces[1:])
    return out


def render_section(section: Section) -> list[str]:
    out = [section.title, "=" * min(len(section.title), WIDTH)]
    for text in section.lines:
        indent = len(text) - len(text.lstrip())
        # Wrapped with each number bound to its unit (textwrap does not break at a non-breaking space).
        wrapped = textwrap.wrap(
            bind_units(text), WIDTH, subsequent_indent=" " * (indent + 2), break_long_words=True, break_on_hyphens=False
        ) or [""]
        out.extend(line.replace(NBSP, " ") for line in wrapped)
    if section.table:
        out.extend(render_table(section.table))
    if section.terminal_hint:
        out.extend(textwrap.wrap(section.terminal_hint, WIDTH))
    return out


def render_text(report: dict) -> str:
    """The whole report (every host, then any files that could not be read) as text."""
    out = []
    if report.get("run"):
        out.append(f"Run: {report['run']}")
        out.append("")
    for section in ranks_sections(report):
        out.extend(render_section(section))
        out.append("")
    for host in report["hosts"]:
        for section in host_sections(host):
            out.extend(render_section(section))
            out.append("")
    for section in multi_host_sections(report):
        out.extend(render_section(section))
        out.append("")
    for error in report.get("errors", []):
        out.append(f"error: {error['file']}: {error['error']}")
    return escape_controls("\n".join(out).rstrip() + "\n")
