"""The verdict of a CPU-only profile says what its time breakdown shows (findings.cpu_verdict): mostly its own
host compute is host-bound; mostly collectives is waiting, no evidence that this rank is slow; never a GPU
bottleneck."""

from tb_gpu_advisor.pipeline import analyze_host_file
from tb_gpu_advisor.testing import TraceBuilder
from tests.conftest import report_of
from tests.data import REAL


def _cpu_steps(busy_us):
    """Steps of 10 ms on a CPU-only trace whose step thread works `busy_us` of each."""
    builder = TraceBuilder()
    python = builder.thread()
    for index in range(6):
        start = index * 10_000
        python.step(index, start, 10_000)
        python.event("aten::addmm", start, busy_us)
    return report_of(builder)["summary"]


def test_a_cpu_only_step_that_is_mostly_its_own_compute_is_host_bound():
    summary = _cpu_steps(8_000)
    assert summary["breakdown_pct"]["host"] == 80.0
    assert summary["bottleneck"] == "host"
    assert summary["verdict"].startswith("Host-bound: the step computes on the CPU 80% of its time (no GPU work")


def test_a_cpu_only_step_that_mostly_idles_gets_no_verdict():
    summary = _cpu_steps(3_000)
    assert summary["bottleneck"] == "unknown" and "GPU bottlenecks cannot be measured" in summary["verdict"]


def _rank(run, rank):
    (path,) = (REAL / "ddp_cpu" / run).glob(f"rank{rank}.*.pt.trace.json.gz")
    return analyze_host_file(str(path))["summary"]


def test_the_slow_gloo_rank_is_host_bound_and_its_waiting_peer_is_not():
    """ddp_cpu slow_compute (real, 4 gloo ranks): rank 2 computes 85.8% of its step (collectives 12.2%), its peers
    mostly wait in collectives (rank 0: 87%): rank 2 is host-bound; rank 0 gets no bottleneck, and is told to
    analyze the run directory."""
    slow = _rank("slow_compute", 2)
    assert slow["bottleneck"] == "host"
    assert slow["verdict"].startswith(
        "Host-bound: the step computes on the CPU 86% of its time (no GPU work in this profile"
    )
    assert "collectives take 12% (time that includes waiting for the other ranks)" in slow["verdict"]
    peer = _rank("slow_compute", 0)
    assert peer["bottleneck"] == "unknown" and "87% of its time in collectives" in peer["verdict"]
    assert "Ranks section" in peer["verdict"]
