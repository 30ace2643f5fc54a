"""GPU specs as CUDA reports them, and theoretical occupancy as CUDA's calculator computes it."""

import pytest

from tb_gpu_advisor.scenarios.devices import A100_SXM4_40GB, A100_SXM4_80GB, H100_SXM5_80GB, V100_SXM2_16GB, occupancy


def test_memory_bandwidth_is_what_xla_computes_from_clock_and_bus_width():
    assert V100_SXM2_16GB.memory_bandwidth_bytes == 898_048_000_000  # the real 8xV100 trace's value
    assert A100_SXM4_40GB.memory_bandwidth_bytes == 1_555_200_000_000
    assert A100_SXM4_80GB.memory_bandwidth_bytes == 2_039_040_000_000
    assert H100_SXM5_80GB.memory_bandwidth_bytes == 3_352_320_000_000
    assert [s.sm_count for s in (V100_SXM2_16GB, A100_SXM4_40GB, H100_SXM5_80GB)] == [80, 108, 132]


@pytest.mark.parametrize(
    "spec, block, registers, shared, expected, limiter",
    [
        (A100_SXM4_80GB, (256, 1, 1), 32, 0, 100.0, "warps"),
        (A100_SXM4_80GB, (1024, 1, 1), 64, 0, 50.0, "registers"),
        (A100_SXM4_80GB, (32, 1, 1), 168, 0, 18.75, "registers"),
        (A100_SXM4_80GB, (32, 1, 1), 16, 0, 50.0, "blocks"),
        (A100_SXM4_80GB, (128, 1, 1), 32, 65536, 12.5, "shared memory"),
        (V100_SXM2_16GB, (256, 1, 1), 232, 0, 12.5, "registers"),
        (H100_SXM5_80GB, (384, 1, 1), 168, 0, 18.75, "registers"),
    ],
)
def test_theoretical_occupancy(spec, block, registers, shared, expected, limiter):
    result = occupancy(spec, block, registers, shared)
    assert (result.occupancy_pct, result.limiter) == (expected, limiter)


def test_suggested_block_size_maximizes_occupancy():
    result = occupancy(A100_SXM4_80GB, (32, 1, 1), 40)
    assert (result.suggested_block_size, result.min_grid_size) == (768, 2 * 108)
