"""What a GPU can be: a device property outside what any GPU has (a corrupt or crafted trace) is dropped with a
warning, so it is never printed as a fact nor used by an analysis. The bounds are wide (several times today's
largest parts), so they only catch values no hardware has."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.model.trace import DeviceCapabilities, GpuDevice


# (field, lowest, highest, in words). Today's largest: 304 compute units (MI300X), 288 GB (B300), about 8 TB/s,
# boost clocks below 3 GHz.
_BOUNDS = (
    ("sm_count", 1, 4096, "multiprocessors"),
    ("clock_mhz", 50, 10_000, "MHz of clock"),
    ("memory_bytes", 2**26, 2**44, "bytes of memory"),
    ("memory_bandwidth_bytes_per_s", 10**9, 10**15, "bytes/s of memory bandwidth"),
)
MAX_CAPABILITY = (20, 9)  # CUDA compute capabilities run 1.0 to 12.x today


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def checked_capabilities(caps: DeviceCapabilities, device_name: str) -> tuple[DeviceCapabilities, tuple[str, ...]]:
    """(DeviceCapabilities without its implausible values, (warning, ...)) for the GPU named `device_name`."""
    dropped: dict[str, None] = {}
    warnings: list[str] = []
    for field, low, high, words in _BOUNDS:
        value = getattr(caps, field)
        if value is not None and not (_number(value) and low <= value <= high):
            dropped[field] = None
            warnings.append(f"{device_name}: {value!r:.40} {words} is not a value any GPU has: left out")
    capability = caps.compute_capability
    if capability is not None and not (
        len(capability) == 2
        and all(isinstance(v, int) for v in capability)
        and (1, 0) <= tuple(capability) <= MAX_CAPABILITY
        and 0 <= capability[1] <= MAX_CAPABILITY[1]
    ):
        dropped["compute_capability"] = None
        if caps.arch is not None and caps.arch.startswith("sm_"):
            dropped["arch"] = None
        warnings.append(f"{device_name}: compute capability {capability!r:.40} is not one any GPU has: left out")
    return (replace(caps, **dropped) if dropped else caps), tuple(warnings)


def checked_gpus(gpus: Iterable[GpuDevice]) -> tuple[tuple[GpuDevice, ...], tuple[str, ...]]:
    """(GpuDevices with checked_capabilities, every warning)."""
    checked: list[GpuDevice] = []
    warnings: list[str] = []
    for gpu in gpus:
        caps, found = checked_capabilities(gpu.capabilities, gpu.name)
        checked.append(replace(gpu, capabilities=caps) if found else gpu)
        warnings.extend(found)
    return tuple(checked), tuple(warnings)
