"""The replay engine: a kernel starts when its launch has reached the GPU and its stream is free."""

from tb_gpu_advisor.readers.xplane.build import build_model
from tb_gpu_advisor.scenarios.devices import A100_SXM4_80GB
from tb_gpu_advisor.scenarios.engine import COMPUTE_STREAM, Gpu, HostCosts, Kernel, Op, launch_ops, memcpy
from tb_gpu_advisor.testing import TraceBuilder
from tb_gpu_advisor.readers.xplane.reader import read_space

COSTS = HostCosts(before_launch_us=1.0, launch_us=4.0, after_launch_us=1.0, between_ops_us=2.0, latency_us=6.0)


def _model(builder, tmp_path):
    path = builder.write(str(tmp_path / "t.xplane.pb"))
    return build_model(read_space(path))


def _kernel(name, duration):
    return Kernel(name, duration, (108, 1, 1), (256, 1, 1), 32)


def test_short_kernels_wait_for_their_launches_and_long_ones_queue(tmp_path):
    builder = TraceBuilder()
    gpu = Gpu(builder.gpu(0, **A100_SXM4_80GB.plane_kwargs()), A100_SXM4_80GB)
    thread = builder.thread("tf_Compute/1", thread_id=1)
    ops = [
        Op("a:Relu", (_kernel("tiny", 2.0),)),
        Op("b:Relu", (_kernel("tiny", 2.0),)),
        Op("c:MatMul", (_kernel("long", 50.0),)),
        Op("d:Relu", (_kernel("tiny", 2.0),)),
    ]
    end = launch_ops(thread, gpu, ops, 100.0, costs=COSTS)
    assert end == 100.0 + 4 * 8.0  # 1 + 4 + 1 us per op and 2 us between ops
    activity = _model(builder, tmp_path).gpus[0].activity
    starts = list(activity.start_ps / 1e6)
    # Launches begin at 101, 109, 117, 125: +6 us each; the last waits for the 50 us kernel to finish.
    assert starts == [107.0, 115.0, 123.0, 173.0]
    assert gpu.ready(COMPUTE_STREAM) == 175.0


def test_host_ops_take_host_time_and_launch_nothing(tmp_path):
    builder = TraceBuilder()
    gpu = Gpu(builder.gpu(0, **A100_SXM4_80GB.plane_kwargs()), A100_SXM4_80GB)
    thread = builder.thread("tf_Compute/1", thread_id=1)
    end = launch_ops(thread, gpu, [Op("StringSplitV2:StringSplitV2", (), 500.0)], 0.0, costs=COSTS)
    assert end == 1.0 + 500.0 + 1.0 + 2.0
    model = _model(builder, tmp_path)
    assert len(model.gpus[0].activity) == 0
    assert model.host_activity.op_totals["StringSplitV2:StringSplitV2"] == (1, 502 * 10**6)


def test_synchronous_copies_hold_the_calling_thread(tmp_path):
    builder = TraceBuilder()
    gpu = Gpu(builder.gpu(0, **A100_SXM4_80GB.plane_kwargs()), A100_SXM4_80GB)
    python = builder.thread("python")
    host_end, device_end = memcpy(
        python, gpu, "h2d", 10.0, 1 << 20, 100.0, src="pageable", dst="device", is_async=False, stream=13
    )
    assert (device_end, host_end) == (114.0, 115.0)
    host_end, device_end = memcpy(
        python, gpu, "h2d", 200.0, 1 << 20, 40.0, src="pinned", dst="device", is_async=True, stream=13
    )
    assert (device_end, host_end) == (244.0, 205.0)
