"""The profiler's own host cost (analysis.capture_overhead): the note's size gate and wording, on exact numbers;
and host_inflation, by which a claim on host time keeps only the program's share of it and every claim is set
against the step without the profiler's time."""

from types import SimpleNamespace

import pytest

from tb_gpu_advisor.analysis.capture_overhead import PROFILER_HOST_US_PER_OP, CaptureOverhead, host_inflation


def test_note_left_out_below_a_material_share_of_the_step():
    # 290 ops x 2.5 us = 0.725 ms: 4.8% of a 15 ms step, under 5%.
    assert CaptureOverhead(("record_shapes", "with_flops"), 290.0, 15.0, 14.0).note() is None
    # 310 ops: 0.775 ms, 5.2%: shown.
    assert CaptureOverhead(("record_shapes", "with_flops"), 310.0, 15.0, 14.0).note() is not None


def test_cost_per_step():
    assert CaptureOverhead(("record_shapes",), 400.0, 10.0, None).cost_ms == 1.0
    assert CaptureOverhead((), 400.0, 10.0, None).cost_ms is None


def test_without_a_gpu_no_gpu_words():
    note = CaptureOverhead(("record_shapes",), 400.0, 10.0, None).note()
    assert "GPU" not in note and "about 1.0 ms of each 10.00 ms step" in note


def test_with_a_gpu_the_pace_is_named():
    note = CaptureOverhead(("record_shapes",), 400.0, 10.0, 9.5).note()
    assert "the device sets the pace" in note


def _model(ops, options=("record_shapes",)):
    return SimpleNamespace(profiler_options=options, profiled_ops=ops)


def test_the_profilers_share_of_host_time_comes_off_host_claims_and_the_step():
    """8 ms of host time (6 traced, 2 untraced) holds 800 recorded ops: 2 ms of profiler time at 2.5 µs per op,
    a quarter of the host's time; 6 of the 10 ms step have the host on the critical path, so 1.5 ms of the step is
    the profiler's. A 6 ms host claim is 4.5 ms of the program's 8.5 ms step: 2.12x, said over the 10 ms window."""
    assert PROFILER_HOST_US_PER_OP == 2.5
    inflation = host_inflation(_model(800), 10.0, 6.0, 4.0, untraced_ms=2.0)
    assert inflation.work_share == pytest.approx(0.25)
    assert inflation.critical_ms == pytest.approx(1.5)
    recoverable = inflation.as_unprofiled(6.0, host_side=True)
    assert 10.0 / (10.0 - recoverable) == pytest.approx(8.5 / 4.0)
    # A kernel claim keeps its time, on the shorter step: 2 ms of 8.5.
    assert 10.0 / (10.0 - inflation.as_unprofiled(2.0, host_side=False)) == pytest.approx(8.5 / 6.5)
    # The GPU's 3 ms of work, on the profiled window's scale, is the floor those claims are held at.
    assert inflation.as_profiled(3.0, host_side=False) == pytest.approx(3.0 * 10.0 / 8.5)


def test_no_inflation_without_recording_options_ops_or_host_time():
    assert host_inflation(_model(800, options=()), 10.0, 6.0, 4.0) is None
    assert host_inflation(_model(0), 10.0, 6.0, 4.0) is None
    assert host_inflation(_model(800), 10.0, 0.0, 0.0) is None
    # The host off the critical path: the profiler's time hides behind the GPU's.
    assert host_inflation(_model(800), 10.0, 6.0, 0.0) is None


def test_the_note_names_the_options_and_the_ops_per_step():
    note = CaptureOverhead(("record_shapes", "with_flops"), 400.0, 10.0, 9.5).note()
    assert note.startswith(
        "This capture recorded input shapes and FLOPs (record_shapes=True, with_flops=True) "
        "for 400 operator events per step"
    )


def test_the_saving_is_held_at_the_gpus_idle_while_the_host_works():
    """a100_8rank_control: 6,295 ops per step model 15.7 ms, but the GPU idles only 9.44 ms of the 77.50 ms step
    while the host works (it is busy 64.76 ms): the step cannot lose more, and the host does not set its pace."""
    note = CaptureOverhead(("record_shapes",), 6295.0, 77.5, 64.76, 9.44).note()
    assert "by up to that 9.44 ms" in note and "15.7 ms" in note
    assert "sets the pace" not in note


def test_a_model_below_the_bound_says_about_and_names_the_bound():
    note = CaptureOverhead(("record_shapes",), 2392.0, 26.18, 1.43, 24.66).note()
    assert "the host sets the pace" in note
    assert "by about 6.0 ms (a model: 2.5 µs per recorded op; at most that 24.66 ms)" in note
    assert "up to about" not in note


def test_little_host_idle_changes_the_step_little():
    note = CaptureOverhead(("record_shapes",), 4000.0, 100.0, 80.0, 2.0).note()
    assert "idles only 2.00 ms of it while the host works, so the step time changes little" in note


def test_the_note_gives_the_one_unprofiled_step_the_findings_use():
    """Review finalA 2: 2,392 ops at 2.5 µs cost the host about 6.0 ms per step, 5.65 ms of it while the GPU idles
    waiting on the host (UnprofiledStep, from host_inflation): the note names that one step, 26.18 - 5.65 ms."""
    from tb_gpu_advisor.analysis.capture_overhead import UnprofiledStep

    overhead = CaptureOverhead(("record_shapes",), 2392.0, 26.18, 1.43, 24.66, UnprofiledStep(5.65, 20.53))
    note = overhead.note()
    assert "the host sets the pace here, and the options cost the host about 6.0 ms per step" in note
    assert "about 5.65 ms of it while the GPU idles waiting on the host" in note
    assert "the step is likely about 20.53 ms" in note and "set against that 20.53 ms step" in note
    assert "shorter by" not in note and overhead.shortens_step()


@pytest.mark.parametrize(
    "overhead, shortens",
    [
        (CaptureOverhead(("record_shapes",), 2392.0, 26.18, 1.43, 24.66), True),
        (CaptureOverhead(("record_shapes",), 200.0, 26.18, 1.43, 24.66), False),  # 0.5 ms: under 5% of the step
        (CaptureOverhead(("record_shapes",), 4000.0, 100.0, 95.0, 2.0), False),  # the device sets the pace
        (CaptureOverhead(("record_shapes",), 4000.0, 100.0, 80.0, 2.0), False),  # idles 2% while the host works
        (CaptureOverhead((), 4000.0, 100.0, 10.0, 80.0), False),  # no option on
        (CaptureOverhead(("record_shapes",), 4000.0, 100.0, None, None), False),  # no GPU: no step to shorten
    ],
)
def test_the_step_is_set_shorter_only_where_the_note_says_so(overhead, shortens):
    """Review finalA 4: the findings use the unprofiled step only where the note says the step is shorter."""
    assert overhead.shortens_step() is shortens
    assert shortens is (overhead.note() is not None and "the step is likely shorter" in overhead.note())
