"""Clock and memory bandwidth of GPU models by name, for Kineto traces, whose deviceProperties lack both.

Figures are the vendors' published boost SM clock and peak memory bandwidth. A model not listed, or a name
that does not tell the variant (ROCm reports MI200-series GCDs as "AMD Radeon Graphics"), gets None.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class PublishedSpec:
    clock_mhz: float
    memory_bandwidth_bytes_per_s: int


_GB = 10**9
# (pattern on the device name, smallest memory in GiB it applies to or 0, spec); the first match wins.
_TABLE = (
    (r"H200", 0, PublishedSpec(1980, 4800 * _GB)),
    (r"H100.*PCIe", 0, PublishedSpec(1755, 2000 * _GB)),
    (r"H100.*NVL", 0, PublishedSpec(1785, 3900 * _GB)),
    (r"H100", 0, PublishedSpec(1980, 3350 * _GB)),
    (r"A100.*PCIE", 60, PublishedSpec(1410, 1935 * _GB)),
    (r"A100", 60, PublishedSpec(1410, 2039 * _GB)),
    (r"A100", 0, PublishedSpec(1410, 1555 * _GB)),
    (r"V100.*PCIE", 0, PublishedSpec(1380, 900 * _GB)),
    (r"V100", 0, PublishedSpec(1530, 900 * _GB)),
    (r"\bA10\b", 0, PublishedSpec(1695, 600 * _GB)),
    (r"\bL4\b", 0, PublishedSpec(2040, 300 * _GB)),
    (r"\bT4\b", 0, PublishedSpec(1590, 320 * _GB)),
    (r"MI300X", 0, PublishedSpec(2100, 5300 * _GB)),
    (r"MI250X", 0, PublishedSpec(1700, 3277 * _GB)),
)


def published_spec(model_name: str | None, memory_bytes: int | None = None) -> PublishedSpec | None:
    """PublishedSpec of a device name (and its memory size, which tells 40 from 80 GB parts), or None."""
    if not model_name:
        return None
    memory_gib = (memory_bytes or 0) / 2**30
    for pattern, min_gib, spec in _TABLE:
        if re.search(pattern, model_name, re.IGNORECASE) and memory_gib >= min_gib:
            return spec
    return None
