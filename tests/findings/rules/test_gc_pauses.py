"""host.gc_pauses: from JAX's gc callbacks (XPlane Python tracer) and PyTorch's Python GC events; never stalls."""

from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.pipeline import host_report
from tb_gpu_advisor.testing import TraceBuilder
from tb_gpu_advisor.testing.kineto_trace import kernel, launch, trace_text, x_event
from tests.findings.scenarios import findings_by_id, kernels, report_of, step_starts

CALLBACK = "$__init__.py:132 _xla_gc_callback"


def jax_loop(gc_every=2, pause_us=1_500, callbacks=True):
    """6 steps of 10 ms; every `gc_every`-th step starts with a collection of `pause_us` (the GPU idles), the
    rest of the step computes."""
    builder = TraceBuilder()
    builder.metadata(jax_version="0.10.2", jaxlib_version="0.10.2")
    python = builder.thread("python")
    gpu = builder.gpu(0)
    for index, start in enumerate(step_starts(python, 6)):
        busy_from = start + 100
        if index % gc_every == 0:
            if callbacks:
                python.event(CALLBACK, start + 100, 20)
                python.event(CALLBACK, start + 100 + pause_us - 20, 20)
            busy_from = start + 100 + pause_us
        kernels(
            gpu,
            busy_from,
            start + 9_900 - busy_from,
            name="loop_fusion_1",
            count=2,
            launch_thread=python,
            launch_ahead_us=50,
        )
    return builder


def test_gc_pauses_from_jax_callbacks():
    finding = findings_by_id(report_of(jax_loop()))["host.gc_pauses"]
    metrics = finding["evidence"]["metrics"]
    # 3 collections of 1.5 ms (start callback to end callback) in 60 ms of steps, all with the GPU idle
    assert (metrics["gc_pause_count"], metrics["gc_pause_ms"], metrics["gc_pause_max_ms"]) == (3, 4.5, 1.5)
    assert metrics["gc_pause_gpu_idle_pct"] == 7.5 and metrics["source"] == "jax_gc_callbacks"
    assert finding["severity"] == "medium"
    assert "gc.freeze()" in finding["fix"] and finding["evidence"]["pointers"]["time_ranges_ms"]


def test_a_stall_without_gc_events_is_not_a_gc_pause():
    assert "host.gc_pauses" not in findings_by_id(report_of(jax_loop(callbacks=False)))


def test_rare_short_collections_are_quiet():
    assert "host.gc_pauses" not in findings_by_id(report_of(jax_loop(gc_every=6, pause_us=200)))


def test_python_gc_events_of_pytorch(tmp_path):
    events = []
    for n in range(4):
        base = n * 1_000
        events += [
            x_event("user_annotation", f"ProfilerStep#{n}", base, 1_000),
            x_event("python_function", "Python GC", base + 10, 300),
            launch(base + 320, 4, n),
            kernel("ampere_sgemm_128x64_tn", base + 330, 600, n),
        ]
    path = tmp_path / "rank0.1.pt.trace.json"
    path.write_text(
        trace_text(
            events,
            deviceProperties=[
                {
                    "id": 0,
                    "name": "NVIDIA A100-SXM4-80GB",
                    "computeMajor": 8,
                    "computeMinor": 0,
                    "numSms": 108,
                    "totalGlobalMem": 85_899_345_920,
                }
            ],
        )
    )
    report = host_report(load_model(path))
    finding = next(f for f in report["findings"] if f["id"] == "host.gc_pauses")
    assert finding["evidence"]["metrics"]["gc_pause_count"] == 4
    assert finding["evidence"]["metrics"]["source"] == "python_gc_events"
    assert finding["evidence"]["metrics"]["gc_pause_gpu_idle_pct"] == 30.0
