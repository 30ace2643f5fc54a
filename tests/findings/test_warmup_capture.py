"""Warm-up captures: findings whose fix is to recapture promise no speedup; no batch advice on mostly warm-up."""

from tb_gpu_advisor.findings.engine import without_recapture_speedup
from tb_gpu_advisor.findings.finding import Evidence, Finding
from tb_gpu_advisor.readers.kineto.build import load_kineto_model
from tb_gpu_advisor.pipeline import host_report
from tests.findings.scenarios import findings_by_id
from tests.readers.kineto.real import real_kineto


def report(name):
    return host_report(load_kineto_model(real_kineto(name)))


def test_recapture_findings_of_a_mostly_warm_up_trace_claim_no_speedup():
    """a100_alexnet_sync: 95% of the activity is first-use setup; host and launch findings say to recapture after
    warm-up, so neither carries an "up to" (it was 4.14x and 1.31x of setup time) nor counts in a combined one."""
    result = report("a100_alexnet_sync")
    found = findings_by_id(result)
    for finding_id in ("host.gpu_idle_host_busy", "launch.gpu_starved_by_launches"):
        finding = found[finding_id]
        assert finding["fix_summary"].startswith("Recapture after warm-up")
        assert finding["estimated_speedup"] == 1.0 and finding["recoverable_ms"] == 0.0
        assert finding["speedup_basis"].startswith("none: the fix is to recapture after warm-up")
    # The as-captured verdict names the setup, not a host-bound program: most of the host's time is setup.
    assert "As captured: first-use setup" in result["summary"]["verdict"]
    assert result["summary"]["bottleneck"] == "unknown" and "host-bound" not in result["summary"]["verdict"]


def test_the_as_captured_label_of_a_step_made_of_one_module_load_is_setup():
    """mi250_minitoy_train: 6.54 of the 6.64 ms of launch time in its only complete step is one first
    hipLaunchKernel (code-object load): "launch-bound" would name setup as the program's cause."""
    summary = report("mi250_minitoy_train")["summary"]
    assert "As captured: first-use setup" in summary["verdict"] and "launch-bound" not in summary["verdict"]
    assert summary["bottleneck"] == "unknown" and summary["bottleneck_reason"] == "first-use setup in the capture"


def test_no_batch_size_advice_on_a_one_step_warm_up_capture():
    """mi250_minitoy_train: 1 complete step with warm-up inside it: its idle time is setup, so "raise the batch
    size" is withheld; the launch and host findings say to recapture, without a speedup."""
    result = report("mi250_minitoy_train")
    found = findings_by_id(result)
    assert "batch.gpu_underused" not in found
    assert found["launch.gpu_starved_by_launches"]["estimated_speedup"] == 1.0
    assert result["summary"]["verdict"].startswith(
        "Not enough trace for a verdict (1 complete step; warm-up in the steps;"
    )


def test_a_finding_not_about_warm_up_keeps_its_speedup():
    finding = Finding(
        id="host.gpu_idle_host_busy",
        severity="medium",
        summary="s",
        evidence=Evidence({}, {}),
        recoverable_ms=5.0,
        window_ms=10.0,
        speedup_basis="upper bound",
    )
    assert without_recapture_speedup(finding) is finding
