"""analysis.py_function_calls on small call lists and on the committed GIL-bound heldout pair."""

import numpy as np

from tb_gpu_advisor.analysis.py_function_calls import py_function_calls
from tb_gpu_advisor.readers.load import load_model
from tests.data import REAL

MS = 1_000_000_000


def _calls(*spans_ms):
    starts, ends = zip(*spans_ms)
    return np.array(starts, dtype=np.int64) * MS, np.array(ends, dtype=np.int64) * MS


def test_calls_that_take_turns_are_serialized():
    """Alone 1 ms; two at once 2 ms each: the overlapped calls last as long as full serialization predicts."""
    found = py_function_calls(_calls((0, 1), (2, 3), (4, 6), (4, 6), (7, 9), (7, 9)))
    assert (found.calls, found.alone, found.alone_ms, found.overlapped_ms) == (6, 2, 1.0, 2.0)
    assert found.overlapped_in_flight == 2.0 and found.serialized is True


def test_calls_that_wait_side_by_side_are_not():
    """Alone 2 ms; two at once still 2 ms each: waiting calls do not slow each other."""
    found = py_function_calls(_calls((0, 2), (3, 5), (6, 8), (6, 8)))
    assert found.serialized is False


def test_one_kind_of_call_cannot_tell():
    """All alone (a sequential map) or all overlapped: no comparison inside the trace."""
    assert py_function_calls(_calls((0, 1), (2, 3))).serialized is None
    assert py_function_calls(_calls((0, 2), (1, 3))).serialized is None
    assert py_function_calls(()) is None


def test_heldout_python_parallel_computes_under_the_gil():
    """tf_map_python_parallel (a pure-Python loop in tf.numpy_function, 2 threads): 84 lone calls of 1.93 ms, the
    overlapped ones 4.37 ms with 1.88 in flight; the sequential twin's calls took 2.18 ms."""
    model = load_model(str(REAL / "cpu_pairs" / "heldout" / "tf_map_python_parallel.xplane.pb"))
    found = py_function_calls(model.host_activity.py_function_calls)
    assert (found.calls, found.alone, found.alone_ms, found.overlapped_ms) == (597, 84, 1.928, 4.3745)
    assert found.serialized is True


def _intervals(*spans_ms):
    from tb_gpu_advisor.model import intervals

    starts, ends = _calls(*spans_ms)
    return intervals.union(starts, ends)


def test_the_step_threads_python_waiting_for_calls_to_end_shows_they_hold_the_gil():
    """Input waits end at 10, 20, 30 ms; the step's tf.function starts 3 ms later. A call (2 ms) ends inside two of
    the three sections: the loop's Python waited for it. None where its shortest section outlasts a call."""
    waits, functions = _intervals((9, 10), (19, 20), (29, 30)), _intervals((13, 14), (23, 24), (33, 34))
    held = py_function_calls(_calls((10, 12), (20, 22), (24, 26)), waits, functions)
    assert (held.step_sections, held.step_sections_after_call, held.shortest_section_ms) == (3, 2, 3.0)
    assert held.mean_ms == 2.0 and held.holds_gil is None  # a 3 ms section outlasts a 2 ms call: cannot tell
    long_calls = py_function_calls(_calls((6, 12), (16, 22), (26, 36)), waits, functions)
    assert long_calls.holds_gil is True and long_calls.computes is True
    released = py_function_calls(_calls((4, 10), (14, 19), (24, 29)), waits, functions)
    assert released.step_sections_after_call == 0 and released.holds_gil is False and released.computes is False


def test_heldout_python_sequential_holds_the_gil_and_the_sleeping_map_does_not():
    """tf_map_python_sequential (one call at a time, so serialized cannot tell): the loop's Python waited for a call
    to end in 15 of 20 sections; tf_map_sequential's sleeping calls end in none of them."""
    from tb_gpu_advisor.analysis.host_analysis import analyze_host

    for name, expected in (("heldout/tf_map_python_sequential", (15, True)), ("tf_map_sequential", (0, False))):
        found = analyze_host(load_model(str(REAL / "cpu_pairs" / f"{name}.xplane.pb"))).py_function_calls
        assert (found.step_sections, found.serialized) == (20, None)
        assert (found.step_sections_after_call, found.computes) == expected
