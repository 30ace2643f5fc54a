"""analysis.gpu_fill: a row fills the GPU unless its recorded grid has fewer blocks than SMs or its calls are about
as short as the per-call latency."""

from tb_gpu_advisor.analysis.gpu_fill import PARTIAL_WAVE, SHORT_CALLS, blocks, underfills
from tb_gpu_advisor.analysis.kernels import KernelRow


def _row(grid, block=(128, 1, 1), mean_us=20.0, calls=10):
    total_ps = int(mean_us * 1e6 * calls)
    return KernelRow("gemm", calls, total_ps, 0, 0, None, None, None, grid, block, False, True, "")


def test_fewer_blocks_than_sms_is_a_partial_wave_whatever_the_call_length():
    assert blocks(_row((8, 4, 4))) == 128
    assert underfills(_row((128, 1, 1), mean_us=13.8), 132, 5.0) == PARTIAL_WAVE
    assert underfills(_row((128, 1, 1), mean_us=500.0), 132, 5.0) == PARTIAL_WAVE
    assert underfills(_row((132, 1, 1), mean_us=13.8), 132, 5.0) is None


def test_short_calls_underfill_on_any_grid():
    assert underfills(_row((1024, 1, 1), mean_us=9.9), 132, 5.0) == SHORT_CALLS
    assert underfills(_row((1024, 1, 1), mean_us=10.0), 132, 5.0) is None


def test_unknown_launch_shape_or_sm_count_is_judged_by_call_length_only():
    assert underfills(_row((1, 1, 1), block=(1, 1, 1)), 132, 5.0) is None  # readers' fill-in for a missing shape
    assert underfills(_row((1, 1, 1), block=None), 132, 5.0) is None
    assert underfills(_row((4, 1, 1)), None, 5.0) is None
    assert underfills(_row((1, 1, 1), block=(256, 1, 1)), 132, 5.0) == PARTIAL_WAVE  # one real block
