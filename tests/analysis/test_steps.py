import pytest

from tb_gpu_advisor.analysis.steps import find_steps, step_time_stats_ms
from tb_gpu_advisor.testing import TraceBuilder
from tests.conftest import model_of, report_of
from tests.data import real_trace


def _names(builder):
    steps = find_steps(model_of(builder))
    return steps.source, [(s.name, s.start_ps // 10**6, s.duration_ps // 10**6) for s in steps.steps]


def test_train_markers_with_step_num_and_root():
    builder = TraceBuilder()
    python = builder.thread()
    python.step(1, 0, 100)
    python.step(2, 100, 150)
    assert _names(builder) == ("host", [("train 1", 0, 100), ("train 2", 100, 150)])


def test_keras3_profiled_batch_markers():
    builder = TraceBuilder()
    builder.thread().event("Profiled batch", 10, 80, step_num=9)
    assert _names(builder) == ("host", [("Profiled batch 9", 10, 80)])


def test_legacy_trace_context_uses_graph_type():
    builder = TraceBuilder()
    builder.thread().event("TraceContext", 0, 40, graph_type="train", step_num=5)
    assert _names(builder) == ("host", [("train 5", 0, 40)])


def test_any_root_event_with_step_num_is_a_step_but_function_run_is_not():
    builder = TraceBuilder()
    python = builder.thread()
    python.event("my_train_step", 0, 30, step_num=3, _r=1)
    python.event("FunctionRun", 40, 30, _r=1)
    assert _names(builder) == ("host", [("my_train_step 3", 0, 30)])


def test_nested_markers_belong_to_the_outer_step():
    builder = TraceBuilder()
    python = builder.thread()
    python.step(1, 0, 100)
    python.step(7, 20, 30)
    assert _names(builder) == ("host", [("train 1", 0, 100)])


def test_pre_grouped_device_steps_take_the_longest_marker_per_group():
    builder = TraceBuilder(legacy=True)
    builder.gpu(0).step_marker(0, 0, 100)
    builder.gpu(1).step_marker(0, 500, 120)
    builder.gpu(0).step_marker(1, 200, 50)
    source, steps = _names(builder)
    assert source == "device"
    assert steps == [("0", 500, 120), ("1", 200, 50)] or steps == [("1", 200, 50), ("0", 500, 120)]


def test_host_markers_win_over_device_steps():
    builder = TraceBuilder(legacy=True)
    builder.gpu(0).step_marker(0, 0, 100)
    builder.thread().step(3, 0, 90)
    assert _names(builder)[0] == "host"


def test_no_markers_means_no_steps():
    builder = TraceBuilder()
    builder.gpu(0).kernel("k", 0, 10)
    assert _names(builder) == ("none", [])
    report = report_of(builder)
    assert report["steps"] == []
    assert report["summary"]["step_time_ms"] == {"mean": None, "median": None, "stdev": None, "count": 0}
    assert report["summary"]["confidence"]["level"] == "medium"
    assert report["summary"]["confidence"]["reasons"][0].startswith("No step markers")


def test_step_time_stats():
    builder = TraceBuilder()
    python = builder.thread()
    for index, duration in enumerate((1000, 2000, 6000)):
        python.step(index, index * 10_000, duration)
    stats = step_time_stats_ms(find_steps(model_of(builder)))
    assert stats == {"mean": 3.0, "median": 2.0, "stdev": 2.6457513110645907, "count": 3}


def test_real_traces_step_sources():
    keras = report_of_path("tf221_cpu_keras_input_bound.xplane.pb")
    assert keras["summary"]["step_source"] == "host"
    assert keras["summary"]["step_time_ms"]["count"] == 21
    jax = report_of_path("jax0102_cpu_steps.xplane.pb")
    # 12 marked steps; train 0 compiles (warm-up) and is left out of every per-step number
    assert jax["summary"]["step_time_ms"]["count"] == 11
    assert [s["name"] for s in jax["steps"][:2]] == ["train 1", "train 2"]
    assert jax["summary"]["steps_left_out"] == [{"name": "train 0", "time_ms": 36.565247, "reason": "warm-up"}]


def test_one_set_of_steady_steps_on_the_compile_step_trace():
    """jax0102: the step statistics, the Time line and the batch-preparation finding all read the 11 steady steps:
    one share for one quantity (review G7: 44.3% in the Time line vs 63.8% in the finding before)."""
    jax = report_of_path("jax0102_cpu_steps.xplane.pb")
    summary = jax["summary"]
    assert round(summary["step_time_ms"]["mean"], 2) == 6.28
    prep = next(f for f in jax["findings"] if f["id"] == "input.host_batch_prep")
    assert summary["breakdown_pct"]["input_prep"] == pytest.approx(
        prep["evidence"]["metrics"]["batch_prep_pct"], abs=0.1
    )


def test_a_step_the_capture_cut_is_left_out_of_the_step_statistics():
    """The MI250 capture's ProfilerStep#2 (49 us, no GPU work: the profiler stopped inside it) is no step: the mean
    is the one complete step's 9.29 ms, not 4.67 ms (review G7); the confidence still says it was cut."""
    mi250 = report_of_path("kineto/mi250_minitoy_train.pt.trace.json.gz")
    summary = mi250["summary"]
    assert summary["step_time_ms"]["count"] == 1 and round(summary["step_time_ms"]["mean"], 2) == 9.29
    assert [s["name"] for s in mi250["steps"]] == ["ProfilerStep#1"]
    assert summary["steps_left_out"][0]["name"] == "ProfilerStep#2" and summary["steps_left_out"][0]["reason"] == "cut"
    assert any("cut by the capture" in reason for reason in summary["confidence"]["reasons"])


def report_of_path(name):
    from tb_gpu_advisor.pipeline import analyze_host_file

    return analyze_host_file(real_trace(name))


def test_two_steps_give_no_stdev():
    """mi250 once read "stdev 6.53 ms" over two steps with a 4.67 ms mean: two steps show no spread."""
    builder = TraceBuilder()
    python = builder.thread()
    for index, duration in enumerate((1000, 8000)):
        python.step(index, index * 10_000, duration)
    assert step_time_stats_ms(find_steps(model_of(builder))) == {"mean": 4.5, "median": 4.5, "stdev": None, "count": 2}


@pytest.mark.parametrize("last_us, left_out", [(50, ["train 3"]), (10_000, [])])
def test_only_a_short_last_step_without_gpu_work_is_a_cut_stub(last_us, left_out):
    """A last step with no GPU work is the capture's cut stub when it is short (the profiler stopped inside it);
    at full length it is a step whose device events are missing, which stays a step (confidence says so)."""
    builder = TraceBuilder()
    python = builder.thread("python")
    gpu = builder.gpu(0)
    for index, duration in enumerate([10_000, 10_000, 10_000, last_us]):
        python.step(index, index * 10_000, duration)
        if index < 3:
            gpu.kernel("k", index * 10_000 + 100, 9_000)
    report = report_of(builder)
    assert [step["name"] for step in report["summary"]["steps_left_out"]] == left_out
    assert report["summary"]["step_time_ms"]["count"] == 4 - len(left_out)
