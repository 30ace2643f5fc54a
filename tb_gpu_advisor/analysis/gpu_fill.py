"""Whether a kernel row's launches fill the GPU: a GEMM that does not is held back by its grid or its per-call
latency, not by its precision, so precision advice and its what-if do not apply to it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tb_gpu_advisor.analysis.kernels import launch_recorded

if TYPE_CHECKING:
    from tb_gpu_advisor.analysis.kernels import KernelRow

# What keeps a row off the GPU's full width: fewer blocks than SMs (one partial wave), or calls so short that
# the device's per-call latency is most of them.
PARTIAL_WAVE = "partial_wave"
SHORT_CALLS = "short_calls"


def blocks(row: KernelRow) -> int:
    """The blocks (CTAs, workgroups) one call of the row launches: the product of its grid."""
    grid = tuple(row.grid or ())
    return grid[0] * grid[1] * grid[2] if len(grid) == 3 else 0


def mean_call_us(row: KernelRow) -> float:
    return row.total_ps / row.occurrences / 1e6 if row.occurrences else 0.0


def underfills(row: KernelRow, sm_count: int | None, latency_floor_us: float) -> str | None:
    """PARTIAL_WAVE where a recorded launch has fewer blocks than the GPU has SMs (`sm_count`, device properties):
    some SMs get no work and each busy one holds a single block, so the call's time is one block's latency chain;
    SHORT_CALLS where its mean call is under twice `latency_floor_us`; None where it fills the GPU (or its launch
    shape or the SM count is unknown and its calls are long)."""
    if sm_count and launch_recorded(row) and 0 < blocks(row) < sm_count:
        return PARTIAL_WAVE
    if mean_call_us(row) < 2 * latency_floor_us:
        return SHORT_CALLS
    return None
