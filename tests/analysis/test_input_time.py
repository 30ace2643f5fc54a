"""The step-time breakdown's input: the step thread blocked on its loader threads is input wait, and its batch
preparation is input preparation where the trace shows it; exact numbers on generated traces, and the header and
the Time line agreeing with the verdict on the committed real traces (compare: tests/comparison/test_input_driver.py)."""

import numpy as np
import pytest

from tb_gpu_advisor.analysis.timeline import gpu_timeline
from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.readers.xplane.build import build_model
from tb_gpu_advisor.pipeline import host_report
from tb_gpu_advisor.report.sections import host_sections
from tb_gpu_advisor.readers.xplane.reader import read_space
from tests.data import real_trace
from tests.findings.rules.test_feeder_blocked import jax_queue_loop
from tests.findings.rules.test_input_host_batch_prep import jax_loop, tf_loop
from tests.findings.scenarios import findings_by_id, report_of


def _steps(report, key):
    return [step["breakdown_ms"][key] for step in report["steps"]]


def _line(report, prefix):
    return next(line for line in host_sections(report)[0].lines if line.startswith(prefix))


def test_a_step_thread_waiting_on_its_loader_is_input_wait_per_step_and_overall():
    report = report_of(jax_queue_loop())
    # 6 steps of 10 ms, each starting with 3 ms in queue.get while the GPU idles (host.feeder_blocked: 30.0%)
    assert _steps(report, "input_wait") == [3.0] * 6
    assert report["summary"]["breakdown_pct"]["input_wait"] == 30.0
    assert report["summary"]["input_wait_pct"] == 30.0
    assert report["summary"]["breakdown_pct"]["host"] < 2.0
    assert findings_by_id(report)["host.feeder_blocked"]["evidence"]["metrics"]["feeder_blocked_pct"] == 30.0
    # the tf.data/DataLoader finding stays quiet: the wait is the loader thread's, not IteratorGetNext's
    assert "input.gpu_waits_for_input" not in findings_by_id(report)
    assert _line(report, "GPUs:").endswith("input wait: 30.0%")
    assert _line(report, "Time:").startswith("Time: compute (other/unknown dtype) 68.0%, input wait 30.0%")


def test_a_cpu_only_step_thread_waiting_on_its_loader_is_input_wait():
    report = report_of(jax_queue_loop(cpu_only=True))
    assert _steps(report, "input_wait") == [3.0] * 6
    assert report["summary"]["input_wait_pct"] == 30.0
    assert report["summary"]["verdict"].startswith(
        "Input-bound: the step thread waits on its loader, through a queue.Queue (get), 30% of each step"
    )


def test_waiting_on_a_lock_is_contention_not_input():
    report = report_of(jax_queue_loop(lock=True))
    assert findings_by_id(report)["host.feeder_blocked"]["evidence"]["metrics"]["cause"] == "lock_contention"
    assert _steps(report, "input_wait") == [0.0] * 6
    assert report["summary"]["input_wait_pct"] == 0.0
    assert report["summary"]["breakdown_pct"]["host"] == pytest.approx(30.0, abs=1.0)


def test_traced_batch_preparation_is_input_preparation():
    report = report_of(jax_loop(4_000))
    # known calls fill 90% of each 4 ms idle start (certainty high): all of it is preparation
    assert _steps(report, "input_prep") == [4.0] * 4
    assert report["summary"]["breakdown_pct"]["input_prep"] == 40.0
    assert report["summary"]["batch_prep_pct"] == 40.0
    assert report["summary"]["breakdown_pct"]["input_wait"] == 0.0
    assert "host.gpu_idle_host_busy" not in findings_by_id(report)


def test_an_untraced_stall_is_not_relabelled_as_input():
    report = report_of(jax_loop(4_000, calls=()))
    assert findings_by_id(report)["input.host_batch_prep"]["evidence"]["metrics"]["certainty"] == "low"
    assert _steps(report, "input_prep") == [0.0] * 4
    # the 4 ms stall and 0.1 ms after the kernel: idle, untraced; the time before the kernel goes by the idle
    # attribution: the dispatch (host) and the kernel's launch call with its latency (launch)
    assert _steps(report, "idle") == [4.1] * 4
    assert (_steps(report, "host"), _steps(report, "launch")) == ([0.04] * 4, [0.06] * 4)


def test_medium_certainty_counts_only_the_known_preparation_calls():
    calls = (("EagerLocalExecute: DecodeJpeg", 0.3), ("EagerLocalExecute: Cast", 0.6))
    report = report_of(tf_loop(4_000, calls=calls))
    assert findings_by_id(report)["input.host_batch_prep"]["evidence"]["metrics"]["certainty"] == "medium"
    # DecodeJpeg's 1.2 ms of each 4 ms start is preparation on evidence; the Cast is other host work
    assert _steps(report, "input_prep") == [1.2] * 4


def test_a_tf_data_wait_stays_tf_datas():
    report = report_of(jax_loop(4_000, calls=(), tf_data_wait=True))
    assert _steps(report, "input_wait") == pytest.approx([4.0] * 4, abs=0.01)
    assert _steps(report, "input_prep") == [0.0] * 4


# --- the committed real traces -----------------------------------------------------------------------------------


def _real(name):
    return host_report(load_model(real_trace(name)))


def test_feeder_one_loader_header_and_time_line_agree_with_the_verdict():
    report = _real("feeder/feeder_one_loader.xplane.pb")
    share = findings_by_id(report)["host.feeder_blocked"]["evidence"]["metrics"]["feeder_blocked_pct"]
    assert report["summary"]["verdict"].startswith("Input-bound: the step thread waits on its loader")
    assert report["summary"]["input_wait_pct"] == pytest.approx(share, abs=0.5)
    assert report["summary"]["breakdown_pct"]["input_wait"] == pytest.approx(share, abs=0.5)
    assert "input wait: 33.6%" in _line(report, "GPUs:")
    assert "input wait 33.6%" in _line(report, "Time:")
    steps = next(section for section in host_sections(report) if section.title.startswith("Steps"))
    assert "input" in steps.table.headers


def test_feeder_eight_loaders_waits_little():
    report = _real("feeder/feeder_eight_loaders.xplane.pb")
    assert report["summary"]["input_wait_pct"] < 1.0


@pytest.mark.parametrize("name", ["jax0102_cpu_steps.xplane.pb", "tf221_cpu_python_loader_inline.xplane.pb"])
def test_traced_inline_loaders_show_their_preparation(name):
    report = _real(name)
    prep = findings_by_id(report)["input.host_batch_prep"]["evidence"]["metrics"]
    assert prep["certainty"] == "high"
    # per step the breakdown's preparation is the finding's; the summary is over every step, warm-up included
    steady = report["steps"][1:] if prep["steps_measured"] < len(report["steps"]) else report["steps"]
    mean_pct = 100.0 * sum(s["breakdown_ms"]["input_prep"] for s in steady) / sum(s["time_ms"] for s in steady)
    assert mean_pct == pytest.approx(prep["batch_prep_pct"], abs=0.5)
    assert "input preparation" in _line(report, "Time:")


def test_the_untraced_jax_loader_is_not_input_preparation():
    report = _real("cpu_pairs/jax_loader_inline.xplane.pb")
    assert findings_by_id(report)["input.host_batch_prep"]["evidence"]["metrics"]["certainty"] == "low"
    assert report["summary"]["breakdown_pct"]["input_prep"] == 0.0
    assert report["summary"]["breakdown_pct"]["idle"] > 40.0


def test_the_timeline_strip_of_input_waits_holds_the_loader_waits(tmp_path):
    model = build_model(read_space(jax_queue_loop().write(str(tmp_path / "t.xplane.pb"))))
    timeline = gpu_timeline(model, bins=600)
    waited_ps = float((timeline.input_wait_fraction * np.diff(timeline.bin_edges_ps)).sum())
    assert waited_ps == pytest.approx(18e9, rel=1e-6)  # 6 waits of 3 ms on the queue, the GPU idle
