"""Every scenario of the library gets its expected verdict and top finding; fixes and the healthy run no high."""

import pytest

from tb_gpu_advisor.scenarios import SCENARIOS
from tests.conftest import report_of

_REPORTS = {}


def _report(name):
    if name not in _REPORTS:
        _REPORTS[name] = report_of(SCENARIOS[name].build(), f"{name}.xplane.pb")
    return _REPORTS[name]


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_verdict_and_top_finding(name):
    scenario = SCENARIOS[name]
    report = _report(name)
    findings = report["findings"]
    assert report["summary"]["bottleneck"] == scenario.expected_bottleneck
    if scenario.expected_top_finding is None:
        assert [f["id"] for f in findings if f["severity"] == "high"] == []
        return
    top = findings[0]
    assert (top["category"], top["severity"]) == (scenario.expected_top_finding, "high")
    window_ms = report["summary"]["analysis_window_ms"]
    # the speedup is the step-time ratio with the recoverable time removed
    assert 0 < top["recoverable_ms"] < window_ms
    assert top["estimated_speedup"] == pytest.approx(window_ms / (window_ms - top["recoverable_ms"]), abs=0.006)
    assert top["fix"] and top["docs"] and top["evidence"]["threshold"]


@pytest.mark.parametrize(
    "problem",
    [name for name, s in SCENARIOS.items() if s.fixed_variant_of is None and s.expected_top_finding is not None],
)
def test_the_fix_resolves_the_top_finding_or_lowers_it(problem):
    fixed = next(name for name, s in SCENARIOS.items() if s.fixed_variant_of == problem)
    before = _report(problem)["findings"][0]
    after = {f["id"]: f for f in _report(fixed)["findings"]}
    if before["id"] in after:
        assert after[before["id"]]["recoverable_ms"] < before["recoverable_ms"]
        assert after[before["id"]]["estimated_speedup"] < before["estimated_speedup"]


def test_evidence_quotes_the_reports_own_numbers():
    report = _report("input_bound")
    metrics = report["findings"][0]["evidence"]["metrics"]
    assert metrics["input_wait_pct"] == report["summary"]["input_wait_pct"] == 71.28
    assert metrics["step_time_ms_mean"] == pytest.approx(report["summary"]["step_time_ms"]["mean"], abs=0.01)
    transfer = _report("transfer_bound")
    pageable = transfer["findings"][0]["evidence"]["metrics"]
    assert pageable["pageable_copies"] == transfer["transfers"]["h2d"]["pageable_count"]
    multi = _report("multi_gpu_straggler")
    ids = [f["id"] for f in multi["findings"]]
    # Overlap can hide the all-reduce only behind the compute every GPU does (the straggler's excess is the
    # imbalance finding's): 2/3 of ~30 ms per step of 54 ms, so what overlap cannot hide leads.
    assert ids[:2] == ["collectives.comm_bound", "communication.allreduce_exposed"]
    imbalance = next(f for f in multi["findings"] if f["id"] == "communication.gpu_imbalance")
    assert imbalance["severity"] in ("medium", "high")
    per_gpu = {entry["device"]: entry["compute_pct"] for entry in imbalance["evidence"]["metrics"]["per_gpu"]}
    assert max(per_gpu, key=per_gpu.get) == "/device:GPU:2"  # the power-capped straggler
    assert "/device:GPU:2" in imbalance["evidence"]["pointers"]["devices"]
    assert imbalance["evidence"]["pointers"]["straggler"] == "/device:GPU:2"
    assert imbalance["summary"].startswith("/device:GPU:2 is the straggler")
    assert "/device:GPU:2 is a straggler (hardware cause)" in multi["summary"]["verdict"]
