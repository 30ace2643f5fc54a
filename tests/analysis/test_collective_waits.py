"""Collective kernel time split per GPU into waiting for the last arrival and transfer."""

import numpy as np

from tb_gpu_advisor.analysis.collective_waits import collective_waits


def _spans(*pairs):
    return (np.array([p[0] for p in pairs], dtype=np.int64), np.array([p[1] for p in pairs], dtype=np.int64))


def test_the_wait_is_up_to_the_last_arrival_and_the_rest_is_transfer():
    # Two collectives; GPU 2 arrives last both times (at 30 and 130), every GPU leaves at 50 and 150.
    waits = collective_waits(
        {
            0: _spans((10, 50), (110, 150)),
            1: _spans((20, 50), (100, 150)),
            2: _spans((30, 50), (130, 150)),
        }
    )
    assert waits.wait_ps == {0: 20 + 20, 1: 10 + 30, 2: 0}
    assert waits.transfer_ps == {0: 40, 1: 40, 2: 40}
    assert waits.last_ordinal == 2
    assert waits.matched_calls == 2
    # GPU 2 waits for nobody; a share of 0.5 leaves GPUs 0 and 1 (40 of 80 ps).
    assert waits.waiting_ordinals(0.5) == (0, 1)
    assert waits.waiting_ordinals(0.6) == ()


def test_a_kernel_that_ends_before_the_last_arrival_waited_its_whole_length():
    waits = collective_waits({0: _spans((0, 10)), 1: _spans((20, 30))})
    assert waits.wait_ps == {0: 10, 1: 0}
    assert waits.transfer_ps == {0: 0, 1: 10}


def test_unequal_counts_split_nothing():
    # The GPUs disagree on how many collectives they ran: no call can be matched by its order.
    waits = collective_waits({0: _spans((0, 10), (20, 30)), 1: _spans((5, 30))})
    assert waits.wait_ps == {0: 0, 1: 0}
    assert waits.transfer_ps == {0: 20, 1: 25}
    assert (waits.last_ordinal, waits.matched_calls) == (None, 0)
    assert waits.waiting_ordinals(0.0) == ()
