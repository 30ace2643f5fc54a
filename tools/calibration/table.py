"""Runs every calibration pair through analysis and compare, and renders the table of docs/calibration.md."""

import glob
import os
from dataclasses import dataclass, replace

from tools.calibration.pairs import (
    BOUND_HOLDS,
    BOUND_MAX_FACTOR,
    DEMO_PAIRS,
    EXACT,
    HELD_OUT_PAIRS,
    HELD_OUT_RUNS_GLOB,
    NOT_ABOVE,
    REAL_PAIRS,
    TOLERANCE,
)
from tools.calibration.runs import RUNS_GLOB, run_spreads
from tb_gpu_advisor.comparison.diff import compare_reports
from tb_gpu_advisor.comparison.predictions import DEFAULT_KIND, bound_score, check
from tb_gpu_advisor.constants import PROFILE_SUBDIR, XPLANE_SUFFIX
from tb_gpu_advisor.demo import DEFAULT_DIR as DEMO_DIR
from tb_gpu_advisor.whatif.estimate import BOUND
from tb_gpu_advisor.whatif.estimate import is_bound as bound_kind
from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.pipeline import host_report


@dataclass(frozen=True)
class Row:
    """One pair's check: the finding its fix addresses, what the baseline predicted, what compare measured."""

    group: str  # "demo", "real" (the real pairs) or "held_out" (real pairs the models never saw)
    pair: str
    finding: str | None
    status: str  # resolved, reduced, persisting, or absent (the baseline has no such finding)
    predicted: float | None
    kind: str | None
    measured: dict | None  # predictions.measured of the comparison
    ratio: float | None
    within: bool | None
    tolerance: str | None  # demo pairs: pairs.EXACT, pairs.NOT_ABOVE or pairs.BOUND_HOLDS
    note: str
    combined: dict | None = None  # predictions.combined of the comparison (the top findings' joint estimate)
    spread: object = None  # runs.Spread of a real pair's wall-clock speedup over repeated captures, or None
    fitted_on: str = ""  # real pairs: the model that was tuned on this pair ("" where none was)

    @property
    def is_bound(self):
        return self.kind == BOUND

    @property
    def bound_score(self):
        """A bound's score (comparison.predictions.bound_score): "bound_held", "bound_held_noise" (the measured
        95% CI includes it) or "bound_exceeded" (the CI's low end above it); None for a model or without one."""
        if not self.is_bound or self.ratio is None:
            return None
        return bound_score(self.predicted, self.measured["value"], self.measured.get("low"))

    @property
    def held(self):
        """A bound's score: True where it held, within noise included; False where the fix beat it beyond noise;
        None for a model or without a prediction."""
        score = self.bound_score
        return None if score is None else score != "bound_exceeded"

    @property
    def hit(self):
        """The real pairs' goal, for any kind: the prediction within the tolerance of the measured speedup, and
        for a bound not exceeded beyond noise (an exceeded bound is an estimate that was too low: a miss)."""
        return bool(self.within) and self.held is not False

    @property
    def judged_by_combined(self):
        """Demo pairs: a bound under `not above` (the fix did more than its finding) cannot fail that tolerance,
        so the pair is judged by the combined bound instead."""
        return self.tolerance == NOT_ABOVE and self.is_bound

    @property
    def meets_tolerance(self):
        """Demo pairs: the prediction meets the pair's stated tolerance (pairs.TOLERANCE); a bound must hold (a
        bound under `not above`: the combined estimate must, or be within the tolerance for a model)."""
        if self.ratio is None:
            return False
        if self.judged_by_combined:
            return _combined_met(self.combined)
        if self.tolerance == EXACT:
            return self.held and self.ratio <= 1 + TOLERANCE + 1e-9 if self.is_bound else bool(self.within)
        if self.tolerance == BOUND_HOLDS:
            return self.held and self.ratio <= BOUND_MAX_FACTOR + 1e-9
        return self.ratio <= 1 + TOLERANCE + 1e-9

    @property
    def error_factor(self):
        """How far off the prediction is, as a factor >= 1 (2.0: twice or half the measured speedup)."""
        return None if not self.ratio else max(self.ratio, 1 / self.ratio)


def _combined_met(combined):
    """A combined estimate meets the pair's `not above`: a bound not exceeded beyond noise, a model at most the
    tolerance above the measurement (the fix did more than the findings name, so a model may fall short)."""
    if not combined or combined.get("ratio") is None:
        return False
    if bound_kind(combined["predicted_kind"]):
        return combined.get("score") != "bound_exceeded"
    return combined["ratio"] <= 1 + TOLERANCE + 1e-9


_HELD_WORDS = {"bound_held": "held", "bound_held_noise": "held within noise", "bound_exceeded": "exceeded"}


def _score_cell(row):
    if row.bound_score is not None:
        return _HELD_WORDS[row.bound_score]
    return {True: "yes", False: "no", None: "no prediction"}[row.within]


def _within_cell(row):
    return {True: "yes", False: "no", None: "no prediction"}[row.within]


def _held_cell(row):
    if row.bound_score is None:
        return "-"
    return "exceeded: the estimate was too low" if row.bound_score == "bound_exceeded" else _HELD_WORDS[row.bound_score]


def _spread_cell(spread):
    if spread is None:
        return "-"
    return f"{spread.low:.2f}-{spread.high:.2f}x ({spread.runs} runs)"


def _demo_report(root, name):
    """The report of the committed demo run `name` (demo_logs/, what `tb-gpu-advisor demo` writes and what
    users compare)."""
    paths = glob.glob(os.path.join(root, DEMO_DIR, name, *PROFILE_SUBDIR, "*", "*" + XPLANE_SUFFIX))
    if len(paths) != 1:
        raise FileNotFoundError(f"{os.path.join(root, DEMO_DIR, name)}: expected one demo profile, found {len(paths)}")
    return host_report(load_model(paths[0]))


def _file_report(root, relative):
    return host_report(load_model(os.path.join(root, relative)))


def _row(group, pair, finding, base, cand, tolerance, note):
    host = compare_reports(base, cand)["hosts"][0]
    measured = host["predictions"]["measured"]
    checked = {r["id"]: r for r in host["predictions"]["findings"]}
    ours = next((f for f in base.get("findings") or [] if f["id"] == finding), None) if finding else None
    others = [r["id"] for r in host["predictions"]["findings"] if r["id"] != finding]
    extra = f"Also resolved or reduced: {', '.join(others)}." if others else ""
    note = " ".join(part for part in (note, extra) if part)
    combined = host["predictions"].get("combined")
    if ours is None:
        return Row(group, pair, finding, "absent", None, None, measured, None, None, tolerance, note, combined)
    predicted = ours.get("estimated_speedup")
    status = checked[finding]["status"] if finding in checked else "persisting"
    result = check(predicted, measured["value"] if measured else None)
    return Row(
        group,
        pair,
        finding,
        status,
        predicted,
        ours.get("speedup_kind") or DEFAULT_KIND,
        measured,
        result["ratio"],
        result["within_tolerance"],
        tolerance,
        note,
        combined,
    )


def _addressed(report, category):
    """The id of the baseline's first-ranked finding of `category`, or None."""
    return next((f["id"] for f in report.get("findings") or [] if f.get("category") == category), None)


def calibration_rows(root):
    """Every demo pair (the committed demo_logs/ runs under `root`), every real pair and every held-out real pair
    (read under `root`)."""
    rows = []
    for pair in DEMO_PAIRS:
        base = _demo_report(root, pair.problem)
        cand = _demo_report(root, pair.fixed)
        rows.append(
            _row(
                "demo",
                f"{pair.problem} -> {pair.fixed}",
                _addressed(base, pair.finding_category),
                base,
                cand,
                pair.tolerance,
                pair.note,
            )
        )
    for group, pairs, pattern in (("real", REAL_PAIRS, RUNS_GLOB), ("held_out", HELD_OUT_PAIRS, HELD_OUT_RUNS_GLOB)):
        spreads = run_spreads(root, pattern)
        for pair in pairs:
            row = _row(
                group,
                pair.name,
                pair.finding,
                _file_report(root, pair.problem),
                _file_report(root, pair.fixed),
                None,
                pair.note,
            )
            rows.append(replace(row, spread=spreads.get(pair.name), fitted_on=pair.fitted_on))
    return rows


def _measured_cell(measured):
    if measured is None:
        return "-"
    text = f"{measured['value']:.2f}x"
    if measured["low"] is not None:
        text += f" ({measured['low']:.2f}-{measured['high']:.2f})"
    return text + (" per example" if measured["basis"] == "per_example" else "")


def _predicted_cell(row):
    if row.predicted is None:
        return "no finding"
    return f"{row.predicted:.2f}x ({row.kind})"


def _combined_cell(combined):
    if not combined:
        return "-"
    ratio = "" if combined["ratio"] is None else f", ratio {combined['ratio']:.2f}"
    if combined["ratio"] is not None and bound_kind(combined["predicted_kind"]) and combined.get("score"):
        ratio += ", " + _HELD_WORDS[combined["score"]]
    return f"{combined['predicted']:.2f}x ({combined['predicted_kind']}{ratio})"


def _cell(text):
    return str(text).replace("|", "\\|")


def _table(rows, demo, runs="idle runs"):
    if not demo:
        return _real_table(rows, runs)
    headers = [
        "pair",
        "finding",
        "status",
        "predicted (kind)",
        "measured (95% CI)",
        "predicted / measured",
        f"within {TOLERANCE:.0%}? (a bound: held?)",
        "combined estimate (kind, ratio)",
        "meets its tolerance?",
        "note",
    ]
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for row in rows:
        bound = {EXACT: "within", BOUND_HOLDS: "bound holds"}.get(row.tolerance, "not above")
        cells = [
            row.pair,
            f"`{row.finding}`" if row.finding else "-",
            row.status,
            _predicted_cell(row),
            _measured_cell(row.measured),
            "-" if row.ratio is None else f"{row.ratio:.2f}",
            _score_cell(row),
            _combined_cell(row.combined),
            _meets_cell(row, bound),
            row.note or "",
        ]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return lines


def _meets_cell(row, bound):
    if row.judged_by_combined and row.ratio is not None:
        combined = row.combined
        if not combined or combined.get("ratio") is None:
            return "no (not above; a bound cannot fail it and there is no combined estimate to judge)"
        kind = "bound" if bound_kind(combined["predicted_kind"]) else "estimate"
        score = _HELD_WORDS.get(combined.get("score")) or (
            "not above" if combined["ratio"] <= 1 + TOLERANCE + 1e-9 else "above"
        )
        return (
            f"{'yes' if row.meets_tolerance else 'no'}: n/a for the finding (the fix did more than the finding; "
            f"the combined {kind} {combined['predicted']:.2f}x {score})"
        )
    return f"{'yes' if row.meets_tolerance else 'no'} ({bound})"


def _real_table(rows, runs):
    headers = [
        "pair",
        "finding",
        "status",
        "predicted (kind)",
        "measured (95% CI)",
        f"run-to-run (wall clock, {runs})",
        "predicted / measured",
        f"within {TOLERANCE:.0%}?",
        "a bound: held?",
        "combined estimate (kind, ratio)",
        "model tuned on this pair?",
        "note",
    ]
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for row in rows:
        cells = [
            row.pair,
            f"`{row.finding}`" if row.finding else "-",
            row.status,
            _predicted_cell(row),
            _measured_cell(row.measured),
            _spread_cell(row.spread),
            "-" if row.ratio is None else f"{row.ratio:.2f}",
            _within_cell(row),
            _held_cell(row),
            _combined_cell(row.combined),
            f"yes: {row.fitted_on}" if row.fitted_on else "no",
            row.note or "",
        ]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return lines


GOAL_SHARE = 0.8  # the goal: at least this share of the real pairs within TOLERANCE ...
GOAL_MAX_ERROR = 2.0  # ... and none off by this factor or more


def _score_line(label, rows):
    """`label: N of M within 25% ... (share); max error ...; no prediction for ...` and whether the issue's goal's
    bar is met, then the bounds that held or were exceeded; returns (text without the bounds, met, bounds text)."""
    hits = sum(1 for row in rows if row.hit)
    share = hits / len(rows)
    predicted = [row for row in rows if row.error_factor is not None]
    text = (
        f"{label}: {hits} of {len(rows)} within {TOLERANCE:.0%} of the measured speedup "
        f"({100 * share:.0f}%; goal: at least {GOAL_SHARE:.0%})"
    )
    worst = max(predicted, key=lambda row: row.error_factor) if predicted else None
    if worst is not None:
        text += (
            f"; max error {worst.error_factor:.2f}x ({worst.pair}, predicted / measured {worst.ratio:.2f}; "
            f"goal: under {GOAL_MAX_ERROR:g}x)"
        )
    missing = [row.pair for row in rows if row.predicted is None]
    if missing:
        text += f"; no prediction for {len(missing)} ({', '.join(missing)}): counted as misses"
    met = share >= GOAL_SHARE - 1e-9 and worst is not None and worst.error_factor < GOAL_MAX_ERROR and not missing
    bounds = [row for row in rows if row.bound_score is not None]
    parts = []
    for score, words in (
        ("bound_held", "held"),
        ("bound_held_noise", "held within noise (the measured 95% CI includes the bound)"),
        ("bound_exceeded", "exceeded by the fix beyond noise, the estimate too low: counted as misses"),
    ):
        pairs = [row.pair for row in bounds if row.bound_score == score]
        if pairs:
            parts.append(f"{len(pairs)} {words} ({', '.join(pairs)})")
    return text, met, f". Bounds: {'; '.join(parts)}" if parts else ""


def summary_line(rows):
    """The issue's real pairs' score against the goal: the share within the tolerance of the measured speedup
    (any kind), the largest error, whether both meet the goal; then the bounds that held or were exceeded, and
    how many of these pairs a model was tuned on."""
    real = [row for row in rows if row.group == "real"]
    if not real:
        return "Real pairs: none."
    text, met, bounds = _score_line("Real pairs", real)
    text += (": the goal is met" if met else ": the goal is not met") + bounds
    fitted = [row.pair for row in real if row.fitted_on]
    if fitted:
        text += (
            f". A model was tuned on {len(fitted)} of these pairs ({', '.join(fitted)}): on those the score "
            "measures fit, not prediction; the held-out pairs below measure prediction"
        )
    return text + "."


def held_out_summary_line(rows):
    """The held-out pairs' score by the same rule, said plainly: whether the models reach the goal's bar on
    pairs they were never tuned on, and which pairs they missed."""
    held = [row for row in rows if row.group == "held_out"]
    if not held:
        return "Held-out pairs: none."
    text, met, bounds = _score_line("Held-out pairs", held)
    if met:
        text += ": on pairs they were never tuned on, the models reach the goal's bar"
    else:
        text += ": on pairs they were never tuned on, the models do not reach the goal's bar"
    misses = [
        f"{row.pair} ({'no prediction' if row.ratio is None else f'predicted / measured {row.ratio:.2f}'})"
        for row in held
        if not row.hit
    ]
    if misses:
        text += f"; missed: {', '.join(misses)}"
    fitted = [row.pair for row in held if row.fitted_on]
    if fitted:
        bounds += (
            f". A model was since built with {len(fitted)} of them in view ({', '.join(fitted)}): there the score "
            "measures fit, not prediction"
        )
    return text + bounds + "."


def demo_summary_line(rows):
    """The demo pairs' score: how many meet their stated tolerance, and the finding bounds the fix exceeded that
    were judged by the combined bound instead (never counted as passes of their own)."""
    demo = [row for row in rows if row.group == "demo"]
    met = sum(1 for row in demo if row.meets_tolerance)
    text = f"Demo pairs: {met} of {len(demo)} meet their stated tolerance"
    judged = [row.pair.split(" -> ")[0] for row in demo if row.judged_by_combined and row.ratio is not None]
    exceeded = [row.pair.split(" -> ")[0] for row in demo if row.bound_score == "bound_exceeded"]
    if judged:
        text += (
            f"; {len(judged)} of them ({', '.join(judged)}) judged by the combined estimate, since a finding's "
            "bound cannot fail `not above`"
        )
    if exceeded:
        text += (
            f"; the finding's own bound was exceeded beyond noise on {len(exceeded)} ({', '.join(exceeded)}): "
            "the fix did more than that finding"
        )
    return text + "."


COMMAND = "python -m tools.calibration"


def render_markdown(rows):
    """docs/calibration.md."""
    demo = [row for row in rows if row.group == "demo"]
    real = [row for row in rows if row.group == "real"]
    held = [row for row in rows if row.group == "held_out"]
    out = [
        "# Calibration: predicted speedups against measured fixes",
        "",
        f"Generated by `{COMMAND}` (tools/calibration); do not edit by hand. tests/calibration checks "
        "that this file is what the script writes, so it is regenerated whenever a model or a pair changes.",
        "",
        "Each row takes a problem profile and its fixed twin, and compares the speedup the problem profile's "
        "finding predicted for its fix (`estimated_speedup`, a `model` or a `bound`, docs/findings.md) with the "
        "speedup `compare` measured: baseline mean step time / candidate mean step time, with the 95% interval "
        "of the mean's change (docs/report.md, Comparison, `predictions`). The finding is the one the fix addresses: for demo "
        "pairs the first-ranked finding of the scenario's category, for real pairs the finding named in "
        "tools/calibration/pairs.py. Predicted / measured above 1 promised too much. "
        f"Within {TOLERANCE:.0%}: |predicted - measured| <= {TOLERANCE:.0%} of measured. A bound is an upper "
        "limit, not a point estimate: it is scored `held` (predicted >= measured), `held within noise` (below the "
        "measured speedup but inside its 95% interval) or `exceeded` (the interval's low end above it: the fix beat "
        "it, so the bound was wrong).",
        "",
        "The combined estimate is the baseline's joint estimate of its top findings (`summary.combined_estimate`), "
        "shown beside; the row's verdict is the addressed finding's. "
        "The measured speedup is every change between the two profiles at once. Where a fix changed more than "
        "its finding asked for, the note says so: the model cannot know about those changes.",
        "",
        "## Real pairs",
        "",
        "Real TensorFlow and JAX captures on a shared 2-core CPU machine (tests/data/real/README.md and "
        "tests/data/real/cpu_pairs/README.md): the goal is judged on these. The goal: the prediction within "
        f"{TOLERANCE:.0%} of the measured speedup on at least {GOAL_SHARE:.0%} of the real pairs, and never off "
        f"by {GOAL_MAX_ERROR:g}x or more; a bound is judged by the same rule and must also not be exceeded beyond "
        "noise (a bound the fix beat is an estimate that was too low, a miss even within the tolerance); whether it "
        "held is its own column. The run-to-run column is "
        "the lowest and highest wall-clock speedup (the capture script's own step times, problem mean / fix "
        f"mean) over the repeated captures on the idle machine (`{RUNS_GLOB}`), with their count: how far the "
        "measured speedup moves between runs of the same pair. The column `model tuned on this pair?` names "
        "the what-if model that was changed to fit the pair: that row measures fit, not prediction.",
        "",
        f"**{summary_line(rows)}**",
        "",
        *_table(real, demo=False),
        "",
        "## Held-out pairs",
        "",
        "Real pairs captured after the models were built and never used to tune them "
        "(tests/data/real/cpu_pairs/heldout/README.md): the same script and machine, probing what the fitted "
        "pairs do not (a tf.data map that computes, in Python under the GIL or in TensorFlow's C++ ops, instead "
        "of waiting; a JAX step made mostly of element-wise ops). They are scored by the goal's rule, in their own "
        "line: how the models do on pairs they have not seen. Recaptured on the otherwise idle 2-core "
        f"machine; the run-to-run column spans the repeated captures (`{HELD_OUT_RUNS_GLOB}`).",
        "",
        f"**{held_out_summary_line(rows)}**",
        "",
        *_table(held, demo=False, runs="idle runs"),
        "",
        "## Demo pairs",
        "",
        "The generated scenarios of the demo library (docs/scenarios.md) and their fixed twins, read from the "
        "committed `demo_logs/` (what `tb-gpu-advisor demo` writes, with its seeded step-to-step jitter), so each "
        "row is what `tb-gpu-advisor compare demo_logs/<problem> demo_logs/<fixed>` prints. We wrote both "
        "sides, so these prove little; they are kept as regression checks. Each has a stated tolerance: "
        f"`within` ({TOLERANCE:.0%}) where the fix does only what the finding asks, `not above` (the prediction "
        f"at most {TOLERANCE:.0%} above the measurement) where the fix did more, `bound holds` (at least "
        f"the measurement and at most {BOUND_MAX_FACTOR:g}x it) where the trace only supports an upper bound. "
        f"A bound under `within` must hold and be at most {TOLERANCE:.0%} above the measurement. A finding's bound "
        "cannot fail `not above` (it fails only by being exceeded), so there the pair is judged by the combined "
        "estimate, which names every finding the fix addressed: its bound must hold (within noise counts), its "
        "model be at most 25% above the measurement (the fix did more, so it may fall short); the finding's own bound, exceeded, is shown as such and never counted a pass. "
        "tests/calibration asserts each.",
        "",
        f"**{demo_summary_line(rows)}**",
        "",
        *_table(demo, demo=True),
        "",
    ]
    return "\n".join(out)
