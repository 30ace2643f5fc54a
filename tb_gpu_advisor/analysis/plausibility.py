"""Launch-configuration values no GPU allows (a corrupt `kernel_details`): which ones, and the limit they break.

A value outside what the hardware allows is reported as unknown and never used for advice: registers per thread
above the architecture's maximum, a block above 1024 threads, shared memory above the device's per-block limit,
occupancy outside (0, 100].
"""

from __future__ import annotations

from dataclasses import dataclass

from tb_gpu_advisor.model.vendor import AMD, NVIDIA

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.model.details import KernelConfig
    from tb_gpu_advisor.model.trace import DeviceCapabilities


MAX_THREADS_PER_BLOCK = 1024
MAX_BLOCK_DIMS = (1024, 1024, 64)
# Registers one thread may use: 255 on every CUDA architecture; 512 VGPRs per lane on CDNA2/3 (gfx90a, gfx94x,
# gfx950: architected plus accumulation registers), the most of any AMD GPU.
MAX_REGISTERS = {NVIDIA: 255, AMD: 512}
MAX_REGISTERS_UNKNOWN = 512
# Shared memory (LDS on AMD) one block may use, bytes: per CUDA compute capability (the closest at or below),
# and the largest AMD LDS (gfx950's 160 KiB; 64 KiB before it).
_NVIDIA_SHARED_PER_BLOCK = (
    (0, 0, 48 * 1024),
    (7, 0, 96 * 1024),
    (7, 5, 64 * 1024),
    (8, 0, 163 * 1024),
    (8, 6, 99 * 1024),
    (8, 7, 163 * 1024),
    (8, 9, 99 * 1024),
    (9, 0, 227 * 1024),
    (12, 0, 99 * 1024),
)
MAX_SHARED_AMD = 160 * 1024
MAX_SHARED_UNKNOWN = 228 * 1024


@dataclass(frozen=True)
class Implausible:
    """One launch-configuration value that no GPU of this kind allows."""

    field: str  # "registers_per_thread", "block", "shared_memory_bytes" or "occupancy_pct"
    value: object
    limit: str  # what it breaks, in words


def max_shared_bytes(capabilities: DeviceCapabilities) -> int:
    if capabilities.vendor == NVIDIA and capabilities.compute_capability:
        found = [
            limit
            for major, minor, limit in _NVIDIA_SHARED_PER_BLOCK
            if (major, minor) <= tuple(capabilities.compute_capability)
        ]
        return found[-1]
    return MAX_SHARED_AMD if capabilities.vendor == AMD else MAX_SHARED_UNKNOWN


def implausible_values(config, capabilities):
    """(Implausible, ...) of a KernelConfig on a GPU with these DeviceCapabilities; () when all are possible."""
    found = []
    vendor = capabilities.vendor
    max_registers = MAX_REGISTERS.get(vendor, MAX_REGISTERS_UNKNOWN)
    who = vendor or "any GPU"
    if config.registers_per_thread > max_registers:
        found.append(
            Implausible(
                "registers_per_thread",
                config.registers_per_thread,
                f"above {who}'s maximum of {max_registers} registers per thread",
            )
        )
    if config.threads_per_block > MAX_THREADS_PER_BLOCK or any(
        dim > top for dim, top in zip(config.block, MAX_BLOCK_DIMS)
    ):
        found.append(
            Implausible("block", list(config.block), f"above the maximum block of {MAX_THREADS_PER_BLOCK} threads")
        )
    shared_limit = max_shared_bytes(capabilities)
    if config.shared_memory_bytes > shared_limit:
        found.append(
            Implausible(
                "shared_memory_bytes",
                config.shared_memory_bytes,
                f"above the device's {shared_limit // 1024} KiB of shared memory per block",
            )
        )
    occupancy = config.occupancy_pct
    if occupancy is not None and not 0.0 <= occupancy <= 100.0:
        found.append(Implausible("occupancy_pct", occupancy, "outside 0-100%"))
    return tuple(found)


def recorded_occupancy(config: KernelConfig, implausible: tuple) -> float | None:
    """The occupancy to report: None when absent, implausible, or 0 (the profiler failed to compute it: a
    kernel that ran had at least one block resident)."""
    if any(item.field == "occupancy_pct" for item in implausible):
        return None
    occupancy = config.occupancy_pct
    return occupancy if occupancy else None
