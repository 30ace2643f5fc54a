"""The catalog of findings: per stable id, its category, title, one-line fix, fix text with code, and docs.

Each rule family (findings/rules/<family>.py, or <family>/entries.py of a package) registers its entries beside
its rules; an id is `<family>.<name>`, the family being the module or package that defines it.
"""

from __future__ import annotations

from dataclasses import dataclass


ADVICE_FRAMEWORKS = ("tensorflow", "jax", "pytorch")


@dataclass(frozen=True)
class Idiom:
    """A fix written for one framework: the one-line fix, the text with code, the links."""

    fix_summary: str
    fix: str
    docs: tuple = ()


@dataclass(frozen=True)
class Entry:
    """`fix_summary`/`fix`/`docs` are the TensorFlow fix, or a framework-neutral one when `jax` is None;
    `jax` and `pytorch` are the same fix in those frameworks' idioms.

    `variants` are fixes for a condition a rule detected in the trace: `condition` for TensorFlow (e.g.
    "xla_blocked": the step runs ops XLA cannot compile, so jit_compile=True must not be advised as is),
    `jax:condition` / `pytorch:condition` for those, and `any:condition` for a framework-neutral fix that replaces
    every idiom but that framework's own wording of the same condition.
    """

    category: str
    title: str
    fix_summary: str
    fix: str
    docs: tuple
    jax: Idiom | None = None
    pytorch: Idiom | None = None
    variants: tuple = ()  # ((condition, Idiom), ...)

    def idiom(self, framework: str, condition: str | None = None) -> Idiom:
        """The fix in `framework`'s idiom; for "unknown" TensorFlow's and JAX's both (labelled)."""
        variants = dict(self.variants)
        if condition is not None and f"any:{condition}" in variants:  # the framework's own wording comes first
            return variants.get(f"{framework}:{condition}") or variants[f"any:{condition}"]
        tensorflow = variants.get(condition) or Idiom(self.fix_summary, self.fix, self.docs)
        if framework == "pytorch":  # without a PyTorch idiom the fix is about what TensorFlow wrote (tf.data)
            return variants.get(f"pytorch:{condition}") or self.pytorch or tensorflow
        jax = variants.get(f"jax:{condition}") or self.jax
        if jax is None or framework == "tensorflow":
            return tensorflow
        if framework == "jax":
            return jax
        return Idiom(
            f"TensorFlow: {tensorflow.fix_summary} JAX: {jax.fix_summary}",
            f"TensorFlow:\n\n{tensorflow.fix}\n\nJAX:\n\n{jax.fix}",
            tuple(dict.fromkeys(tensorflow.docs + jax.docs)),
        )


@dataclass(frozen=True)
class Wording:
    """A framework's own wording of a finding: its fix, and its title where it differs from the catalog's (the
    category is always the finding's). `variants` as in Entry."""

    fix_summary: str
    fix: str
    docs: tuple
    title: str | None = None
    variants: tuple = ()


CATALOG: dict[str, Entry] = {}


def register(family: str, entries: dict[str, Entry]) -> dict[str, Entry]:
    """Adds a family's entries to CATALOG and returns them; every id must start with `<family>.` and be new."""
    for key, entry in entries.items():
        if key.split(".", 1)[0] != family:
            raise ValueError(f"finding id {key} does not belong to family {family}")
        if key in CATALOG:
            raise ValueError(f"finding id {key} is defined twice")
        CATALOG[key] = entry
    return entries


# framework -> {finding id: Wording}: a framework's own wording of shared findings (findings/pytorch_fixes.py).
VARIANTS: dict[str | None, dict[str, Wording]] = {}


def register_variants(framework: str, entries: dict[str, Wording]) -> dict[str, Wording]:
    """Adds a framework's wording of findings; a title it gives must differ from the catalog's."""
    for key, wording in entries.items():
        if key in CATALOG and wording.title == CATALOG[key].title:
            raise ValueError(f"{framework} wording of {key} restates its title")
    VARIANTS.setdefault(framework, {}).update(entries)
    return entries


def entry_for(finding_id: str, framework: str | None = None) -> Entry:
    """The catalog entry of a finding, in the framework's idiom when it has one; the framework's wording keeps
    the catalog entry's category, its title unless the wording gives one, and its variants for that framework
    (`<framework>:condition`, `any:condition`) it does not redefine."""
    base = CATALOG[finding_id]
    own = VARIANTS.get(framework, {}).get(finding_id)
    if own is None:
        return base
    defined = dict(own.variants)
    inherited = tuple(
        (key, idiom) for key, idiom in base.variants if key.startswith((f"{framework}:", "any:")) and key not in defined
    )
    return Entry(
        base.category, own.title or base.title, own.fix_summary, own.fix, own.docs, variants=own.variants + inherited
    )
