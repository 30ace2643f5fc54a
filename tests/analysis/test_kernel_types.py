"""Kernel type times, communication overlap and temporal breakdown on a small built trace (exact numbers)."""

from tb_gpu_advisor.analysis.kernel_types import kernel_types
from tests.conftest import model_of
from tb_gpu_advisor.testing.builder import TraceBuilder


def test_types_overlap_and_temporal_breakdown():
    builder = TraceBuilder()
    gpu = builder.gpu(0)
    gpu.kernel("gemm", 0, 100, stream=7)  # computation 0-100
    gpu.kernel("ncclKernel_AllReduce_RING_LL_Sum_float", 50, 100, stream=20)  # communication 50-150
    gpu.memcpy("h2d", 200, 50, 4096, stream=7)  # memory 200-250; idle 150-200
    times = kernel_types(model_of(builder).gpus[0].activity)
    assert times.exclusive_ps == {
        "computation": 50_000_000,
        "computation+communication": 50_000_000,
        "communication": 50_000_000,
        "memory": 50_000_000,
    }
    assert times.overlap_pct == 50.0
    assert times.temporal_pct() == {"idle": 20.0, "computation": 40.0, "non_computation": 40.0}
    assert times.summed_pct() == {"computation": 40.0, "communication": 40.0, "memory": 20.0}
