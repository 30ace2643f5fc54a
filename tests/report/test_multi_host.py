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


def _joined(compute_ms):
    """The `ranks` object of ranks built from numbers (tests/analysis/ranks/synthetic.py)."""
    from tb_gpu_advisor.analysis.ranks.run import analyze_ranks
    from tb_gpu_advisor.report.ranks_view import ranks_view
    from tests.analysis.ranks.synthetic import rank_set

    return ranks_view(analyze_ranks(rank_set(compute_ms)))


def test_joined_ranks_name_the_rank_the_others_wait_for_never_the_longest_step():
    """Rank 1 computes 8 ms against rank 0's 2 ms: rank 0 waits 6 ms per 11 ms step at the all-reduce. Its host's
    step markers show the longest mean step (125 µs here), which is a wait, not slowness: the slowest host is the
    Ranks verdict's, and the imbalance is the time the others wait for it over the run's step (6 / 11 ms)."""
    ranks = _joined([2.0, 8.0])
    assert ranks["slowest"]["rank"] == 1 and ranks["step_time_ms"] == 11.0
    hosts = [_host_report("w0", 125), _host_report("w1", 100)]
    alone = multi_host_view(hosts)
    assert (alone["ranks_joined"], alone["slowest_host"]) == (False, "w0")
    view = multi_host_view(hosts, ranks, {0: "w0", 1: "w1"})
    assert view["ranks_joined"] and (view["slowest_host"], view["fastest_host"]) == ("w1", None)
    assert view["imbalance_pct"] == round(100 * 6.0 / 11.0, 2)
    assert view["step_time_spread_ms"] == 0.025  # the step markers' spread stays as measured
    text = render_text({"run": "r", "hosts": [], "errors": [], "multi_host": view, "ranks": ranks})
    hosts_section = text[text.index("Hosts (2)") :].replace("\n  ", " ")
    assert "the host the others wait for is w1 (rank 1, the Ranks section's verdict): 6.00 ms per step" in hosts_section
    assert "Slowest host" not in hosts_section and "fastest" not in hosts_section


def test_joined_balanced_ranks_have_no_slowest_host():
    view = multi_host_view([_host_report("w0", 125), _host_report("w1", 100)], _joined([4.0, 4.0]), {0: "w0", 1: "w1"})
    assert view["ranks_joined"] and view["slowest_host"] is None and view["imbalance_pct"] is None
    text = render_text({"run": "r", "hosts": [], "errors": [], "multi_host": view, "ranks": _joined([4.0, 4.0])})
    assert "no host holds the others back (the Ranks section's verdict)" in text.replace("\n  ", " ")


def test_the_hosts_table_has_a_header_per_column():
    text = render_text(
        assemble_run_report("r", [HostOutcome(h, f"{h}.xplane.pb", _host_report(h, 100)) for h in ("a", "b")])
    )
    lines = text[text.index("Hosts (2)") :].splitlines()
    header = next(line for line in lines if line.startswith("host "))
    dashes = lines[lines.index(header) + 1]
    assert header.split()[-2:] == ["input", "wait"] and len(dashes.split()) == 7
