"""The occupancy what-ifs (whatif.occupancy): a small grid spread over every SM, occupancy raised to a good level."""

import pytest

from tb_gpu_advisor.whatif.occupancy import OccupancyKernel, occupancy_raised, relaunched_over_sms, spread_fraction


def test_a_small_grid_keeps_blocks_over_sms_of_its_time():
    kernel = OccupancyKernel("k", time_ms=10.0, launch_ms=1.0, blocks=27)
    assert spread_fraction(kernel, 108, 0.002) == 0.25
    assert spread_fraction(OccupancyKernel("k", 10.0, 1.0, 200), 108, 0.002) == 1.0  # never slower than now


def test_no_launch_gets_shorter_than_a_launch_costs():
    one_block = OccupancyKernel("k", time_ms=1.0, launch_ms=0.01, blocks=1)
    assert spread_fraction(one_block, 108, 0.002) == pytest.approx(0.2)  # 10 us -> 2 us, not 10/108 us
    assert spread_fraction(OccupancyKernel("k", 1.0, 0.001, 1), 108, 0.002) == 1.0  # already shorter: kept


def test_the_step_loses_only_the_saved_kernel_time():
    kernels = [OccupancyKernel("a", 8.0, 2.0, 27), OccupancyKernel("b", 2.0, 0.5, 54)]
    estimate = relaunched_over_sms(20.0, kernels, 108, 0.002)
    # a keeps 2 ms of 8, b 1 ms of 2: 7 ms saved; the 10 ms outside these kernels stay
    assert (estimate.new_step_ms, estimate.kind, estimate.speedup) == (13.0, "model", pytest.approx(20 / 13))
    assert "More resident warps per SM" in estimate.basis and "single block" not in estimate.basis


def test_occupancy_raised_is_a_bound_in_proportion_to_resident_warps():
    kernels = [OccupancyKernel("a", 8.0, 2.0, 500, 12.5), OccupancyKernel("b", 2.0, 0.5, 500, 40.0)]
    estimate = occupancy_raised(20.0, kernels, 50.0)
    # a falls at most to 8 x 12.5/50 = 2 ms, b to 2 x 40/50 = 1.6 ms: 6.4 ms saved
    assert (estimate.new_step_ms, estimate.kind) == (pytest.approx(13.6), "bound")
    assert estimate.basis.endswith("(up to 4.00× faster for a at 12.5%)")


def test_the_replay_moves_queued_work_earlier_but_never_before_its_launch():
    import numpy as np
    from tb_gpu_advisor.whatif.occupancy import replayed_saving_ps

    starts, ends = np.array([0, 100, 150]), np.array([100, 150, 200])
    queued = np.full(3, -np.inf)
    # the first event halved: everything after it starts 50 earlier
    assert replayed_saving_ps(starts, ends, queued, np.array([0.5, 1.0, 1.0])) == 50
    # the second event was launched at 90: it starts at 90, not 50; the third was launched at 150: nothing moves it
    assert replayed_saving_ps(starts, ends, np.array([-np.inf, 90, -np.inf]), np.array([0.5, 1.0, 1.0])) == 10
    assert replayed_saving_ps(starts, ends, np.array([-np.inf, -np.inf, 150]), np.array([0.5, 1.0, 1.0])) == 0
    # an event overlapping the one before it (another stream) moves with it; an empty window saves nothing
    assert replayed_saving_ps(np.array([0, 50]), np.array([100, 120]), np.full(2, -np.inf), np.array([0.5, 1.0])) == 0
    assert replayed_saving_ps(np.array([0, 50]), np.array([100, 120]), np.full(2, -np.inf), np.array([0.5, 0.5])) == 35
    assert replayed_saving_ps(np.array([]), np.array([]), np.array([]), np.array([])) == 0.0
