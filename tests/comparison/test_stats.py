import numpy as np
import pytest

from tb_gpu_advisor.comparison.stats import (
    mean_difference,
    ratio_of_means_difference,
    ratio_of_medians_difference,
    t_quantile,
)

# Student's t 97.5% quantiles from any statistics table.
T_975 = {1: 12.706, 2: 4.303, 3: 3.182, 5: 2.571, 8: 2.306, 10: 2.228, 30: 2.042, 120: 1.980}


@pytest.mark.parametrize("df,expected", sorted(T_975.items()))
def test_t_quantile_matches_the_table(df, expected):
    assert t_quantile(0.975, df) == pytest.approx(expected, abs=1e-3)


def test_t_quantile_is_the_normal_one_for_huge_df():
    assert t_quantile(0.975, 1e6) == pytest.approx(1.95996, abs=1e-4)


def test_welch_interval_by_hand():
    # Equal variances 2.5, n = 5: standard error 1, Welch df 8, half width t(0.975, 8) = 2.306.
    diff = mean_difference([1, 2, 3, 4, 5], [2, 3, 4, 5, 6])
    assert diff.delta == pytest.approx(1.0)
    assert diff.low == pytest.approx(1 - 2.306, abs=1e-3)
    assert diff.high == pytest.approx(1 + 2.306, abs=1e-3)
    assert not diff.significant


def test_welch_with_unequal_variances_uses_the_satterthwaite_df():
    a, b = [10.0, 10.5, 9.5, 10.2], [5.0, 7.0, 3.0, 6.0, 4.0, 5.0]
    diff = mean_difference(a, b)
    va, vb = np.var(a, ddof=1) / 4, np.var(b, ddof=1) / 6
    df = (va + vb) ** 2 / (va**2 / 3 + vb**2 / 5)
    half = t_quantile(0.975, df) * (va + vb) ** 0.5
    assert (diff.low, diff.high) == pytest.approx((diff.delta - half, diff.delta + half))
    assert diff.significant and diff.high < 0


def test_constant_samples_have_a_zero_width_interval():
    assert mean_difference([5, 5, 5], [4, 4, 4]).significant
    same = mean_difference([5, 5, 5], [5, 5, 5])
    assert (same.low, same.high) == (0.0, 0.0) and not same.significant


def test_a_single_step_has_no_interval():
    diff = mean_difference([5.0], [4.0, 4.1])
    assert diff.delta == pytest.approx(-0.95) and not diff.has_interval and not diff.significant
    assert not ratio_of_medians_difference([5.0, 5.1], [4.0]).has_interval


def test_median_bootstrap_is_deterministic_and_covers_a_shift():
    rng = np.random.default_rng(42)
    a = rng.normal(100, 5, 30)
    first, second = ratio_of_medians_difference(a, a + 10), ratio_of_medians_difference(a, a + 10)
    assert first == second
    assert first.delta == pytest.approx(10.0)
    assert first.low <= 10.0 <= first.high and first.significant
    same = ratio_of_medians_difference(a, a)
    assert same.low < 0 < same.high and not same.significant


@pytest.mark.parametrize("difference", [ratio_of_means_difference, ratio_of_medians_difference])
def test_a_large_speedup_with_noisy_steps_never_falls_below_minus_100_percent(difference):
    """A 36x speedup from steps that vary by +-40% (the eager -> tf.function pair): the interval comes from
    the ratio, so as a share of the baseline it stays above -100% and covers the point estimate."""
    rng = np.random.default_rng(7)
    baseline = rng.uniform(20.0, 80.0, 20)
    baseline[:2] = [5.0, 150.0]
    candidate = rng.uniform(0.5, 1.8, 20)
    diff = difference(baseline, candidate)
    assert -diff.baseline < diff.low <= diff.delta <= diff.high < 0
    assert diff.significant
    welch = mean_difference(baseline, candidate)
    assert welch.low < -welch.baseline, "the old interval went below -100% on this data"


def test_the_ratio_interval_keeps_welch_width_for_a_small_change():
    """For a change small against the noise the log-ratio interval is close to Welch's on the difference."""
    rng = np.random.default_rng(3)
    a, b = rng.normal(100, 4, 6), rng.normal(97, 4, 6)
    ratio, welch = ratio_of_means_difference(a, b), mean_difference(a, b)
    assert ratio.high - ratio.low == pytest.approx(welch.high - welch.low, rel=0.1)
    assert ratio.significant == welch.significant
