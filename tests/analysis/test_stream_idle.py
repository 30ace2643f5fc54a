"""Idle time per stream by cause, on small built traces with exact numbers."""

from tb_gpu_advisor.analysis.stream_idle import stream_idle
from tests.conftest import model_of
from tb_gpu_advisor.testing.builder import TraceBuilder


def test_host_wait_kernel_wait_and_other():
    builder = TraceBuilder()
    python, gpu = builder.thread("python"), builder.gpu(0)
    gpu.kernel("a", 1000, 100, launch=(python, 900, 10))  # ends 1100
    gpu.kernel("b", 1110, 100, launch=(python, 1000, 10))  # launched before a ended, 10 us gap: kernel wait
    gpu.kernel("c", 1300, 100, launch=(python, 1250, 10))  # launched after b ended (1210): host wait, 90 us
    gpu.kernel("d", 1500, 100, launch=(python, 1350, 10))  # launched in time, 100 us gap: other
    model = model_of(builder)
    (idle,) = stream_idle(model.gpus[0].activity, model.host_activity).values()
    assert idle == {"host_wait": 90_000_000, "kernel_wait": 10_000_000, "other": 100_000_000}


def test_events_without_a_launch_are_never_host_wait():
    builder = TraceBuilder()
    gpu = builder.gpu(0)
    gpu.kernel("a", 1000, 100)
    gpu.kernel("b", 1150, 100)
    model = model_of(builder)
    (idle,) = stream_idle(model.gpus[0].activity, model.host_activity).values()
    assert idle == {"host_wait": 0, "kernel_wait": 0, "other": 50_000_000}
