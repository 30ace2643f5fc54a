"""The titled sections and tables a report is made of, which the text, markdown and HTML renderers lay out."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Table:
    headers: tuple
    rows: tuple
    numeric: tuple  # per column: right-align


@dataclass(frozen=True)
class Section:
    title: str
    lines: tuple = ()
    table: Table | None = None
    terminal_hint: str | None = None  # a last line for the text report only
