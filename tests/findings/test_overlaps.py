"""Findings that recover the same time say so (`overlaps_with`), in the JSON, text and HTML reports."""

from tb_gpu_advisor.findings.overlaps import POOLS
from tb_gpu_advisor.findings.catalog import CATALOG
from tb_gpu_advisor.report.html import render_html
from tb_gpu_advisor.report.text import render_text
from tests.findings.scenarios import findings_by_id, report_of
from tests.findings.rules.test_input import waiting_loop


def _sequential_map_report():
    return report_of(waiting_loop(stages=[("Iterator::Root::Map", 0, 5_000)]))


def test_input_wait_and_the_sequential_map_share_their_recoverable_time():
    report = _sequential_map_report()
    found = findings_by_id(report)
    wait, sequential = found["input.gpu_waits_for_input"], found["input.sequential_map"]
    assert wait["estimated_speedup"] == sequential["estimated_speedup"] == 2.5  # the same 6 ms per step
    assert (
        "input.sequential_map" in wait["overlaps_with"] and "input.gpu_waits_for_input" in sequential["overlaps_with"]
    )
    kernel_ids = {f["id"] for f in report["findings"] if f["category"] in ("precision", "fusion", "occupancy")}
    assert not kernel_ids & set(wait["overlaps_with"])


def test_the_reports_say_which_findings_share_time():
    report = _sequential_map_report()
    run = {"schema_version": 1, "run": None, "hosts": [report], "errors": []}
    text = render_text(run).replace("\n  ", " ")
    ids = [f["id"] for f in report["findings"]]
    first, second = ids.index("input.gpu_waits_for_input") + 1, ids.index("input.sequential_map") + 1
    assert f"shares time with #{second}" in text or f"shares time with #{first}" in text
    assert "Shares recoverable time with #" in render_html(run)


def test_every_finding_with_recoverable_time_has_a_pool():
    zero = {
        "steps.warmup_in_profile",
        "environment.no_tensor_cores",
        "environment.cuda_older_than_gpu",
        "environment.driver_older_than_runtime",
    }
    assert set(POOLS) | zero == set(CATALOG)
