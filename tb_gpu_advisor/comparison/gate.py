"""The CI regression gate: is the candidate worse than the baseline beyond a threshold and beyond the noise?"""

from dataclasses import dataclass

from tb_gpu_advisor.analysis.breakdown import BREAKDOWN_CATEGORIES
from tb_gpu_advisor.comparison.stats import t_quantile
from tb_gpu_advisor.comparison.verdict import no_step_time_reason
from tb_gpu_advisor.report import units
from tb_gpu_advisor.vocabulary import BREAKDOWN_LABELS

METRICS = ("step_time", "step_time_median", "gpu_busy") + BREAKDOWN_CATEGORIES
DEFAULT_MAX_REGRESSION_PCT = 5.0


class GateError(ValueError):
    """The metric cannot be checked on these reports (e.g. no steps, no GPU)."""


@dataclass(frozen=True)
class GateResult:
    passed: bool
    reason: str  # one line


@dataclass(frozen=True)
class _Measure:
    """The candidate's change of one metric (candidate - baseline, in `unit`) with its 95% interval."""

    name: str
    baseline: str
    candidate: str
    change: float
    low: float | None
    high: float | None
    unit: str
    worse_sign: int  # +1: a rise is worse (times); -1: a fall is worse (GPU busy)


def _scaled(diff, scale):
    low = None if diff["ci_low"] is None else diff["ci_low"] * scale
    high = None if diff["ci_high"] is None else diff["ci_high"] * scale
    return diff["delta"] * scale, low, high


def _step_difference(host, metric):
    """(name, Difference) of the step time metric; the mean per example when the work per step differs (the
    candidate's steps divided by the work ratio, HostComparison `per_example`)."""
    if metric == "step_time" and host.get("per_example"):
        per_example = host["per_example"]
        return (
            f"mean time per example (the candidate does {per_example['work_ratio']:.2f}x the work per step; "
            "per a baseline step's work)",
            per_example["time_ms"],
        )
    key = "mean" if metric == "step_time" else "median"
    return f"{key} step time", host["step_time_ms"][key]


def _measure(host, metric):
    if metric in ("step_time", "step_time_median"):
        name, diff = _step_difference(host, metric)
        if diff is None or not diff["baseline"]:
            raise GateError(f"{metric}: {no_step_time_reason(host['step_time_ms'])}, so step time cannot be checked")
        return _Measure(
            name,
            units.duration_ms(diff["baseline"]),
            units.duration_ms(diff["candidate"]),
            diff["delta_pct"],
            diff["ci_low_pct"],
            diff["ci_high_pct"],
            "%",
            1,
        )
    if metric == "gpu_busy":
        busy = host["gpu_busy_pct"]
        if busy["delta_points"] is None:
            raise GateError("gpu_busy: a side has no GPU activity, so GPU busy cannot be checked")
        # The interval of the per-step busy difference, centred on the change of the overall busy %.
        per_step = busy["per_step"]
        half = None
        if per_step and per_step["ci_low"] is not None:
            half = (per_step["ci_high"] - per_step["ci_low"]) / 2
        change = busy["delta_points"]
        return _Measure(
            "GPU busy",
            units.percent(busy["baseline"]),
            units.percent(busy["candidate"]),
            change,
            None if half is None else change - half,
            None if half is None else change + half,
            " points",
            -1,
        )
    row = next(r for r in host["breakdown"] if r["category"] == metric)
    step_ms = host["step_time_ms"]["mean"]["baseline"] if host["step_time_ms"]["mean"] else None
    if row["per_step_ms"] is None or not step_ms:
        raise GateError(f"{metric}: {no_step_time_reason(host['step_time_ms'])}, so time per step cannot be checked")
    per_step = row["per_step_ms"]
    return _Measure(
        f"{BREAKDOWN_LABELS[metric]} per step",
        units.duration_ms(per_step["baseline"]),
        units.duration_ms(per_step["candidate"]),
        *_scaled(per_step, 100.0 / step_ms),
        "% of the baseline step",
        1,
    )


def check_host(host_comparison, metric, max_regression_pct=DEFAULT_MAX_REGRESSION_PCT):
    """GateResult for one host pair: fails only when worse by more than the threshold and beyond noise.

    Beyond noise means the 95% interval of the change lies entirely on the worse side of zero; without an
    interval (a single step) the threshold alone decides.
    """
    if metric not in METRICS:
        raise GateError(f"unknown metric {metric!r}; metrics: {', '.join(METRICS)}")
    m = _measure(host_comparison, metric)
    interval = "noise unknown" if m.low is None else f"95% CI {m.low:+.1f} to {m.high:+.1f}"
    facts = f"{m.name} {m.candidate} vs baseline {m.baseline} ({m.change:+.1f}{m.unit}, {interval})"
    allowed = f"allowed {m.worse_sign * max_regression_pct:+.1f}{m.unit}"
    if m.worse_sign * m.change <= max_regression_pct:
        return GateResult(True, f"ok: {facts}, within the {allowed}")
    if m.low is not None and min(m.worse_sign * m.low, m.worse_sign * m.high) <= 0:
        return GateResult(True, f"ok: {facts}, beyond the {allowed} but within noise")
    return GateResult(False, f"regression: {facts}, beyond the {allowed}")


def check_comparison(comparison, metric, max_regression_pct=DEFAULT_MAX_REGRESSION_PCT):
    """GateResult over every matched host: the first failing host, else the first host's result."""
    hosts = comparison["hosts"]
    if not hosts:
        raise GateError("no host of the baseline matches a host of the candidate")
    results = [(h, check_host(h, metric, max_regression_pct)) for h in hosts]
    failed = [(h, r) for h, r in results if not r.passed]
    host, result = failed[0] if failed else results[0]
    if len(hosts) > 1:
        return GateResult(result.passed, f"{host['baseline_host']}: {result.reason}")
    return result


@dataclass(frozen=True)
class _Raw:
    """One metric of one baseline/candidate pair in its own unit, with the half-width of the change's interval."""

    baseline: float
    candidate: float
    half_width: float | None
    step_ms: float | None  # the baseline's mean step time (breakdown metrics are % of it)


def _half(diff):
    if diff is None or diff["ci_low"] is None:
        return None
    return (diff["ci_high"] - diff["ci_low"]) / 2


def _raw(host, metric):
    _measure(host, metric)  # raises GateError where the metric cannot be checked
    if metric in ("step_time", "step_time_median"):
        diff = _step_difference(host, metric)[1]
        return _Raw(diff["baseline"], diff["candidate"], _half(diff), None)
    if metric == "gpu_busy":
        busy = host["gpu_busy_pct"]
        return _Raw(busy["baseline"], busy["candidate"], _half(busy["per_step"]), None)
    per_step = next(r for r in host["breakdown"] if r["category"] == metric)["per_step_ms"]
    return _Raw(per_step["baseline"], per_step["candidate"], _half(per_step), host["step_time_ms"]["mean"]["baseline"])


def _run_to_run_half_width(values, confidence=0.95):
    """Half-width of the prediction interval of one more run's value from these runs' values (Student's t)."""
    count = len(values)
    mean = sum(values) / count
    stdev = (sum((v - mean) ** 2 for v in values) / (count - 1)) ** 0.5
    return t_quantile(0.5 + confidence / 2, count - 1) * stdev * (1 + 1 / count) ** 0.5


def check_hosts_against_runs(hosts, metric, max_regression_pct=DEFAULT_MAX_REGRESSION_PCT):
    """GateResult of one candidate host against the same host in several baseline runs (HostComparisons, one
    per baseline run).

    The baseline is the mean of the runs' values; the change's interval is the wider of the step-to-step one
    (the mean of the runs' intervals) and the run-to-run one (the prediction interval of another run's value
    from the baseline runs' spread), so a candidate within the spread of the baselines is within noise.
    """
    if metric not in METRICS:
        raise GateError(f"unknown metric {metric!r}; metrics: {', '.join(METRICS)}")
    if len(hosts) == 1:
        return check_host(hosts[0], metric, max_regression_pct)
    raws = [_raw(host, metric) for host in hosts]
    base = sum(r.baseline for r in raws) / len(raws)
    cand = raws[0].candidate
    if metric == "gpu_busy":
        scale, unit, worse, fmt = 1.0, " points", -1, units.percent
        name = "GPU busy"
    elif metric in ("step_time", "step_time_median"):
        if not base:
            raise GateError(f"{metric}: the baselines have no step time")
        scale, unit, worse, fmt = 100.0 / base, "%", 1, units.duration_ms
        name = f"{'mean' if metric == 'step_time' else 'median'} step time"
    else:
        step_ms = sum(r.step_ms for r in raws) / len(raws)
        scale, unit, worse, fmt = 100.0 / step_ms, "% of the baseline step", 1, units.duration_ms
        name = f"{BREAKDOWN_LABELS[metric]} per step"
    change = (cand - base) * scale
    within = [r.half_width for r in raws if r.half_width is not None]
    step_half = sum(within) / len(within) * scale if within else 0.0
    run_half = _run_to_run_half_width([r.baseline for r in raws]) * scale
    half = max(step_half, run_half)
    m = _Measure(name, fmt(base), fmt(cand), change, change - half, change + half, unit, worse)
    spread = (
        f"{len(raws)} baseline runs, 95% CI {m.low:+.1f} to {m.high:+.1f}: the wider of step-to-step "
        f"{step_half:.1f} and run-to-run {run_half:.1f}"
    )
    facts = f"{m.name} {m.candidate} vs baseline mean {m.baseline} ({m.change:+.1f}{m.unit}, {spread})"
    allowed = f"allowed {m.worse_sign * max_regression_pct:+.1f}{m.unit}"
    if m.worse_sign * m.change <= max_regression_pct:
        return GateResult(True, f"ok: {facts}, within the {allowed}")
    if min(m.worse_sign * m.low, m.worse_sign * m.high) <= 0:
        return GateResult(True, f"ok: {facts}, beyond the {allowed} but within noise")
    return GateResult(False, f"regression: {facts}, beyond the {allowed}")


def check_comparisons(comparisons, metric, max_regression_pct=DEFAULT_MAX_REGRESSION_PCT):
    """GateResult of a candidate against one or several baseline runs (one Comparison per baseline, the same
    candidate): per host of the first comparison, that host in every comparison that matched it; the first
    failing host, else the first host's result."""
    if len(comparisons) == 1:
        return check_comparison(comparisons[0], metric, max_regression_pct)
    first = comparisons[0]["hosts"]
    if not first:
        raise GateError("no host of the baseline matches a host of the candidate")
    results = []
    for host in first:
        same = [h for c in comparisons for h in c["hosts"] if h["candidate_host"] == host["candidate_host"]]
        results.append((host, check_hosts_against_runs(same, metric, max_regression_pct)))
    failed = [(h, r) for h, r in results if not r.passed]
    host, result = failed[0] if failed else results[0]
    if len(first) > 1:
        return GateResult(result.passed, f"{host['candidate_host']}: {result.reason}")
    return result
