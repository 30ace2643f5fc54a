"""The catalog: each finding id is `<family>.<name>`, defined with its rules in findings/rules/<family>.py or in
the package findings/rules/<family>/ (its words in <family>/entries.py, its rules in the other modules)."""

import ast
import importlib
import inspect
import pkgutil
import re

import pytest

from tb_gpu_advisor.findings.catalog import CATALOG, Entry, register
from tb_gpu_advisor.findings.finding import CATEGORIES
from tb_gpu_advisor.findings.rules import FAMILIES

_ID_LITERAL = re.compile(r"""["']([a-z0-9_]+\.[a-z0-9_]+)["']""")


def _rules_source(family):
    """The module's source after its ENTRIES assignment and before RULES: the rule functions; of a package, the
    source of its modules but `entries`."""
    if hasattr(family, "__path__"):
        names = [info.name for info in pkgutil.iter_modules(family.__path__) if info.name != "entries"]
        modules = [family, *(importlib.import_module(f"{family.__name__}.{name}") for name in names)]
        return "".join(inspect.getsource(module) for module in modules)
    source = inspect.getsource(family)
    lines = source.splitlines(keepends=True)
    tree = ast.parse(source)
    entries_end = next(
        node.end_lineno
        for node in tree.body
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "ENTRIES" for t in node.targets)
    )
    return "".join(lines[entries_end:]).split("\nRULES = ")[0]


def test_each_id_prefix_names_the_module_defining_it():
    for family in FAMILIES:
        name = family.__name__.rsplit(".", 1)[-1]
        assert family.ENTRIES and family.RULES, name
        assert all(key.split(".", 1)[0] == name for key in family.ENTRIES), name
        source = _rules_source(family)
        produced = {key for key in _ID_LITERAL.findall(source) if key in CATALOG}
        assert produced == set(family.ENTRIES), name


def test_the_catalog_is_every_family_entry_with_a_known_category():
    assert CATALOG == {key: entry for family in FAMILIES for key, entry in family.ENTRIES.items()}
    assert all(entry.category in CATEGORIES for entry in CATALOG.values())


def test_register_refuses_an_id_of_another_family_or_a_second_definition():
    entry = Entry(category="other", title="t", fix_summary="f", fix="x", docs=())
    with pytest.raises(ValueError, match="does not belong to family launch"):
        register("launch", {"host.something_new": entry})
    with pytest.raises(ValueError, match="defined twice"):
        register("input", {"input.gpu_waits_for_input": entry})
