"""Confidence intervals for the difference between two sets of per-step samples (deterministic)."""

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

CONFIDENCE = 0.95
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 0
_BOOTSTRAP_CHUNK_VALUES = 2_000_000  # resample matrices are built in chunks of about this many values
_LARGE_DF = 1e4  # above this many degrees of freedom Student's t is the normal distribution


@dataclass(frozen=True)
class Difference:
    """candidate - baseline of a statistic, with its confidence interval (None when it cannot be estimated)."""

    baseline: float
    candidate: float
    delta: float
    low: float | None
    high: float | None
    method: str

    @property
    def has_interval(self):
        return self.low is not None and self.high is not None

    @property
    def significant(self):
        """True when the interval excludes zero: the difference is beyond the step-to-step noise."""
        return self.has_interval and (self.low > 0 or self.high < 0)


def _t_pdf(x, df):
    log_norm = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    return np.exp(log_norm - (df + 1) / 2 * np.log1p(x * x / df))


def _t_cdf_above_zero(x, df, intervals=4000):
    """P(0 <= T <= x) by Simpson's rule on the density (smooth, so 4000 intervals give ~1e-10)."""
    grid = np.linspace(0.0, x, intervals + 1)
    weights = np.ones(intervals + 1)
    weights[1:-1:2] = 4
    weights[2:-1:2] = 2
    return float((x / intervals) / 3 * np.dot(weights, _t_pdf(grid, df)))


def t_quantile(probability, df):
    """The `probability` quantile (> 0.5) of Student's t with `df` (possibly fractional) degrees of freedom."""
    if df >= _LARGE_DF:
        return NormalDist().inv_cdf(probability)
    target = probability - 0.5
    low, high = 0.0, 1.0
    while _t_cdf_above_zero(high, df) < target:
        high *= 2
    for _ in range(60):
        middle = (low + high) / 2
        if _t_cdf_above_zero(middle, df) < target:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def mean_difference(baseline, candidate, confidence=CONFIDENCE):
    """Difference of means with Welch's t interval (unequal variances); no interval below 2 samples a side."""
    a = np.asarray(baseline, dtype=np.float64)
    b = np.asarray(candidate, dtype=np.float64)
    delta = float(b.mean() - a.mean())
    method = f"Welch's t, {confidence:.0%} interval"
    if len(a) < 2 or len(b) < 2:
        return Difference(float(a.mean()), float(b.mean()), delta, None, None, method)
    var_a, var_b = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    standard_error = math.sqrt(var_a + var_b)
    if standard_error == 0:
        return Difference(float(a.mean()), float(b.mean()), delta, delta, delta, method)
    df = (var_a + var_b) ** 2 / (var_a**2 / (len(a) - 1) + var_b**2 / (len(b) - 1))
    half_width = t_quantile(0.5 + confidence / 2, df) * standard_error
    return Difference(float(a.mean()), float(b.mean()), delta, delta - half_width, delta + half_width, method)


def _bootstrap_ratios(a, b, statistic, resamples, seed):
    """statistic(baseline resample) / statistic(candidate resample) for `resamples` resamples of both sides."""
    rng = np.random.default_rng(seed)
    return np.concatenate(
        [
            statistic(a[rng.integers(0, len(a), (count, len(a)))], axis=1)
            / np.maximum(statistic(b[rng.integers(0, len(b), (count, len(b)))], axis=1), np.finfo(np.float64).tiny)
            for count in _chunks(resamples, max(1, _BOOTSTRAP_CHUNK_VALUES // (len(a) + len(b))))
        ]
    )


def ratio_of_means_difference(baseline, candidate, confidence=CONFIDENCE):
    """Difference of means whose interval is Welch's t interval of log(mean candidate / mean baseline) (delta
    method, Welch-Satterthwaite degrees of freedom), mapped back: as a share of the baseline it never falls
    below -100%, and small samples keep Student's t width; no interval below 2 samples a side or when a
    side's mean is not above 0."""
    a = np.asarray(baseline, dtype=np.float64)
    b = np.asarray(candidate, dtype=np.float64)
    base, cand = float(a.mean()), float(b.mean())
    method = f"Welch's t on the log ratio of means, {confidence:.0%} interval"
    if len(a) < 2 or len(b) < 2 or base <= 0 or cand <= 0:
        return Difference(base, cand, cand - base, None, None, method)
    var_a = a.var(ddof=1) / len(a) / base**2
    var_b = b.var(ddof=1) / len(b) / cand**2
    log_ratio = math.log(cand / base)
    if var_a + var_b == 0:
        return Difference(base, cand, cand - base, cand - base, cand - base, method)
    df = (var_a + var_b) ** 2 / (var_a**2 / (len(a) - 1) + var_b**2 / (len(b) - 1))
    half_width = t_quantile(0.5 + confidence / 2, df) * math.sqrt(var_a + var_b)
    low, high = (base * (math.exp(log_ratio + sign * half_width) - 1) for sign in (-1, 1))
    return Difference(base, cand, cand - base, low, high, method)


def ratio_of_medians_difference(
    baseline, candidate, confidence=CONFIDENCE, resamples=BOOTSTRAP_RESAMPLES, seed=BOOTSTRAP_SEED
):
    """Difference of medians whose interval is a percentile bootstrap of median(candidate) / median(baseline)
    (fixed seed: deterministic), so that as a share of the baseline it never falls below -100%; no interval
    below 2 samples a side or when a side's median is not above 0."""
    a = np.asarray(baseline, dtype=np.float64)
    b = np.asarray(candidate, dtype=np.float64)
    base, cand = float(np.median(a)), float(np.median(b))
    method = f"bootstrap of the ratio of medians, {resamples} resamples, seed {seed}, {confidence:.0%} interval"
    if len(a) < 2 or len(b) < 2 or base <= 0 or cand <= 0:
        return Difference(base, cand, cand - base, None, None, method)
    inverse = _bootstrap_ratios(a, b, np.median, resamples, seed)  # baseline / candidate
    tail = (1 - confidence) / 2 * 100
    high_inverse, low_inverse = np.maximum(np.percentile(inverse, [tail, 100 - tail]), np.finfo(np.float64).tiny)
    return Difference(
        base, cand, cand - base, float(base * (1 / low_inverse - 1)), float(base * (1 / high_inverse - 1)), method
    )


def _chunks(total, size):
    while total > 0:
        yield min(total, size)
        total -= size


@dataclass(frozen=True)
class Ratio:
    """mean(baseline) / mean(candidate) (> 1: the candidate is faster) with its confidence interval."""

    value: float
    low: float | None
    high: float | None
    method: str


def speedup_of(difference):
    """baseline / candidate of a Difference of means as a Ratio (> 1: the candidate is faster), its interval the
    Difference's own mapped to a ratio, so a change and its speedup carry one interval; None when the candidate's
    mean is not above 0."""
    base, cand = difference.baseline, difference.candidate
    if not cand > 0:
        return None
    if not difference.has_interval:
        return Ratio(base / cand, None, None, difference.method)
    return Ratio(base / cand, base / (base + difference.high), base / (base + difference.low), difference.method)
