from tb_gpu_advisor.testing import TraceBuilder
from tests.conftest import report_of


def test_latency_percentiles_tiny_kernels_and_per_step():
    builder = TraceBuilder()
    python = builder.thread()
    gpu = builder.gpu(0)
    python.step(0, 0, 1000)
    python.step(1, 1000, 1000)
    # (device start, duration, latency)
    kernels = [(100, 5, 10), (300, 5, 20), (600, 20, 30), (1200, 20, 40), (1500, 9.99, 100)]
    for start, duration, latency in kernels:
        gpu.kernel("k", start, duration, launch=(python, start - latency, 3))
    gpu.kernel("unlaunched", 1800, 50)  # no host launch recorded
    launch = report_of(builder)["launch"]
    assert launch["kernel_count"] == 6
    assert launch["count"] == 5
    assert launch["unpaired_count"] == 1
    assert launch["latency_us"] == {"p50": 30.0, "p95": 88.0, "max": 100.0}
    assert launch["tiny_kernel_count"] == 3
    assert launch["tiny_kernel_pct"] == 50.0
    assert launch["per_step"] == 3.0
    assert launch["launch_call_time_us"] == 15.0
    assert launch["latency_histogram"]["counts"][:7] == [0, 0, 1, 3, 0, 1, 0]


def test_memcpy_launches_are_not_counted_as_kernel_launches():
    builder = TraceBuilder()
    python = builder.thread()
    gpu = builder.gpu(0)
    gpu.memcpy("h2d", 100, 10, 64, launch=(python, 50, 5))
    launch = report_of(builder)["launch"]
    assert launch["kernel_count"] == 0
    assert launch["count"] == 0
    assert launch["latency_us"]["p50"] is None


def test_a_graph_launch_has_one_latency_its_first_kernels():
    """A graph launch replays many kernels under one call: its latency is the launch call to its first kernel
    (tests/findings/test_h200_twins.py checks launch_jit's percentiles)."""
    from tb_gpu_advisor.analysis.launch import _first_of_each

    import numpy as np

    launch = np.array([3, 3, 1, 3, 1])
    start = np.array([30, 10, 50, 20, 40])
    assert sorted(_first_of_each(launch, start).tolist()) == [1, 4]
