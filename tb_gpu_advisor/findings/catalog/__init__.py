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
    from tb_gpu_advisor.findings.catalog import gpu, host, input_pipeline, multi_gpu, steps, transfers
    merged = {}
    for module in (input_pipeline, gpu, transfers, host, multi_gpu, steps):
        for key, entry in module.ENTRIES.items():
            if key in merged:
                raise ValueError(f"finding id {key} is defined twice")
            merged[key] = entry
    return merged


CATALOG = _merge()
