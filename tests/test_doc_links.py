"""Every relative link in the README and the Markdown docs names a file or folder of the repository."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def documents():
    return [
        ROOT / "README.md",
        *sorted((ROOT / "docs").rglob("*.md")),
        *sorted((ROOT / "benchmarks").glob("*.md")),
        *sorted((ROOT / "tests" / "data").rglob("*.md")),
    ]


def broken_links(path, root=ROOT):
    """[(link, why)] of the relative links of a Markdown file that leave the repository or name nothing."""
    found = []
    for match in LINK.finditer(path.read_text(encoding="utf-8")):
        link = match.group(1)
        target = link.split("#", 1)[0]
        if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("/"):
            continue  # a URL, a page anchor, or a route of the served tab
        resolved = (path.parent / target).resolve()
        if not resolved.is_relative_to(root):
            found.append((link, "outside the repository"))
        elif not resolved.exists():
            found.append((link, "no such file"))
    return found


def test_the_check_sees_a_missing_and_an_outside_target(tmp_path):
    (tmp_path / "here.md").write_text("[a](here.md) [b](gone.md#x) [c](../elsewhere.md) [d](https://x.org) [e](#top)")
    assert broken_links(tmp_path / "here.md", root=tmp_path) == [
        ("gone.md#x", "no such file"),
        ("../elsewhere.md", "outside the repository"),
    ]


def test_every_relative_link_of_the_docs_resolves_inside_the_repository():
    broken = {str(path.relative_to(ROOT)): found for path in documents() if (found := broken_links(path))}
    assert broken == {}


def test_no_doc_points_at_files_beside_the_checkout():
    """`../shared` is the development machine's data folder, not part of a clone."""
    assert [
        str(path.relative_to(ROOT)) for path in documents() if "../shared" in path.read_text(encoding="utf-8")
    ] == []
