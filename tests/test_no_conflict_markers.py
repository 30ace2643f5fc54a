"""No merge-conflict markers left in the sources, docs or tests."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
CHECKED = ("tb_gpu_advisor", "tests", "docs", "frontend", "benchmarks", "scripts")
SUFFIXES = {".py", ".js", ".mjs", ".css", ".html", ".md", ".sh", ".json", ".tsv", ".ini", ".cfg", ".txt"}
MARKER = re.compile(r"^(<{7} |={7}$|>{7} )", re.MULTILINE)


def _text_files():
    for folder in CHECKED:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in SUFFIXES and path.is_file() and "node_modules" not in path.parts:
                yield path
    yield ROOT / "README.md"
    yield ROOT / "setup.py"


def test_no_file_holds_a_conflict_marker():
    marked = [
        str(path.relative_to(ROOT))
        for path in _text_files()
        if MARKER.search(path.read_text(encoding="utf-8", errors="replace"))
    ]
    assert marked == []
