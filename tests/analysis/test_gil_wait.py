"""The step thread waiting for the GIL tf.data's Python-function calls hold is a wait (breakdown `gil_wait`), never
host compute: on small generated inputs and on the committed GIL-bound heldout pair."""

from dataclasses import dataclass

import numpy as np
import pytest

from tb_gpu_advisor.analysis.breakdown import breakdown
from tb_gpu_advisor.analysis.py_function_calls import gil_waits, py_function_calls
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.pipeline import analyze_host_file
from tb_gpu_advisor.testing import TraceBuilder
from tests.conftest import model_of
from tests.data import REAL

MS = 1_000_000_000


@dataclass(frozen=True)
class _Prep:
    gaps: object
    certainty: str


def _spans(*spans_ms):
    return intervals.union(
        np.array([s for s, _ in spans_ms], dtype=np.int64) * MS, np.array([e for _, e in spans_ms], dtype=np.int64) * MS
    )


def _calls_holding_the_gil():
    """Calls of 6 ms ending inside each 3 ms stretch between an input wait and the step's tf.function call."""
    waits, functions = _spans((9, 10), (19, 20), (29, 30)), _spans((13, 14), (23, 24), (33, 34))
    ends = np.array([12, 22, 32], dtype=np.int64) * MS
    return py_function_calls((ends - 6 * MS, ends), waits, functions)


def test_gil_waits_are_the_idle_starts_only_where_the_calls_hold_the_gil():
    calls = _calls_holding_the_gil()
    assert calls.holds_gil is True
    gaps = _spans((10, 13), (20, 23))
    assert gil_waits(_Prep(gaps, "medium"), calls) is gaps
    assert len(gil_waits(_Prep(gaps, "high"), calls)) == 0  # known preparation calls fill them: batch prep
    assert len(gil_waits(None, calls)) == 0 and len(gil_waits(_Prep(gaps, "low"), None)) == 0


def test_a_gil_wait_is_not_host_compute_and_the_categories_still_add_up():
    """A CPU-only step of 1 ms, the step thread busy throughout; 0.2 ms of it waits for the GIL: 0.8 ms host compute,
    0.2 ms GIL wait, the same 1 ms in all."""
    builder = TraceBuilder()
    python = builder.thread()
    python.step(0, 0, 1000)
    python.event("ExecutorState::Process", 0, 1000)
    model = model_of(builder)
    busy = model.host_activity.busy
    start, end = int(busy.start_ps[0]), int(busy.end_ps[-1])
    gil = intervals.union(np.array([start + 100_000_000]), np.array([start + 300_000_000]))
    split = breakdown(model, [start], [end], gil_waits=gil)
    got = {name: int(values[0]) for name, values in split.category_ps.items() if values[0]}
    assert end - start == 1_000_000_000 and got == {"gil_wait": 200_000_000, "host": 800_000_000}
    plain = breakdown(model, [start], [end])
    assert {name: int(values[0]) for name, values in plain.category_ps.items() if values[0]} == {"host": end - start}


@pytest.fixture(scope="module")
def python_parallel():
    return analyze_host_file(str(REAL / "cpu_pairs" / "heldout" / "tf_map_python_parallel.xplane.pb"))


def test_the_time_line_shows_the_heldout_gil_wait_the_finding_measures(python_parallel):
    """tf_map_python_parallel: the step thread waits 6.72 ms per step for the GIL (9.2% of the step), which the
    Time line counted as host compute (64.2%): now host compute 54.9%, GIL wait 9.2%, input wait 35.8%."""
    shares = python_parallel["summary"]["breakdown_pct"]
    assert (shares["host"], shares["gil_wait"], shares["input_wait"]) == (54.91, 9.25, 35.83)
    assert sum(shares.values()) == pytest.approx(100.0, abs=0.05)
    (finding,) = [f for f in python_parallel["findings"] if f["id"] == "host.python_function"]
    assert "counts it as host compute" not in finding["summary"]
    per_step = finding["evidence"]["metrics"]["gil_wait_ms_per_step"]
    steps = python_parallel["steps"]
    assert per_step == pytest.approx(sum(s["breakdown_ms"]["gil_wait"] for s in steps) / len(steps), abs=1e-3)
