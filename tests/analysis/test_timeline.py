"""gpu_timeline: exact busy fractions per bin from generated traces."""

import numpy as np

from tb_gpu_advisor.analysis.timeline import gpu_timeline
from tb_gpu_advisor.readers.xplane.build import build_model
from tb_gpu_advisor.testing.builder import TraceBuilder
from tb_gpu_advisor.readers.xplane.reader import read_space


def _model(builder, tmp_path):
    return build_model(read_space(builder.write(str(tmp_path / "t.xplane.pb"))))


def test_bins_cover_the_steps_and_hold_busy_fractions(tmp_path):
    builder = TraceBuilder()
    python = builder.thread("python")
    python.step(0, 1000, 100)
    python.step(1, 1100, 100)
    python.input_wait(1100, 25)
    gpu = builder.gpu(0)
    gpu.kernel("a", 1000, 50)  # first half of bin 0
    gpu.kernel("b", 1150, 50)  # all of bin 3
    timeline = gpu_timeline(_model(builder, tmp_path), bins=4)
    assert timeline.bin_count == 4
    assert timeline.bin_edges_ps[0] == 1000 * 10**6 and timeline.bin_edges_ps[-1] == 1200 * 10**6
    np.testing.assert_allclose(timeline.devices[0].busy_fraction, [1.0, 0.0, 0.0, 1.0])
    np.testing.assert_allclose(timeline.input_wait_fraction, [0.0, 0.0, 0.5, 0.0])
    assert timeline.step_bounds_ps == ((1000 * 10**6, 1100 * 10**6), (1100 * 10**6, 1200 * 10**6))


def test_partial_bins_and_overlapping_streams(tmp_path):
    builder = TraceBuilder()
    gpu = builder.gpu(0)
    gpu.kernel("a", 0, 30, stream=7)
    gpu.kernel("b", 10, 30, stream=8)  # overlaps a: busy is the union 0..40
    gpu.kernel("c", 90, 10, stream=7)
    timeline = gpu_timeline(_model(builder, tmp_path), bins=10)  # no steps: span 0..100 us
    np.testing.assert_allclose(timeline.devices[0].busy_fraction, [1, 1, 1, 1, 0, 0, 0, 0, 0, 1])


def test_every_gpu_gets_a_row_even_when_idle(tmp_path):
    builder = TraceBuilder()
    builder.gpu(0).kernel("a", 0, 10)
    builder.gpu(1)
    timeline = gpu_timeline(_model(builder, tmp_path), bins=5)
    assert [d.ordinal for d in timeline.devices] == [0, 1]
    np.testing.assert_allclose(timeline.devices[1].busy_fraction, np.zeros(5))


def test_no_activity_gives_an_empty_timeline(tmp_path):
    builder = TraceBuilder()
    builder.gpu(0)
    timeline = gpu_timeline(_model(builder, tmp_path))
    assert timeline.bin_count == 0 and len(timeline.devices[0].busy_fraction) == 0


def test_fewer_bins_than_picoseconds(tmp_path):
    builder = TraceBuilder()
    builder.gpu(0).kernel("a", 0, 0.000003)  # 3 ps
    timeline = gpu_timeline(_model(builder, tmp_path), bins=100)
    assert timeline.bin_count == 3


def test_pre_grouped_gpus_are_binned_over_their_own_steps(tmp_path):
    builder = TraceBuilder(legacy=True)
    early, late = builder.gpu(0), builder.gpu(1)
    early.step_marker(0, 0, 100)
    early.kernel("a", 0, 50, group_id=0)
    late.step_marker(0, 1000, 200)
    late.kernel("b", 1100, 100, group_id=0)
    timeline = gpu_timeline(_model(builder, tmp_path), bins=2)
    assert (timeline.start_ps, timeline.end_ps) == (1000 * 10**6, 1200 * 10**6)  # the longest step
    first, second = timeline.devices
    assert (first.bin_edges_ps[0], first.bin_edges_ps[-1]) == (0, 100 * 10**6)
    np.testing.assert_allclose(first.busy_fraction, [1.0, 0.0])
    np.testing.assert_allclose(second.busy_fraction, [0.0, 1.0])


def test_compute_fraction_leaves_out_time_only_collectives_ran(tmp_path):
    builder = TraceBuilder()
    gpu = builder.gpu(0)
    gpu.kernel("gemm", 0, 20, stream=7)
    gpu.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 10, 30, stream=8)  # 10..20 beside the gemm, 20..40 alone
    gpu.kernel("relu", 90, 10, stream=7)
    timeline = gpu_timeline(_model(builder, tmp_path), bins=10)  # no steps: span 0..100 us
    device = timeline.devices[0]
    np.testing.assert_allclose(device.busy_fraction, [1, 1, 1, 1, 0, 0, 0, 0, 0, 1])
    np.testing.assert_allclose(device.compute_fraction, [1, 1, 0, 0, 0, 0, 0, 0, 0, 1])
