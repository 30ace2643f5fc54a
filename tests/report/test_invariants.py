"""report.invariants names each non-finite number and each share outside 0-100."""

from tb_gpu_advisor.report.invariants import report_problems


def test_shares_and_non_finite_numbers_are_named():
    report = {
        "summary": {"gpu_busy_pct": 101.0, "breakdown_pct": {"idle": -1, "launch": 5.0}},
        "kernels": [{"occupancy_pct": 50.0, "total_us": float("nan")}],
        "step_num": -3,
    }
    assert report_problems(report) == [
        "report.summary.gpu_busy_pct = 101.0 is a share outside 0-100",
        "report.summary.breakdown_pct.idle = -1 is a share outside 0-100",
        "report.kernels[0].total_us = nan is not finite",
    ]


def test_signed_changes_of_a_comparison_are_only_checked_for_finiteness():
    comparison = {"step_time": {"change_pct": -55.8, "ci_low_pct": -250.0}}
    assert report_problems(comparison, shares=False) == []
    assert report_problems(comparison)
