"""The CI regression gate: is the candidate worse than the baseline beyond a threshold and beyond the noise?"""

from dataclasses import dataclass

from tb_gpu_advisor.analysis.breakdown import BREAKDOWN_CATEGORIES
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


def _measure(host, metric):
    if metric in ("step_time", "step_time_median"):
        key = "mean" if metric == "step_time" else "median"
        diff = host["step_time_ms"][key]
        if diff is None or not diff["baseline"]:
            raise GateError(f"{metric}: a side has no step markers, so step time cannot be checked")
        return _Measure(f"{key} step time", units.duration_ms(diff["baseline"]), units.duration_ms(diff["candidate"]),
                        diff["delta_pct"], diff["ci_low_pct"], diff["ci_high_pct"], "%", 1)
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
        return _Measure("GPU busy", units.percent(busy["baseline"]), units.percent(busy["candidate"]), change,
                        None if half is None else change - half, None if half is None else change + half,
                        " points", -1)
    row = next(r for r in host["breakdown"] if r["category"] == metric)
    step_ms = host["step_time_ms"]["mean"]["baseline"] if host["step_time_ms"]["mean"] else None
    if row["per_step_ms"] is None or not step_ms:
        raise GateError(f"{metric}: a side has no step markers, so time per step cannot be checked")
    per_step = row["per_step_ms"]
    return _Measure(f"{BREAKDOWN_LABELS[metric]} per step", units.duration_ms(per_step["baseline"]),
                    units.duration_ms(per_step["candidate"]), *_scaled(per_step, 100.0 / step_ms),
                    "% of the baseline step", 1)


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
