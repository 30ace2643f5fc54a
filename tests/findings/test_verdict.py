from tb_gpu_advisor.findings.verdict import BOTTLENECKS
from tb_gpu_advisor.model.build import build_model
from tb_gpu_advisor.pipeline import host_report
from tb_gpu_advisor.testing import TraceBuilder
from tb_gpu_advisor.xplane.reader import parse_space
from tests.findings.scenarios import healthy, kernels, report_of, step_starts


def test_healthy_trace_has_no_bottleneck_and_no_high_finding():
    report = report_of(healthy())
    summary = report["summary"]
    assert summary["bottleneck"] == "none"
    assert summary["verdict"] == ("No bottleneck: the GPU is busy 96% of each step and no single cause costs 10% or "
                                  "more.")
    assert summary["bottleneck_reason"] is None and summary["bottleneck_finding"] is None
    assert report["findings"] == []
    assert list(summary)[:4] == ["bottleneck", "verdict", "bottleneck_reason", "bottleneck_finding"]


def test_no_gpu_and_no_input_wait_is_unknown_with_the_reason():
    builder = TraceBuilder()
    python = builder.thread("python")
    for start in step_starts(python):
        python.event("cpu_work", start, 9_000)
    summary = report_of(builder)["summary"]
    assert summary["bottleneck"] == "unknown"
    assert summary["bottleneck_reason"].startswith("no GPU work in this profile")
    assert summary["verdict"] == "Unknown: " + summary["bottleneck_reason"][0].upper() + \
        summary["bottleneck_reason"][1:]


def test_empty_profile_is_unknown():
    summary = report_of(TraceBuilder())["summary"]
    assert summary["bottleneck"] == "unknown"
    assert "no GPU or host activity" in summary["bottleneck_reason"]


def test_gpu_idle_without_a_host_plane_is_unknown():
    builder = TraceBuilder()
    python = builder.thread("python")
    gpu = builder.gpu(0)
    for start in step_starts(python):
        kernels(gpu, start, 5_000)
    space = builder.xspace()
    del space.planes[0]  # the /host:CPU plane: no steps, no host activity
    report = host_report(build_model(parse_space(space.SerializeToString(), "gpu_only.xplane.pb")))
    assert report["summary"]["bottleneck"] == "unknown"
    assert "no /host:CPU plane" in report["summary"]["bottleneck_reason"]


def test_gpu_idle_with_nothing_on_the_host_is_unknown():
    builder = TraceBuilder()
    python = builder.thread("python")
    gpu = builder.gpu(0)
    for start in step_starts(python):
        kernels(gpu, start, 7_000)
    summary = report_of(builder)["summary"]
    assert summary["bottleneck"] == "unknown"
    assert summary["bottleneck_reason"] == "the GPU idles 30% of the step and no host activity was recorded at " \
                                           "those times."


def test_bottleneck_values():
    assert BOTTLENECKS == ("input", "host", "launch", "transfer", "kernel", "communication", "none", "unknown")
