"""A GPU's model from its properties where the trace names none (or only ROCm's generic "AMD Radeon Graphics"): the
vendor, architecture, compute units, memory and clock, where they fit exactly one part's published figures, or parts
whose figures are the same (an MI210 and one GCD of an MI250 differ in nothing a roofline reads)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from tb_gpu_advisor.model.vendor import AMD, NVIDIA

if TYPE_CHECKING:
    from tb_gpu_advisor.model.trace import DeviceCapabilities

# Names a trace gives that say no model: ROCm reports MI200-series GCDs as "AMD Radeon Graphics".
_GENERIC_NAMES = ("amd radeon graphics",)
IDENTIFIED = "(identified from its properties)"


@dataclass(frozen=True)
class _Part:
    name: str
    vendor: str
    arch: str  # sm_XY or gfx name; a trace without one matches on the rest
    units: int  # SMs or CUs
    memory_gib: int  # the board's nominal memory (the trace's bytes are up to 8% below: driver reservations)
    clock_mhz: float  # published boost clock: the trace's clock, where it has one, must equal it
    clock_required: bool  # parts of the same units and memory tell apart only by their clock


# Vendor data sheets: NVIDIA V100 (SXM2 1530 MHz, PCIe 1380 MHz, V100S 1597 MHz; 80 SMs, 16 or 32 GB); AMD Instinct
# MI210 (104 CUs, 64 GB, 1700 MHz), MI250 (2 GCDs of 104 CUs and 64 GB, 1700 MHz) and MI250X (2 GCDs of 110 CUs and
# 64 GB, 1700 MHz). V100 boards differ only in clock, so a trace without one identifies none of them.
_PARTS = (
    _Part("Tesla V100-SXM2-16GB", NVIDIA, "sm_70", 80, 16, 1530, True),
    _Part("Tesla V100-SXM2-32GB", NVIDIA, "sm_70", 80, 32, 1530, True),
    _Part("Tesla V100-PCIE-16GB", NVIDIA, "sm_70", 80, 16, 1380, True),
    _Part("Tesla V100-PCIE-32GB", NVIDIA, "sm_70", 80, 32, 1380, True),
    _Part("Tesla V100S-PCIE-32GB", NVIDIA, "sm_70", 80, 32, 1597, True),
    _Part("AMD Instinct MI210 or MI250 GCD", AMD, "gfx90a", 104, 64, 1700, False),
    _Part("AMD Instinct MI250X GCD", AMD, "gfx90a", 110, 64, 1700, False),
)
_MEMORY_SLACK = 0.08  # a board reports up to this much less than its nominal memory (driver reservations)


def identified(caps: DeviceCapabilities) -> DeviceCapabilities:
    """`caps` with the model, architecture and clock of the one part its properties fit, named as identified;
    unchanged when the trace names a model or the properties fit no part or several."""
    if caps.model_name and caps.model_name.strip().lower() not in _GENERIC_NAMES:
        return caps
    arch = caps.arch or (
        "sm_%d%d" % caps.compute_capability if caps.vendor == NVIDIA and caps.compute_capability else None
    )
    fits = [part for part in _PARTS if _fits(part, caps, arch)]
    if len(fits) != 1:
        return caps
    part = fits[0]
    return replace(
        caps,
        model_name=f"{part.name} {IDENTIFIED}",
        arch=caps.arch or (part.arch if part.vendor == AMD else None),
        clock_mhz=caps.clock_mhz or part.clock_mhz,
    )


def _fits(part: _Part, caps: DeviceCapabilities, arch: str | None) -> bool:
    if caps.vendor != part.vendor or caps.sm_count != part.units or not caps.memory_bytes:
        return False
    if arch is not None and arch != part.arch:
        return False
    nominal = part.memory_gib * 2**30
    if not nominal * (1 - _MEMORY_SLACK) <= caps.memory_bytes <= nominal * 1.01:
        return False
    if caps.clock_mhz:
        return abs(caps.clock_mhz - part.clock_mhz) < 1.0
    return not part.clock_required
