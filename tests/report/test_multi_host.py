"""The multi-host view: per-host step times, the slowest host, imbalance; shown only for two hosts or more."""

from tb_gpu_advisor.report.markdown import render_markdown
from tb_gpu_advisor.report.multi_host import multi_host_view
from tb_gpu_advisor.pipeline import assemble_run_report
from tb_gpu_advisor.report.text import render_text
from tb_gpu_advisor.pipeline import HostOutcome
from tests.conftest import report_of
from tb_gpu_advisor.testing import TraceBuilder


def _host_report(host, step_us, steps=3):
    builder = TraceBuilder(hostname=host)
    python = builder.thread("python")
    for step in range(steps):
        python.step(step, step * step_us, step_us)
    builder.gpu(0).kernel("k", 10, 5, launch=(python, 1, 2))
    report = report_of(builder, f"{host}.xplane.pb")
    report["host"] = host
    return report


def test_slowest_host_and_imbalance():
    view = multi_host_view([_host_report("a", 100), _host_report("b", 125), _host_report("c", 110, steps=0)])
    assert view["host_count"] == 3
    assert [(h["host"], h["step_time_ms"], h["step_count"]) for h in view["hosts"]] == [
        ("a", 0.1, 3),
        ("b", 0.125, 3),
        ("c", None, 0),
    ]
    assert (view["slowest_host"], view["fastest_host"]) == ("b", "a")
    assert (view["step_time_ms_min"], view["step_time_ms_max"], view["step_time_spread_ms"]) == (0.1, 0.125, 0.025)
    assert view["imbalance_pct"] == 20.0


def test_without_two_timed_hosts_there_is_no_comparison():
    view = multi_host_view([_host_report("a", 100), _host_report("c", 110, steps=0)])
    assert view["slowest_host"] is None and view["imbalance_pct"] is None


def test_run_report_adds_the_view_only_for_several_hosts_and_renders_it():
    one = assemble_run_report("r", [HostOutcome("a", "a.xplane.pb", _host_report("a", 100))])
    assert "multi_host" not in one and "Hosts (" not in render_text(one)
    two = assemble_run_report(
        "r",
        [
            HostOutcome("a", "a.xplane.pb", _host_report("a", 100)),
            HostOutcome("b", "b.xplane.pb", _host_report("b", 125)),
            HostOutcome("z", "z.xplane.pb", None, "file is empty", "z.xplane.pb"),
        ],
    )
    assert list(two) == ["schema_version", "run", "hosts", "errors", "multi_host"]
    assert two["errors"] == [{"host": "z", "file": "z.xplane.pb", "error": "file is empty"}]
    text = render_text(two)
    assert "Hosts (2)" in text and "Slowest host: b at 125.0 µs per step; fastest: a at 100.0 µs" in text
    assert "## Hosts (2)" in render_markdown(two)


def _synchronous_host(host, compute_us):
    """Two GPUs, 3 steps of 10 ms (equal on every host: synchronous), `compute_us` of GEMM per step, NCCL after."""
    builder = TraceBuilder(hostname=host)
    python = builder.thread("python")
    for step in range(3):
        start = step * 10_000
        python.step(step, start, 10_000)
        for ordinal in (0, 1):
            gpu = builder.gpu(ordinal)
            gpu.kernel("sm80_xmma_gemm_bf16bf16_bf16f32", start + 10, compute_us)
            gpu.kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", start + 20 + compute_us, 9_900 - compute_us)
    report = report_of(builder, f"{host}.xplane.pb")
    report["host"] = host
    return report


def test_multi_worker_straggler_shows_in_compute_per_step_not_in_step_time():
    view = multi_host_view([_synchronous_host("w0", 6_000), _synchronous_host("w1", 8_000)])
    assert view["imbalance_pct"] == 0.0  # synchronous: equal step times
    assert [h["compute_ms_per_step"] for h in view["hosts"]] == [6.0, 8.0]
    assert (
        view["most_compute_host"],
        view["compute_ms_per_step_min"],
        view["compute_ms_per_step_max"],
        view["compute_spread_ms"],
        view["compute_imbalance_pct"],
    ) == ("w1", 6.0, 8.0, 2.0, 25.0)
    two = assemble_run_report(
        "r",
        [
            HostOutcome("w0", "w0.xplane.pb", _synchronous_host("w0", 6_000)),
            HostOutcome("w1", "w1.xplane.pb", _synchronous_host("w1", 8_000)),
        ],
    )
    assert "Most compute per step: w1 (8.00 ms on its busiest GPU, 25.0% more than the least, 6.00 ms)" in render_text(
        two
    ).replace("\n  ", " ")
    assert "Every host takes 10.00 ms per step (synchronous training makes step times equal" in render_text(
        two
    ).replace("\n  ", " ")
