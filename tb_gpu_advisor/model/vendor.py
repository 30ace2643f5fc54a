"""A GPU plane's vendor and architecture: NVIDIA (CUDA compute capability, `sm_XY`) or AMD (a gfx name)."""

from __future__ import annotations

import re
from dataclasses import replace

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from tb_gpu_advisor.model.trace import GpuDevice


NVIDIA = "NVIDIA"
AMD = "AMD"
# A gfx target as ROCm spells it: gfx906, gfx90a, gfx942, gfx950, gfx1100 (feature suffixes like :xnack- ignored).
_GFX = re.compile(r"(?<![0-9A-Za-z])gfx([0-9]{1,2}[0-9a-f]{2})(?![0-9A-Za-z])")
# hipBLASLt/Tensile kernel names carry the ISA they were built for: `..._ISA942_...` is gfx942.
_TENSILE_ISA = re.compile(r"_ISA([0-9]{1,2}[0-9a-f]{2})_")
# Names only ROCm writes: code-object kernel symbols end in `.kd`; the HIP runtime's own copy/fill kernels.
_AMD_KERNEL = re.compile(r"\.kd$|^__amd_rocclr_|^Cijk_")


def normalize_vendor(value: object) -> str | None:
    """ "NVIDIA", "AMD", another vendor string as written, or None."""
    if not isinstance(value, str) or not value.strip():
        return None
    lowered = value.strip().lower()
    if "nvidia" in lowered:
        return NVIDIA
    if lowered in ("amd", "advanced micro devices", "advanced micro devices, inc.") or lowered.startswith("amd"):
        return AMD
    return value.strip()


def infer_vendor(
    written: object, compute_capability: tuple[int, int] | None, kernel_names: Iterable[str]
) -> str | None:
    """The plane's `device_vendor`, else AMD when kernel names are ROCm's, else NVIDIA when it has a CUDA
    compute capability (older CUPTI traces, such as the real 8xV100 one, write no vendor)."""
    vendor = normalize_vendor(written)
    if vendor:
        return vendor
    if any(_AMD_KERNEL.search(name) for name in kernel_names):
        return AMD
    return NVIDIA if compute_capability else None


def amd_arch(plane_strings: list[str], kernel_names: Iterable[str]) -> str | None:
    """The gfx name the trace writes (a plane stat, else a Tensile kernel's ISA tag), or None.

    Never derived from the capability numbers: gfx908 and gfx90a both read 9.0.
    """
    for text in plane_strings:
        found = _GFX.search(text)
        if found:
            return "gfx" + found.group(1)
    tags = {match.group(1) for name in kernel_names for match in [_TENSILE_ISA.search(name)] if match}
    return "gfx" + tags.pop() if len(tags) == 1 else None


def device_arch(
    vendor: str | None,
    compute_capability: tuple[int, int] | None,
    plane_strings: list[str],
    kernel_names: Iterable[str],
) -> str | None:
    """`sm_XY` for NVIDIA from its compute capability, the gfx name for AMD, else None."""
    if vendor == NVIDIA and compute_capability:
        return f"sm_{compute_capability[0]}{compute_capability[1]}"
    if vendor == AMD:
        return amd_arch(plane_strings, kernel_names)
    return None


def shared_arch(gpus: Sequence[GpuDevice]) -> list[GpuDevice]:
    """The GpuDevices with the arch of their identical siblings filled in: a ROCm trace names the gfx target only
    through the kernels a GPU ran, so idle GPUs of the same vendor, model, compute-unit count, clock and memory
    take the one gfx name their siblings show (none when the siblings disagree)."""

    def kind(gpu: GpuDevice) -> tuple:
        caps = gpu.capabilities
        return (
            caps.vendor,
            caps.model_name,
            caps.sm_count,
            caps.clock_mhz,
            caps.memory_bytes,
            caps.memory_bandwidth_bytes_per_s,
        )

    named: dict[tuple, set[str]] = {}
    for gpu in gpus:
        if gpu.capabilities.arch:
            named.setdefault(kind(gpu), set()).add(gpu.capabilities.arch)
    out = []
    for gpu in gpus:
        found = named.get(kind(gpu), set())
        if gpu.capabilities.arch is None and gpu.capabilities.vendor == AMD and len(found) == 1:
            gpu = replace(gpu, capabilities=replace(gpu.capabilities, arch=next(iter(found))))
        out.append(gpu)
    return out
