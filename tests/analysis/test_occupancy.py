from tb_gpu_advisor.analysis.occupancy import sm_limits, theoretical_occupancy


def test_limiters():
    # A100: 2048 threads, 32 blocks, 164 KB shared memory per SM
    assert theoretical_occupancy((8, 0), 256, 32, 0) == (100.0, "threads")
    assert theoretical_occupancy((8, 0), 256, 128, 0) == (25.0, "registers")
    assert theoretical_occupancy((8, 0), 256, 32, 96 * 1024) == (12.5, "shared memory")
    assert theoretical_occupancy((8, 0), 32, 16, 0) == (50.0, "block size")
    # registers are allocated per warp in units of 256: 33 registers cost like 40
    assert theoretical_occupancy((7, 0), 1024, 33, 0) == (50.0, "registers")


def test_unknown_architectures_use_the_closest_older_one():
    assert sm_limits((8, 7)) == (1536, 16, 164 * 1024)
    assert sm_limits((9, 5)) == sm_limits((9, 0))
    assert sm_limits((5, 2)) is None
    assert theoretical_occupancy((5, 2), 256, 32, 0) == (None, None)
