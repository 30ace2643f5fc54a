"""The catalog of findings: per stable id, its category, title, one-line fix, fix text with code, and docs.

Each rule family (findings/rules/<family>.py) registers its entries beside its rules; an id is
`<family>.<name>`, the family being the module that defines it.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    category: str
    title: str
    fix_summary: str
    fix: str
    docs: tuple


CATALOG = {}


def register(family, entries):
    """Adds a family's entries to CATALOG and returns them; every id must start with `<family>.` and be new."""
    for key, entry in entries.items():
        if key.split(".", 1)[0] != family:
            raise ValueError(f"finding id {key} does not belong to family {family}")
        if key in CATALOG:
            raise ValueError(f"finding id {key} is defined twice")
        CATALOG[key] = entry
    return entries


# framework -> {finding id: Entry}: a framework's own wording of shared findings (findings/pytorch_fixes.py).
VARIANTS = {}


def register_variants(framework, entries):
    """Adds a framework's wording of findings; each must keep its finding's category."""
    for key, entry in entries.items():
        if key in CATALOG and CATALOG[key].category != entry.category:
            raise ValueError(f"{framework} variant of {key} changes its category")
    VARIANTS.setdefault(framework, {}).update(entries)
    return entries


def entry_for(finding_id, framework=None):
    """The catalog entry of a finding, in the framework's idiom when it has one."""
    from tb_gpu_advisor.findings import pytorch_fixes  # noqa: F401 (registers its variants)
    return VARIANTS.get(framework, {}).get(finding_id) or CATALOG[finding_id]
