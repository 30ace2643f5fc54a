"""A TensorFlow/JAX session with one XPlane per host (testing/xplane_hosts.py: 4 hosts, one GPU each, an
all-reduce per step, host 2 given 4 ms more work per step, a clock offset per host) gets the same run-level view
as PyTorch ranks: the hosts are the ranks, the slow host and its cause and amount are found, the clocks aligned,
and the link between hosts, which no trace records, is not taken for the GPUs' NVLink."""

import pytest

import tb_gpu_advisor
from tb_gpu_advisor.schema import validate
from tb_gpu_advisor.testing import TraceBuilder
from tb_gpu_advisor.testing.xplane_hosts import EXTRA, write_host_session

OFFSETS_US = [0.0, 1500.0, -700.0, 300.0]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    logdir = tmp_path_factory.mktemp("xplane_hosts")
    write_host_session(str(logdir), extra_us={2: 4000.0}, clock_us=lambda k: OFFSETS_US[k])
    return tb_gpu_advisor.analyze(str(logdir), executor="inline")


def test_the_hosts_are_the_ranks_and_the_slow_host_is_named_with_its_cause(report):
    view = report["ranks"]
    assert validate(report, "report") == []
    assert [rank["rank"] for rank in view["ranks"]] == ["worker0", "worker1", "worker2", "worker3"]
    assert (view["rank_count"], view["step_count"], view["notes"]) == (4, 6, [])
    slow = view["slowest"]
    assert (slow["rank"], slow["cause"], slow["late_steps"], slow["as_late"]) == ("worker2", "more_compute", 6, [])
    assert slow["cause_ms_per_step"] == pytest.approx(4.0, rel=0.2)
    assert slow["work"][0]["name"] == EXTRA
    median = next(item for item in view["what_if"] if item["name"] == "rank_at_median")
    assert median["baseline_ms"] - median["step_ms"] == pytest.approx(4.0, rel=0.05)


def test_the_clocks_are_aligned_on_the_collectives(report):
    view = report["ranks"]
    offsets = [rank["clock_offset_ms"] for rank in view["ranks"]]
    for k in range(1, 4):
        assert offsets[k] - offsets[0] == pytest.approx((OFFSETS_US[k] - OFFSETS_US[0]) / 1000, abs=0.001)
    waits = [rank["mean"]["peer_wait_ms"] for rank in view["ranks"]]
    assert waits[2] == 0 and all(w == pytest.approx(4.0, rel=0.05) for i, w in enumerate(waits) if i != 2)


def test_the_link_between_hosts_is_not_taken_for_nvlink(report):
    view = report["ranks"]
    assert view["link"].startswith("not in the traces: the hosts name no rank")
    assert [kind["link_gbps"] for kind in view["collectives"]] == [None]
    peak = next(item for item in view["what_if"] if item["name"] == "collectives_at_link_peak")
    assert peak["step_ms"] is None


def test_hosts_without_collectives_are_not_joined(tmp_path):
    """Several hosts that never meet in a collective are separate programs: multi_host only, no ranks."""
    for host in ("a", "b"):
        builder = TraceBuilder(hostname=host)
        python, gpu = builder.thread("python"), builder.gpu(0)
        for step in range(3):
            python.step(step, 1000 + step * 1000, 990)
            gpu.kernel("ampere_sgemm_128x64_tn", 1020 + step * 1000, 600, launch=(python, 1005 + step * 1000, 4))
        builder.write_run(str(tmp_path), host=host)
    report = tb_gpu_advisor.analyze(str(tmp_path), executor="inline")
    assert "multi_host" in report and "ranks" not in report


def test_hosts_that_share_no_step_are_not_joined(tmp_path):
    """Hosts with collectives but no step number in common are not one job's ranks: no `ranks` object."""
    write_host_session(str(tmp_path), hosts=2, names=["a", "b"])
    write_host_session(str(tmp_path), hosts=2, names=["c", "d"], first_step=100)
    assert "ranks" not in tb_gpu_advisor.analyze(str(tmp_path), executor="inline")


def test_hosts_captured_at_different_times_are_not_joined(tmp_path):
    """Two one-host programs with an all-reduce a step and the same step numbers, captured 1000 s apart: their
    traces share no instant, so they are not one job's hosts, though their steps and collectives would match."""
    write_host_session(str(tmp_path), hosts=1, names=["a"])
    write_host_session(str(tmp_path), hosts=1, names=["b"], clock_us=lambda k: 1e9)
    report = tb_gpu_advisor.analyze(str(tmp_path), executor="inline")
    assert "multi_host" in report and "ranks" not in report
    write_host_session(str(tmp_path / "together"), hosts=1, names=["a"])
    write_host_session(str(tmp_path / "together"), hosts=1, names=["b"], clock_us=lambda k: 1500.0)
    assert tb_gpu_advisor.analyze(str(tmp_path / "together"), executor="inline")["ranks"]["rank_count"] == 2


def test_pytorch_traces_without_their_rank_are_not_joined(tmp_path):
    """PyTorch traces that do not name their rank (distributedInfo) are not taken for ranks, collectives or not:
    nothing says they are processes of one job."""
    import gzip
    import json

    from tests.readers.kineto.real import real_kineto

    with gzip.open(real_kineto("a100_2rank_nccl"), "rt") as handle:
        trace = json.load(handle)
    del trace["distributedInfo"]
    for worker in ("worker0", "worker1"):
        with gzip.open(tmp_path / f"{worker}.1000.pt.trace.json.gz", "wt") as handle:
            json.dump(trace, handle)
    report = tb_gpu_advisor.analyze(str(tmp_path), executor="inline")
    assert len(report["hosts"]) == 2 and "ranks" not in report


def test_the_text_calls_the_hosts_hosts(report):
    from tb_gpu_advisor.report.text import render_text

    text = render_text(report)
    assert "Ranks (4 hosts" in text and "6 steps on every host" in text
    assert "Slowest host: worker2, last to arrive in 6 of 6" in text
    assert "From its trace, its kernels per step against the median rank:" in text
