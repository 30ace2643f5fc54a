"""The catalog of findings: per stable id, its category, title, one-line fix and fix text with code, and docs."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    category: str
    title: str
    fix_summary: str
    fix: str
    docs: tuple


def _merge():
    from tb_gpu_advisor.findings.catalog import gpu, host, input_pipeline, multi_gpu, pytorch, steps, transfers
    merged = {}
    for module in (input_pipeline, gpu, transfers, host, multi_gpu, steps, pytorch):
        for key, entry in module.ENTRIES.items():
            if key in merged:
                raise ValueError(f"finding id {key} is defined twice")
            merged[key] = entry
    return merged


CATALOG = _merge()


def _variants():
    from tb_gpu_advisor.findings.catalog import pytorch
    for key, entry in pytorch.VARIANTS.items():
        if key not in CATALOG or CATALOG[key].category != entry.category:
            raise ValueError(f"PyTorch variant {key} has no finding of its category to replace")
    return {"pytorch": dict(pytorch.VARIANTS)}


# framework -> {finding id: Entry}: the framework's own wording of a finding, used for its traces.
VARIANTS = _variants()


def entry_for(finding_id, framework=None):
    """The catalog entry of a finding, in the framework's idiom when it has one."""
    return VARIANTS.get(framework, {}).get(finding_id) or CATALOG[finding_id]
