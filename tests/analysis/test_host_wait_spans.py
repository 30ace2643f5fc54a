"""Host time split into work and wait (analysis.host_wait_spans, the breakdown's `host_wait`): small written
traces with exact numbers, one case each, and the committed real ones."""

import pytest

from tb_gpu_advisor.analysis.breakdown import BREAKDOWN_CATEGORIES, breakdown
from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.testing import TraceBuilder
from tb_gpu_advisor.testing.kineto_trace import kernel, launch, trace_text, x_event
from tb_gpu_advisor.pipeline import host_report
from tests.conftest import report_of

PS_PER_US = 1_000_000


def _breakdown_us(tmp_path, events):
    """{category: us} over the whole written Kineto trace, zeros left out."""
    path = tmp_path / "rank0.1.pt.trace.json"
    path.write_text(trace_text(events))
    model = load_model(path)
    lo, hi = model.profile_span_ps
    found = breakdown(model, [lo], [hi]).category_ps
    return {name: int(found[name][0]) / PS_PER_US for name in BREAKDOWN_CATEGORIES if found[name][0]}


def test_a_synchronize_inside_an_op_is_a_wait_and_the_rest_of_the_op_host_work(tmp_path):
    # k1 10-20; aten::item 20-60 holds cudaStreamSynchronize 25-45; k2 launched 60-65, runs 70-80. While the GPU
    # idles: the launch calls and their latency 0-10 and 60-70 (idle attribution: the GPU waits for the launch),
    # host work 20-25 and 45-60, the wait 25-45.
    events = [
        launch(0, 5, 1),
        kernel("k1", 10, 10, 1),
        x_event("cpu_op", "aten::item", 20, 40),
        launch(25, 20, 9, name="cudaStreamSynchronize"),
        launch(60, 5, 2),
        kernel("k2", 70, 10, 2),
    ]
    assert _breakdown_us(tmp_path, events) == {
        "compute_unknown": 20.0,
        "launch": 20.0,
        "host_wait": 20.0,
        "host": 20.0,
    }


def test_a_blocking_copy_call_is_a_wait_never_a_launch(tmp_path):
    # cudaMemcpyAsync 12-40 into pageable memory: its copy runs 22-30 and the call returns at 40 (blocking). By
    # the idle attribution, 12-22 is the GPU waiting for the copy call (`copy_call`), 30-40 the host held in the
    # blocking call (`host_wait`), 0-10 and 40-50 the launch calls of k1 and k3 with their latency: never a
    # launch for the copy's call.
    events = [
        launch(0, 5, 1),
        kernel("k1", 10, 2, 1),
        launch(12, 28, 2, name="cudaMemcpyAsync"),
        x_event(
            "gpu_memcpy",
            "Memcpy DtoH (Device -> Pageable)",
            22,
            8,
            pid=0,
            tid=7,
            device=0,
            stream=7,
            correlation=2,
            bytes=4096,
        ),
        launch(40, 5, 3),
        kernel("k3", 50, 10, 3),
    ]
    assert _breakdown_us(tmp_path, events) == {
        "compute_unknown": 12.0,
        "d2h": 8.0,
        "copy_call": 10.0,
        "launch": 20.0,
        "host_wait": 10.0,
    }


def test_a_jax_wait_is_a_wait_but_the_cpu_executor_it_waits_for_works():
    # CPU-only JAX: the step thread waits in block_until_ready 100-600 while XLA's CPU executor runs the program
    # 200-400. The executor's 200 us are host work; the rest of the wait (300 us) is a wait; 500 us untraced.
    builder = TraceBuilder()
    python = builder.thread()
    executor = builder.thread("tf_XLAPjRtCpuClient/1")
    python.step(0, 0, 1000)
    python.event("$train.py:10 block_until_ready", 100, 500)
    executor.event("fusion.1", 200, 200)
    step = report_of(builder)["steps"][0]["breakdown_ms"]
    assert {k: v for k, v in step.items() if v} == pytest.approx({"host_wait": 0.3, "host": 0.2, "idle": 0.5})


def test_the_report_shows_the_wait_apart_from_host_compute():
    builder = TraceBuilder()
    python = builder.thread()
    python.step(0, 0, 1000)
    python.event("ExecutorState::Process", 0, 600)
    python.event("BlockHostUntilReady", 100, 400)
    report = report_of(builder)
    assert report["summary"]["breakdown_pct"]["host_wait"] == 40.0
    assert report["summary"]["breakdown_pct"]["host"] == 20.0


def test_real_blocking_copies_are_waits_not_launches(kineto_models):
    # v100_2rank_test spends 369 ms in cudaMemcpyAsync, blocking DtoH reads and DtoD copies blocked on a full
    # queue (analysis.launch_queue). By the host's activity alone they were kernel launch (1.8% of the step), then
    # host waits (1.13%); by the idle attribution the GPU had its work queued in those gaps: 3.53% is a device
    # wait, and the host held it 0.03% (waits) and 0.01% (launch calls).
    shares = host_report(kineto_models["v100_2rank_test"])["summary"]["breakdown_pct"]
    assert shares["device_wait"] == pytest.approx(3.53, abs=0.01)
    assert shares["host_wait"] == pytest.approx(0.03, abs=0.01)
    assert shares["launch"] == pytest.approx(0.01, abs=0.01)
    assert sum(shares.values()) == pytest.approx(100.0, abs=0.1)
