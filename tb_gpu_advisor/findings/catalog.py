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
