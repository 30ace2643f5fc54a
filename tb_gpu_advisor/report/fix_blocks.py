"""A finding's fix text as blocks, the HTML report's twin of the tab's static/fix_text.js (one rule for both):
prose paragraphs, which wrap, and code blocks (the catalog indents code by four spaces, as Markdown does), which
keep their lines and scroll."""

import re
from dataclasses import dataclass

_CODE = re.compile(r"^( {4}|\t)")


@dataclass(frozen=True)
class FixBlock:
    kind: str  # "prose" or "code"
    text: str


def fix_blocks(fix) -> tuple[FixBlock, ...]:
    """The blocks of `fix`: code without its 4-space indent (a blank line inside code kept), prose lines joined
    into paragraphs (a blank line ends one)."""
    blocks: list[tuple[str, list[str]]] = []
    blank = False
    text = "" if fix is None else str(fix)
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if not line.strip():
            blank = True
            continue
        kind = "code" if _CODE.match(line) else "prose"
        if not blocks or blocks[-1][0] != kind or (blank and kind == "prose"):
            blocks.append((kind, []))
        elif blank:
            blocks[-1][1].append("")
        blocks[-1][1].append(_CODE.sub("", line, count=1) if kind == "code" else line.strip())
        blank = False
    return tuple(FixBlock(kind, ("\n" if kind == "code" else " ").join(lines)) for kind, lines in blocks)
