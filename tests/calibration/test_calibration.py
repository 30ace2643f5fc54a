"""docs/calibration.md is what the calibration script writes, each demo pair meets its stated tolerance, and the
held-out real pairs are scored in a group and a summary line of their own."""

import json
import pathlib

import pytest

import tools.calibration.__main__ as calibration_main
from tools.calibration.__main__ import main
from tools.calibration.pairs import BOUND_HOLDS, DEMO_PAIRS, EXACT, HELD_OUT_PAIRS, NOT_ABOVE, REAL_PAIRS
from tools.calibration.runs import Spread, run_spreads
from tools.calibration.table import (
    Row,
    _meets_cell,
    calibration_rows,
    demo_summary_line,
    held_out_summary_line,
    render_markdown,
    summary_line,
)

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def rows():
    return calibration_rows(str(ROOT))


def test_the_committed_doc_is_what_the_script_writes(rows):
    committed = (ROOT / "docs" / "calibration.md").read_text(encoding="utf-8")
    assert committed == render_markdown(rows), "docs/calibration.md is stale: python -m tools.calibration"


def test_the_check_option_tells_a_stale_file(tmp_path, capsys, monkeypatch, rows):
    monkeypatch.setattr(calibration_main, "calibration_rows", lambda root: rows)  # the rows computed once above
    stale = tmp_path / "calibration.md"
    stale.write_text("old\n", encoding="utf-8")
    assert main(["--root", str(ROOT), "--output", str(stale), "--check"]) == 1
    assert main(["--root", str(ROOT), "--output", str(stale)]) == 0
    assert main(["--root", str(ROOT), "--output", str(stale), "--check"]) == 0


def test_every_pair_is_a_row(rows):
    assert [row.pair for row in rows if row.group == "real"] == [pair.name for pair in REAL_PAIRS]
    assert [row.pair for row in rows if row.group == "held_out"] == [pair.name for pair in HELD_OUT_PAIRS]
    assert len([row for row in rows if row.group == "demo"]) == len(DEMO_PAIRS)
    assert all(row.measured is not None for row in rows)


@pytest.mark.parametrize("index", range(len(DEMO_PAIRS)), ids=[pair.problem for pair in DEMO_PAIRS])
def test_each_demo_pair_meets_its_stated_tolerance(rows, index):
    row = [row for row in rows if row.group == "demo"][index]
    assert row.finding is not None and row.status in ("resolved", "reduced")
    bound = {
        EXACT: "within 25% of (a bound: at least and at most 25% above)",
        BOUND_HOLDS: "a bound at least and at most 2x",
    }.get(row.tolerance, "at most 25% above")
    if DEMO_PAIRS[index].known_miss:  # the fixed twin does more than any finding names: shown as a miss
        assert not row.meets_tolerance and row.judged_by_combined
        assert f"{row.pair.split(' -> ')[0]}" in demo_summary_line(rows).split("exceeded beyond noise on")[1]
        return
    assert row.meets_tolerance, (
        f"{row.pair}: {row.finding} predicted {row.predicted} ({row.kind}), measured "
        f"{row.measured['value']}: the prediction should be {bound} the measurement"
    )


def test_the_summary_judges_the_goal_as_the_issue_states_it(rows):
    """Within 25% of the measured speedup whatever the kind; a bound's held/exceeded is reported apart."""
    line = summary_line(rows)
    real = [row for row in rows if row.group == "real"]
    hits = sum(
        1
        for row in real
        if row.ratio is not None and abs(row.ratio - 1) <= 0.25 + 1e-9 and row.bound_score != "bound_exceeded"
    )
    assert line.startswith(f"Real pairs: {hits} of {len(real)} within 25% of the measured speedup")
    for row in real:
        if row.predicted is None:
            assert row.pair in line
        if row.kind == "bound" and row.ratio is not None and row.ratio < 1:
            assert row.pair in line.split("Bounds:")[1]


def test_the_real_pairs_meet_the_goal(rows):
    """Issue 15's goal on the committed real pairs: at least 80% within 25%, none off by 2x or more."""
    assert summary_line(rows).split(": the goal is ")[1].startswith("met"), summary_line(rows)


def test_the_pairs_a_model_was_tuned_on_say_so(rows):
    """The issue's real pairs score fit where a model was changed to fit them; the held-out pairs never were."""
    fitted = {row.pair: row.fitted_on for row in rows if row.group == "real"}
    assert {pair for pair, model in fitted.items() if model} == {"tf221_cpu_keras_input", "tf_map", "jax_jit"}
    assert "parallel-map what-if" in fitted["tf_map"] and "JAX fusion term" in fitted["jax_jit"]
    # A held-out pair a model was later built with in view says so, in its row and in the held-out line.
    held = {row.pair: row.fitted_on for row in rows if row.group == "held_out" and row.fitted_on}
    assert set(held) == {"tf_map_python"} and "GIL test" in held["tf_map_python"]
    assert "built with 1 of them in view (tf_map_python)" in held_out_summary_line(rows)
    assert "tuned on 3 of these pairs (tf221_cpu_keras_input, tf_map, jax_jit)" in summary_line(rows)
    doc = render_markdown(rows)
    assert "| model tuned on this pair? |" in doc
    assert "| yes: the JAX fusion term" in doc


def test_the_held_out_pairs_have_their_own_group_and_summary(rows):
    doc = render_markdown(rows)
    held, demo = doc.index("## Held-out pairs"), doc.index("## Demo pairs")
    assert doc.index("## Real pairs") < held < demo
    assert f"**{held_out_summary_line(rows)}**" in doc[held:demo]
    for pair in HELD_OUT_PAIRS:
        assert f"| {pair.name} |" in doc[held:demo]
    held_rows = [row for row in rows if row.group == "held_out"]
    line = held_out_summary_line(rows)
    assert line.startswith(f"Held-out pairs: {sum(row.hit for row in held_rows)} of {len(held_rows)} within 25%")
    for row in held_rows:  # every miss is named, never hidden
        assert (row.pair in line.split("missed:")[1]) if not row.hit else True
    # the held-out rows stay out of the issue's goal line
    assert not any(row.pair in summary_line(rows) for row in held_rows)


def _held(pair, predicted, measured):
    return Row(
        "held_out",
        pair,
        "x.y",
        "resolved",
        predicted,
        "model",
        {"value": measured, "low": None},
        round(predicted / measured, 3),
        abs(predicted - measured) <= 0.25 * measured,
        None,
        "",
    )


def test_the_held_out_line_says_plainly_whether_the_models_reach_the_bar():
    hits = [_held(f"p{i}", 2.0, 2.0) for i in range(4)]
    assert held_out_summary_line(hits) == (
        "Held-out pairs: 4 of 4 within 25% of the measured speedup (100%; goal: at least 80%); max error 1.00x (p0, "
        "predicted / measured 1.00; goal: under 2x): on pairs they were never tuned on, the models reach the "
        "goal's bar."
    )
    line = held_out_summary_line(hits + [_held("gil", 1.96, 0.68)])
    assert line == (
        "Held-out pairs: 4 of 5 within 25% of the measured speedup (80%; goal: at least 80%); max error 2.88x (gil, "
        "predicted / measured 2.88; goal: under 2x): on pairs they were never tuned on, the models do not reach "
        "the goal's bar; missed: gil (predicted / measured 2.88)."
    )
    assert held_out_summary_line([]) == "Held-out pairs: none."


def _real(pair, predicted, measured, kind="model", low=None):
    return Row(
        "real",
        pair,
        "x.y",
        "resolved",
        predicted,
        kind,
        {"value": measured, "low": low},
        round(predicted / measured, 3),
        abs(predicted - measured) <= 0.25 * measured,
        None,
        "",
    )


def test_the_goal_needs_80_percent_within_and_no_error_of_2x():
    five = [_real(f"p{i}", 2.0, 2.0) for i in range(4)]
    assert summary_line(five + [_real("far", 1.0, 1.9)]).endswith(
        "max error 1.90x (far, predicted / measured 0.53; goal: under 2x): the goal is met."
    )
    assert "the goal is not met" in summary_line(five + [_real("off", 1.0, 2.0)])  # 2x off
    assert "the goal is not met" in summary_line(five[:3] + [_real("a", 1.0, 1.5), _real("b", 1.0, 1.5)])
    line = summary_line(
        five
        + [
            _real("low", 1.9, 2.0, "bound"),
            _real("high", 2.4, 2.0, "bound"),
            _real("noise", 1.95, 2.0, "bound", low=1.9),
        ]
    )
    # An exceeded bound is a miss even within 25%; one inside the measured 95% CI held within noise.
    assert line.startswith("Real pairs: 6 of 7 within 25% of the measured speedup (86%; goal: at least 80%)")
    assert line.endswith(
        "Bounds: 1 held (high); 1 held within noise (the measured 95% CI includes the bound) "
        "(noise); 1 exceeded by the fix beyond noise, the estimate too low: counted as misses "
        "(low)."
    )


def _demo(predicted, measured, kind, tolerance, combined=None, low=None):
    return Row(
        "demo",
        "p -> p_fixed",
        "x.y",
        "resolved",
        predicted,
        kind,
        {"value": measured, "low": low},
        round(predicted / measured, 3),
        abs(predicted - measured) <= 0.25 * measured,
        tolerance,
        "",
        combined,
    )


def test_a_bound_under_not_above_is_judged_by_the_combined_bound():
    """`not above` cannot fail for a bound, so an exceeded finding bound is never a pass of its own (review M7)."""
    held = {"predicted": 13.3, "predicted_kind": "bound", "ratio": 1.1, "score": "bound_held", "within_tolerance": True}
    exceeded = {**held, "predicted": 10.0, "ratio": 0.83, "score": "bound_exceeded"}
    assert _demo(4.29, 12.11, "bound", NOT_ABOVE, held, low=11.28).meets_tolerance
    assert not _demo(4.29, 12.11, "bound", NOT_ABOVE, exceeded, low=11.28).meets_tolerance
    assert not _demo(4.29, 12.11, "bound", NOT_ABOVE, None, low=11.28).meets_tolerance
    assert _demo(1.2, 1.1, "model", NOT_ABOVE).meets_tolerance  # a model is still judged as before
    short = {"predicted": 1.99, "predicted_kind": "model", "ratio": 0.72, "within_tolerance": False}
    over = {**short, "predicted": 3.6, "ratio": 1.3}
    assert _demo(1.53, 2.76, "bound", NOT_ABOVE, short, low=2.68).meets_tolerance  # a combined model may fall short
    assert not _demo(1.53, 2.76, "bound", NOT_ABOVE, over, low=2.68).meets_tolerance  # never 25% above
    assert _meets_cell(_demo(1.53, 2.76, "bound", NOT_ABOVE, over, low=2.68), "not above").endswith(
        "the combined estimate 3.60x above)"
    )
    rows = [_demo(4.29, 12.11, "bound", NOT_ABOVE, held, low=11.28), _demo(2.0, 2.0, "model", EXACT)]
    assert demo_summary_line(rows) == (
        "Demo pairs: 2 of 2 meet their stated tolerance; 1 of them (p) judged by the combined estimate, since a "
        "finding's bound cannot fail `not above`; the finding's own bound was exceeded beyond noise on 1 (p): the "
        "fix did more than that finding."
    )
    assert _meets_cell(rows[0], "not above") == (
        "yes: n/a for the finding (the fix did more than the finding; the combined bound 13.30x held)"
    )


def test_run_to_run_spread_of_the_wall_clock_speedup(tmp_path):
    def pairs_json(problem, fix):
        return {
            "pairs": {
                "tf_map": {"problem": {"step_ms_mean": problem}, "fix": {"step_ms_mean": fix}},
                "broken": {"problem": {"step_ms_mean": 10.0}, "fix": {}},
            }
        }

    runs = tmp_path / "runs"
    runs.mkdir()
    for index, (problem, fix) in enumerate([(100.0, 50.0), (90.0, 60.0), (80.0, 32.0)], 1):
        (runs / f"idle_{index}.json").write_text(json.dumps(pairs_json(problem, fix)), encoding="utf-8")
    (runs / "loaded_1.json").write_text(json.dumps(pairs_json(100.0, 10.0)), encoding="utf-8")
    assert run_spreads(str(tmp_path), "runs/idle_*.json") == {"tf_map": Spread(1.5, 2.5, 3)}


def test_the_committed_runs_give_each_cpu_pair_a_spread(rows):
    spread = {row.pair: row.spread for row in rows if row.group == "real"}
    assert spread["tf221_cpu_keras_input"] is None
    assert all(
        spread[name].runs == 3 and spread[name].low <= spread[name].high
        for name in ("tf_map", "tf_prefetch", "tf_eager", "jax_loader", "jax_jit")
    )
    held = {row.pair: row.spread for row in rows if row.group == "held_out"}
    assert all(spread.runs == 3 and spread.low <= spread.high for spread in held.values()), held
    assert sorted(held) == sorted(pair.name for pair in HELD_OUT_PAIRS)
