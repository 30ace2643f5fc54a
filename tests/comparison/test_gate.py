import pytest

from tb_gpu_advisor.comparison.diff import compare_reports
from tb_gpu_advisor.comparison.gate import METRICS, GateError, check_comparison
from tb_gpu_advisor.testing.pairs import EXPECTED_DRIVER, PAIRS

from .reports import host_from_steps

STEADY = [100.0, 100.2, 99.8, 100.1, 99.9] * 4


def check(base, cand, metric="step_time", pct=5.0):
    return check_comparison(compare_reports(base, cand), metric, pct)


# GPU busy counts copies as busy, so the transfer-bound GPU is as busy as the pinned one: not a gpu_busy case.
@pytest.mark.parametrize(
    "pair,metric",
    [
        (pair, metric)
        for pair in sorted(PAIRS)
        for metric in ("step_time", "step_time_median", "gpu_busy")
        if (pair, metric) != ("transfer", "gpu_busy")
    ],
)
def test_the_fix_passes_and_the_reverse_fails(pair_reports, pair, metric):
    reports = pair_reports[pair]
    assert check(reports["problem"], reports["fixed"], metric).passed
    reverse = check(reports["fixed"], reports["problem"], metric)
    assert not reverse.passed and reverse.reason.startswith("regression: ")


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_the_category_that_made_the_difference_gates_too(pair_reports, pair):
    reports = pair_reports[pair]
    category = EXPECTED_DRIVER[pair]
    assert check(reports["problem"], reports["fixed"], category).passed
    assert not check(reports["fixed"], reports["problem"], category).passed


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_same_vs_same_passes_even_with_no_allowance(pair_reports, pair):
    reports = pair_reports[pair]
    assert check(reports["problem"], reports["problem_again"], "step_time", 0.0).passed


def test_reason_for_a_regression_is_one_line_with_numbers():
    result = check(host_from_steps(STEADY), host_from_steps([t * 1.2 for t in STEADY]))
    assert not result.passed
    assert result.reason.startswith("regression: mean step time 120.00 ms vs baseline 100.00 ms (+20.0%, 95% CI +")
    assert result.reason.endswith("beyond the allowed +5.0%") and "\n" not in result.reason


def test_a_regression_within_the_threshold_passes():
    result = check(host_from_steps(STEADY), host_from_steps([t * 1.03 for t in STEADY]))
    assert result.passed and result.reason.endswith("within the allowed +5.0%")
    assert not check(host_from_steps(STEADY), host_from_steps([t * 1.03 for t in STEADY]), pct=2.0).passed


def test_a_regression_beyond_the_threshold_but_within_noise_passes():
    noisy = [80.0, 120.0, 90.0, 110.0]
    result = check(host_from_steps(noisy), host_from_steps([t + 8 for t in noisy]))
    assert result.passed and result.reason.endswith("beyond the allowed +5.0% but within noise")


def test_single_steps_are_gated_on_the_threshold_alone():
    result = check(host_from_steps([100.0]), host_from_steps([110.0]))
    assert not result.passed and "noise unknown" in result.reason


def test_gpu_busy_is_in_points_and_a_fall_is_worse():
    base = host_from_steps(STEADY, busy=80.0)
    assert not check(base, host_from_steps(STEADY, busy=70.0), "gpu_busy").passed
    result = check(base, host_from_steps(STEADY, busy=77.0), "gpu_busy")
    assert result.passed and "(-3.0 points" in result.reason and "allowed -5.0 points" in result.reason
    assert check(base, host_from_steps(STEADY, busy=95.0), "gpu_busy", 0.0).passed


def test_a_category_is_measured_against_the_baseline_step():
    base = host_from_steps(STEADY, category="h2d", share=0.10)
    # h2d per step goes from 10 ms to 16 ms: +6% of the 100 ms baseline step.
    cand = host_from_steps(STEADY, category="h2d", share=0.16)
    result = check(base, cand, "h2d")
    assert (
        not result.passed
        and "Host→device copy per step 16.00 ms vs baseline 10.00 ms (+6.0% of the baseline step" in result.reason
    )
    assert check(base, cand, "h2d", 7.0).passed


def test_unavailable_metrics_are_errors():
    cpu = host_from_steps(STEADY)
    with pytest.raises(GateError, match="gpu_busy: a side has no GPU activity"):
        check(cpu, cpu, "gpu_busy")
    with pytest.raises(GateError, match="no step markers"):
        check(host_from_steps([]), cpu)
    with pytest.raises(GateError, match="unknown metric"):
        check(cpu, cpu, "speed")
    with pytest.raises(GateError, match="no host of the baseline matches"):
        check_comparison(compare_reports({"run": None, "hosts": [], "errors": []}, cpu), "step_time")


def test_every_metric_is_checkable_on_gpu_reports(pair_reports):
    reports = pair_reports["input"]
    comparison = compare_reports(reports["problem"], reports["problem_again"])
    for metric in METRICS:
        assert check_comparison(comparison, metric, 5.0).reason


@pytest.mark.parametrize("base, cand", [(STEADY, [0.0] * len(STEADY)), ([0.0] * len(STEADY), STEADY), ([0.0], [0.0])])
def test_steps_that_round_to_zero_ms_are_not_comparable_and_say_so(base, cand):
    comparison = compare_reports(host_from_steps(base), host_from_steps(cand))
    host = comparison["hosts"][0]
    assert host["change"] == "unknown" and host["speedup"] is None
    assert "last 0 ms as reported" in host["verdict"]
    assert any("steps last 0 ms as reported" in note for note in host["notes"])
    for metric in ("step_time", "step_time_median", "input_wait"):
        with pytest.raises(GateError, match="last 0 ms as reported"):
            check_comparison(comparison, metric)
