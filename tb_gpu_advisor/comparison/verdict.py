"""Decides whether a candidate is faster, slower or within noise, names the category behind it, and words it."""

from tb_gpu_advisor.report import units
from tb_gpu_advisor.vocabulary import ARROW, TIMES, in_sentence

# A step-time change smaller than this share of the baseline is within noise even when it is significant.
NOISE_FLOOR_PCT = 1.0


# What a side whose step times sum to 0 ms (each shorter than the report's precision) is said to do.
ZERO_STEPS = "last 0 ms as reported (shorter than the report's precision)"


def no_step_time_reason(step_time):
    """Why a host pair's step times (HostComparison `step_time_ms`) cannot be compared."""
    sides = (step_time.get("baseline") or {}, step_time.get("candidate") or {})
    if all(side.get("count") for side in sides):
        return f"a side's steps {ZERO_STEPS}"
    return "a side has no step markers"


def change_of(step_time):
    """ "faster", "slower", "within_noise", or "unknown" (a side without steps), from the mean step time.

    Faster or slower needs the 95% interval of the difference of means to exclude zero and the change to be
    at least NOISE_FLOOR_PCT; with a single step on a side (no interval) the point estimate decides.
    """
    mean = step_time["mean"]
    if mean is None or mean["delta_pct"] is None:
        return "unknown"
    has_interval = mean["ci_low"] is not None
    if abs(mean["delta_pct"]) < NOISE_FLOOR_PCT or (has_interval and not mean["significant"]):
        return "within_noise"
    return "faster" if mean["delta"] < 0 else "slower"


def driver_of(change, breakdown):
    """The breakdown category whose time per step fell most (faster) or rose most (slower), or None."""
    if change not in ("faster", "slower"):
        return None
    candidates = [row for row in breakdown if row["per_step_ms"] is not None]
    sign = -1 if change == "faster" else 1
    candidates = [row for row in candidates if sign * row["per_step_ms"]["delta"] > 0]
    if not candidates:
        return None
    row = max(candidates, key=lambda r: sign * r["per_step_ms"]["delta"])
    per_step = row["per_step_ms"]
    return {
        "category": row["category"],
        "label": row["label"],
        "direction": "fell" if change == "faster" else "rose",
        "baseline_ms": per_step["baseline"],
        "candidate_ms": per_step["candidate"],
        "delta_ms": per_step["delta"],
        "baseline_pct": row["baseline_pct"],
        "candidate_pct": row["candidate_pct"],
    }


def _signed_pct(value):
    return "-" if value is None else f"{value:+.1f}%"


def _interval(mean):
    if mean["ci_low_pct"] is None:
        return "noise unknown"
    return f"95% CI {_signed_pct(mean['ci_low_pct'])} to {_signed_pct(mean['ci_high_pct'])}"


def verdict_of(comparison):
    """One line: "2.17× faster (mean step 83.42 ms → 38.43 ms): input wait fell from 77.2 ms to 33.4 ms ...",
    led by the change per example when the work per step differs, and followed by what makes the profiles
    hard to compare (`comparability.warnings`)."""
    text = _step_verdict(comparison)
    per_example = comparison.get("per_example")
    if per_example:
        text = f"{_per_example_text(per_example)} Per step alone (not comparable): {text}"
    cautions = [
        w
        for w in (comparison.get("comparability") or {}).get("warnings") or []
        if not (per_example and w.startswith("different work per step"))
    ]
    if cautions:
        text += " Caution: " + "; ".join(cautions) + "."
    return text


def _per_example_text(per_example):
    diff = per_example["time_ms"]
    examples = per_example.get("examples_per_step")
    if examples:
        scope = "" if examples["scope"] == "global" else " per device"
        facts = (
            f"examples per step{scope} {examples['baseline']} {ARROW} {examples['candidate']}, from the input "
            f"tensors; time for {examples['baseline']} examples {units.duration_ms(diff['baseline'])} {ARROW} "
            f"{units.duration_ms(diff['candidate'])}"
        )
    else:
        facts = (
            f"the candidate does {per_example['work_ratio']:.2f}{TIMES} the work per step; a baseline step's "
            f"work {units.duration_ms(diff['baseline'])} {ARROW} {units.duration_ms(diff['candidate'])}"
        )
    if per_example["change"] == "within_noise":
        return f"Per example within noise ({facts}, {_interval(diff)})."
    if per_example["change"] == "unknown" or not per_example["speedup"]:
        return f"Per example: {facts}."
    return f"Per example {units.speed_change(per_example['speedup'])} ({facts}, {_interval(diff)})."


def _step_verdict(comparison):
    change = comparison["change"]
    mean = comparison["step_time_ms"]["mean"]
    busy = comparison["gpu_busy_pct"]
    compute = busy.get("compute")
    shown = compute if compute and compute["copies_shown_apart"] else busy
    label = "GPU compute busy" if shown is compute else "GPU busy"
    busy_text = (
        f"{label} {units.percent(shown['baseline'])} {ARROW} {units.percent(shown['candidate'])}"
        if busy["delta_points"] is not None
        else ""
    )
    if change == "unknown":
        text = f"Step time cannot be compared: {no_step_time_reason(comparison['step_time_ms'])}"
        return f"{text}; {busy_text}." if busy_text else f"{text}."
    steps = f"mean step {units.duration_ms(mean['baseline'])} {ARROW} {units.duration_ms(mean['candidate'])}"
    if change == "within_noise":
        return f"Within noise: {steps} ({_signed_pct(mean['delta_pct'])}, {_interval(mean)})."
    ratio = mean["baseline"] / mean["candidate"] if change == "faster" else mean["candidate"] / mean["baseline"]
    head = f"{ratio:.2f}{TIMES} {change} ({steps}, {_interval(mean)})"
    driver = comparison["driver"]
    if driver is None:
        return f"{head}; no single time category explains it" + (f"; {busy_text}." if busy_text else ".")
    shares = ""
    if driver["baseline_pct"] is not None and driver["candidate_pct"] is not None:
        shares = (
            f" ({units.percent(driver['baseline_pct'])} {ARROW} {units.percent(driver['candidate_pct'])} of the time)"
        )
    text = (
        f"{head}: {_driver_label(driver, busy)} {driver['direction']} from "
        f"{units.duration_ms(driver['baseline_ms'])} "
        f"to {units.duration_ms(driver['candidate_ms'])} per step{shares}."
    )
    prep = driver.get("untraced_batch_prep_ms")
    if prep:
        # The breakdown does not relabel an untraced stall as input; the finding that read it so is named instead.
        text += (
            f" The baseline's input.host_batch_prep read {units.duration_ms(prep)} of each step's untraced "
            "start as batch preparation (how sure: low), and the candidate no longer shows it."
        )
    return text


# Without a GPU on either side, "idle" is host time no traced event covers (the Python between traced ops), not
# a device waiting.
UNTRACED_HOST_LABEL = "untraced host time (Python between ops)"


def _driver_label(driver, busy):
    if driver["category"] == "idle" and busy["baseline"] is None and busy["candidate"] is None:
        return UNTRACED_HOST_LABEL
    return in_sentence(driver["label"])
