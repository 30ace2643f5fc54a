"""The GPUs the scenarios run on, with the numbers CUDA reports for them, and CUDA's theoretical occupancy."""

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class GpuSpec:
    """One GPU model as CUPTI describes it in the trace (`clock_rate` is the SM boost clock)."""

    model: str
    compute_capability: tuple
    sm_count: int
    clock_mhz: int
    memory_bandwidth_bytes: int  # 2 x memory clock x bus width, as XLA computes it
    memory_bytes: int  # cuDeviceTotalMem
    shared_memory_per_sm: int  # bytes usable by blocks (the carveout maximum)
    reserved_shared_per_block: int  # bytes the driver keeps per block (1 KiB from Ampere on)
    host_link_gbps: float  # realistic pinned host-to-device bandwidth over PCIe, GB/s

    max_threads_per_sm: int = 2048
    max_blocks_per_sm: int = 32
    registers_per_sm: int = 65536

    def plane_kwargs(self):
        """Keyword arguments for `TraceBuilder.gpu`."""
        return dict(
            model=self.model,
            compute_capability=self.compute_capability,
            sm_count=self.sm_count,
            clock_mhz=self.clock_mhz,
            memory_bandwidth_bytes=self.memory_bandwidth_bytes,
            memory_bytes=self.memory_bytes,
        )


def _bandwidth(memory_clock_mhz, bus_bits):
    return 2 * memory_clock_mhz * 1000 * 1000 * bus_bits // 8


V100_SXM2_16GB = GpuSpec(
    "Tesla V100-SXM2-16GB", (7, 0), 80, 1530, _bandwidth(877, 4096), 16_945_512_448, 96 * 1024, 0, 12.0
)
A100_SXM4_40GB = GpuSpec(
    "NVIDIA A100-SXM4-40GB", (8, 0), 108, 1410, _bandwidth(1215, 5120), 42_297_524_224, 164 * 1024, 1024, 24.0
)
A100_PCIE_40GB = GpuSpec(
    "NVIDIA A100-PCIE-40GB", (8, 0), 108, 1410, _bandwidth(1215, 5120), 42_314_694_656, 164 * 1024, 1024, 24.0
)
A100_SXM4_80GB = GpuSpec(
    "NVIDIA A100-SXM4-80GB", (8, 0), 108, 1410, _bandwidth(1593, 5120), 85_100_068_864, 164 * 1024, 1024, 24.0
)
H100_SXM5_80GB = GpuSpec(
    "NVIDIA H100 80GB HBM3", (9, 0), 132, 1980, _bandwidth(2619, 5120), 85_029_158_912, 228 * 1024, 1024, 48.0
)


@dataclass(frozen=True)
class Occupancy:
    """What CUDA's occupancy calculator says for one launch configuration."""

    occupancy_pct: float
    active_blocks_per_sm: int
    limiter: str  # "warps", "blocks", "registers" or "shared memory"
    min_grid_size: int
    suggested_block_size: int


def _active_blocks(spec, threads, registers, shared_bytes):
    """(blocks per SM, limiter) as cudaOccMaxActiveBlocksPerMultiprocessor computes them."""
    warps = math.ceil(threads / 32)
    limits = {"warps": spec.max_threads_per_sm // 32 // warps, "blocks": spec.max_blocks_per_sm}
    if registers:
        registers_per_warp = math.ceil(registers * 32 / 256) * 256
        warps_by_registers = (spec.registers_per_sm // registers_per_warp) // 4 * 4
        limits["registers"] = warps_by_registers // warps
    if shared_bytes:
        per_block = math.ceil((shared_bytes + spec.reserved_shared_per_block) / 128) * 128
        limits["shared memory"] = spec.shared_memory_per_sm // per_block
    limiter = min(limits, key=lambda key: (limits[key], key != "warps"))
    return limits[limiter], limiter


def occupancy(spec, block, registers, shared_bytes=0):
    """Theoretical occupancy of a block shape on `spec`, plus the best block size for the same kernel."""
    threads = block[0] * block[1] * block[2]
    blocks, limiter = _active_blocks(spec, threads, registers, shared_bytes)
    best_threads, best_blocks = 32, 0
    for candidate in range(1024, 0, -32):
        candidate_blocks, _ = _active_blocks(spec, candidate, registers, shared_bytes)
        if candidate_blocks * candidate > best_blocks * best_threads:
            best_threads, best_blocks = candidate, candidate_blocks
    return Occupancy(
        occupancy_pct=100.0 * blocks * threads / spec.max_threads_per_sm,
        active_blocks_per_sm=blocks,
        limiter=limiter,
        min_grid_size=best_blocks * spec.sm_count,
        suggested_block_size=best_threads,
    )
