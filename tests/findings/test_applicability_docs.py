"""docs/findings.md says, for every rule, what it checks before it fires and which idiom its fix uses."""

import pathlib

from tb_gpu_advisor.findings.catalog import CATALOG

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs" / "findings.md"


def test_every_finding_id_has_a_row_in_the_applicability_table():
    text = DOCS.read_text(encoding="utf-8")
    table = text[text.index("## Applicability and idiom, per rule") : text.index("## The real traces")]
    rows = {line.split("|")[1].strip().strip("`") for line in table.splitlines() if line.startswith("| `")}
    assert rows == set(CATALOG)
    for key, entry in CATALOG.items():
        row = next(line for line in table.splitlines() if line.startswith(f"| `{key}`"))
        if entry.jax is not None:
            assert "TF / JAX" in row, key
