"""Pairing JAX's gc callbacks (start, end) into collections."""

import numpy as np

from tb_gpu_advisor.analysis.gc_pauses import gc_pauses
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.trace import HostActivity

EMPTY = np.zeros(0, np.int64)


def _host(**tagged):
    spans = {
        tag: intervals.union(np.array([s for s, _ in pairs], np.int64), np.array([e for _, e in pairs], np.int64))
        for tag, pairs in tagged.items()
    }
    return HostActivity(EMPTY, EMPTY, EMPTY, EMPTY, intervals.EMPTY, intervals.EMPTY, intervals.EMPTY, tagged=spans)


def test_callbacks_pair_into_collections():
    found = gc_pauses(_host(gc_callback=[(100, 110), (190, 200), (1_000, 1_010), (1_290, 1_300)]))
    assert found.source == "jax_gc_callbacks"
    assert list(zip(found.pauses.start_ps, found.pauses.end_ps)) == [(100, 200), (1_000, 1_300)]


def test_a_profile_that_begins_inside_a_collection_drops_its_end():
    found = gc_pauses(_host(gc_callback=[(5, 15), (1_000, 1_010), (1_090, 1_100), (3_000, 3_010), (3_190, 3_200)]))
    assert list(zip(found.pauses.start_ps, found.pauses.end_ps)) == [(1_000, 1_100), (3_000, 3_200)]


def test_python_gc_events_are_the_pauses_and_nothing_is_none():
    found = gc_pauses(_host(gc=[(10, 50), (500, 560)], gc_callback=[(0, 1), (2, 3)]))
    assert found.source == "python_gc_events" and found.count == 2
    assert gc_pauses(_host()) is None and gc_pauses(_host(gc_callback=[(0, 1)])) is None
