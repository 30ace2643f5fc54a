"""Peak GPU memory in use and the headroom left, per GPU, from the allocators' statistics in the trace."""

from __future__ import annotations

from dataclasses import dataclass

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.model.trace import TraceModel


# Doubling the batch at most doubles the memory in use (activations grow with it; weights and optimizer state
# do not): a 2x batch surely fits when twice the peak is within the limit.
BATCH_GROWTH = 2


@dataclass(frozen=True)
class GpuMemory:
    """One GPU's allocator: peak bytes in use against its limit (TensorFlow's memory limit for that GPU; the GPU's
    memory for PyTorch, whose profile records no limit)."""

    ordinal: int
    allocator: str
    peak_bytes: int
    limit_bytes: int | None
    capacity_bytes: int | None  # the GPU's memory as the trace states it

    @property
    def headroom_bytes(self) -> int | None:
        return None if self.limit_bytes is None else max(0, self.limit_bytes - self.peak_bytes)

    @property
    def peak_pct(self) -> float | None:
        """Peak in use as % of the limit (None without a limit)."""
        if not self.limit_bytes:
            return None
        return round(min(100.0, 100.0 * self.peak_bytes / self.limit_bytes), 2)

    @property
    def doubled_batch_fits(self) -> bool | None:
        """True when even a doubled peak is within the limit; None when it depends on the activations' share."""
        if not self.limit_bytes:
            return None
        return True if BATCH_GROWTH * self.peak_bytes <= self.limit_bytes else None


def gpu_memory(model: TraceModel) -> tuple[GpuMemory, ...]:
    """GpuMemory per GPU allocator the trace records (TensorFlow's `GPU_<n>_bfc`; PyTorch's caching allocator,
    `cuda:<n>`, judged against the GPU's memory), by ordinal; () without memory events."""
    capacity = {gpu.ordinal: gpu.capabilities.memory_bytes for gpu in model.gpus}
    return tuple(
        GpuMemory(
            stats.device,
            stats.name,
            stats.peak_bytes_in_use,
            stats.limit_bytes or capacity.get(stats.device),
            capacity.get(stats.device),
        )
        for stats in sorted(model.allocators, key=lambda s: (s.device is None, s.device or 0, s.name))
        if stats.device is not None
    )
