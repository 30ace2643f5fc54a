"""Each resolved or reduced finding's predicted speedup beside the measured one."""

import pytest

from tb_gpu_advisor.comparison.diff import compare_reports
from tb_gpu_advisor.comparison.predictions import check
from tb_gpu_advisor.comparison.render import render_comparison_markdown, render_comparison_text
from tb_gpu_advisor.comparison.stats import ratio_of_means_difference, speedup_of

from .reports import host_from_steps


def finding(key, speedup, kind=None):
    found = {"id": key, "severity": "high", "title": f"title {key}", "summary": "s", "estimated_speedup": speedup}
    if kind:
        found["speedup_kind"] = kind
    return found


def test_the_speedup_carries_the_interval_of_the_change_of_the_mean():
    """One change, one interval: the speedup's 95% CI is the mean change's (Welch), mapped to a ratio."""
    difference = ratio_of_means_difference([20.0, 22.0, 18.0, 20.0], [10.0, 11.0, 9.0, 10.0])
    ratio = speedup_of(difference)
    assert ratio.value == pytest.approx(2.0) and ratio.method == difference.method
    assert ratio.low == pytest.approx(20.0 / (20.0 + difference.high))
    assert ratio.high == pytest.approx(20.0 / (20.0 + difference.low))
    assert ratio.low < 2.0 < ratio.high
    single = speedup_of(ratio_of_means_difference([20.0], [10.0]))
    assert (single.value, single.low, single.high) == (2.0, None, None)
    assert speedup_of(ratio_of_means_difference([20.0], [0.0])) is None


def test_within_tolerance_is_a_share_of_the_measured_speedup():
    assert check(2.5, 2.0) == {"ratio": 1.25, "within_tolerance": True, "score": "within", "score_text": "within 25%"}
    assert check(2.51, 2.0)["within_tolerance"] is False
    assert check(1.5, 2.0)["ratio"] == 0.75 and check(1.5, 2.0)["within_tolerance"] is True
    assert check(1.49, 2.0, "model")["score_text"] == "not within 25%"
    assert check(None, 2.0) == {"ratio": None, "within_tolerance": None, "score": None, "score_text": None}


def test_a_bound_is_scored_one_sided():
    """An upper limit holds whatever its distance above the measurement, and is never a success when the fix
    beat it, even within 25%."""
    held = check(7.8, 4.89, "bound")
    assert (held["score"], held["within_tolerance"]) == ("bound_held", False)
    assert held["score_text"] == "bound held (measured 4.89× ≤ 7.80×)"
    beaten = check(1.34, 1.68, "bound")
    assert (beaten["score"], beaten["within_tolerance"]) == ("bound_exceeded", True)
    assert beaten["score_text"] == "bound exceeded: the estimate was too low (measured 1.68× > 1.34×)"
    assert check(2.0, 2.0, "bound")["score"] == "bound_held"


def test_a_bound_inside_the_measured_interval_held_within_noise():
    """Exceeded only when the measured speedup's 95% CI low end is above the bound (tf221: 2.16× in 2.13-2.21×)."""
    noise = check(2.16, 2.17, "bound", low=2.13)
    assert noise["score"] == "bound_held_noise"
    assert noise["score_text"] == "bound held within noise (measured 2.17×, 95% CI from 2.13×, includes 2.16×)"
    beaten = check(1.19, 12.11, "bound", low=11.28)
    assert beaten["score"] == "bound_exceeded"
    assert beaten["score_text"] == (
        "bound exceeded: the estimate was too low (measured 12.11×, 95% CI from 11.28× > 1.19×)"
    )
    assert check(2.16, 2.17, "bound")["score"] == "bound_exceeded"  # no interval: the point decides


def test_resolved_and_reduced_findings_are_checked_against_the_measured_speedup():
    base = host_from_steps(
        [20.0, 20.5, 19.5, 20.0],
        findings=[finding("gone", 1.8, "model"), finding("smaller", 1.5), finding("same", 1.2), finding("grew", 1.1)],
    )
    cand = host_from_steps(
        [10.0, 10.2, 9.8, 10.0],
        findings=[finding("smaller", 1.1), finding("same", 1.2), finding("grew", 1.3), finding("new", 2.0)],
    )
    predictions = compare_reports(base, cand)["hosts"][0]["predictions"]
    measured = predictions["measured"]
    assert measured["value"] == pytest.approx(2.0) and measured["basis"] == "per_step"
    assert measured["low"] < 2.0 < measured["high"]
    mean = compare_reports(base, cand)["hosts"][0]["step_time_ms"]["mean"]  # the tile's interval, as a ratio
    assert measured["low"] == pytest.approx(1 / (1 + mean["ci_high_pct"] / 100), abs=1e-3)
    assert measured["high"] == pytest.approx(1 / (1 + mean["ci_low_pct"] / 100), abs=1e-3)
    rows = predictions["findings"]
    assert [(r["id"], r["status"]) for r in rows] == [("gone", "resolved"), ("smaller", "reduced")]
    gone, smaller = rows
    assert (gone["predicted"], gone["predicted_kind"], gone["candidate_estimate"]) == (1.8, "model", None)
    assert (gone["ratio"], gone["within_tolerance"]) == (0.9, True)
    # A report without `speedup_kind` predates the what-if model: its share-of-step estimates are bounds.
    assert (smaller["predicted_kind"], smaller["candidate_estimate"], smaller["candidate_kind"]) == (
        "bound",
        1.1,
        "bound",
    )
    # Without a combined estimate only the first-ranked resolved or reduced finding is the fix checked.
    assert (smaller["ratio"], smaller["within_tolerance"], smaller["score"]) == (None, None, "not_checked_alone")
    assert smaller["score_text"] == "- (resolved with the others: not checked alone)"


def test_only_the_findings_the_combined_estimate_names_are_scored():
    """A side finding whose fix was never applied went with the verdict's fix: its bound is never compared with
    the whole measured speedup (review M1: ds.cache on input_bound, six rows on launch_bound)."""
    base = host_from_steps(
        [20.0, 20.5, 19.5, 20.0], findings=[finding("verdict", 2.1), finding("side", 1.01), finding("variance", 1.1)]
    )
    base["summary"]["combined_estimate"] = {
        "estimated_speedup": 2.1,
        "speedup_kind": "bound",
        "finding_ids": ["verdict"],
        "shared_ids": [],
    }
    cand = host_from_steps([10.0, 10.2, 9.8, 10.0], findings=[finding("variance", 1.05)])
    comparison = compare_reports(base, cand)
    predictions = comparison["hosts"][0]["predictions"]
    scores = {row["id"]: row["score"] for row in predictions["findings"]}
    assert scores == {"verdict": "bound_held", "side": "not_checked_alone", "variance": "not_checked_alone"}
    assert predictions["combined"]["other_ids"] == ["side", "variance"]
    text = " ".join(render_comparison_text(comparison).split())
    assert "exceeded" not in text
    assert (
        "Combined estimate of the verdict's finding (verdict): up to 2.10×, bound held (measured 2.00× ≤ "
        "2.10×) (ratio 1.05); 2 other findings also resolved or reduced, not checked alone."
    ) in text
    assert text.count("- (resolved with the others: not checked alone)") == 2
    # Several named findings are checked together by the combined estimate, not each against the total.
    base["summary"]["combined_estimate"]["finding_ids"] = ["verdict", "side"]
    scores = {row["id"]: row["score"] for row in compare_reports(base, cand)["hosts"][0]["predictions"]["findings"]}
    assert scores == {"verdict": "checked_together", "side": "checked_together", "variance": "not_checked_alone"}


def test_the_prediction_table_is_rendered_in_text_and_markdown():
    base = host_from_steps([20.0, 20.5, 19.5, 20.0], findings=[finding("gone", 1.8, "model"), finding("bounded", 4.0)])
    cand = host_from_steps([10.0, 10.2, 9.8, 10.0])
    comparison = compare_reports(base, cand)
    text = render_comparison_text(comparison)
    assert "Prediction checked" in text
    assert "Measured: 2.00× faster (95% CI" in text
    assert "about 1.80×" in text and "up to 4.00×" in text
    lines = [line for line in text.splitlines() if line.startswith("title ")]
    assert lines[0].split()[-3:] == ["0.90", "within", "25%"]
    assert lines[1].split()[-7:] == ["-", "-", "(resolved", "with", "the", "others:", "not"]
    assert (
        "| title bounded | resolved | up to 4.00× | - | - (resolved with the others: not checked alone) |"
        in render_comparison_markdown(comparison)
    )
    base["summary"]["combined_estimate"] = {
        "estimated_speedup": 4.0,
        "speedup_kind": "bound",
        "finding_ids": ["bounded"],
        "shared_ids": [],
    }
    assert (
        "| title bounded | resolved | up to 4.00× | 2.00 | bound held (measured 2.00× ≤ 4.00×) |"
        in render_comparison_markdown(compare_reports(base, cand))
    )


def test_no_prediction_table_without_resolved_findings_nor_steps():
    base = host_from_steps([], findings=[finding("gone", 1.8)])
    cand = host_from_steps([])
    predictions = compare_reports(base, cand)["hosts"][0]["predictions"]
    assert predictions["measured"] is None
    assert predictions["findings"][0]["ratio"] is None
    same = host_from_steps([10.0, 10.0])
    assert compare_reports(same, same)["hosts"][0]["predictions"]["findings"] == []
    assert "Prediction checked" not in render_comparison_text(compare_reports(same, same))


def test_the_combined_estimate_is_checked_when_the_baseline_has_one():
    base = host_from_steps([20.0, 20.5, 19.5, 20.0], findings=[finding("a", 1.5, "model"), finding("b", 1.4, "model")])
    base["summary"]["combined_estimate"] = {
        "estimated_speedup": 1.9,
        "speedup_kind": "model",
        "finding_ids": ["a", "b"],
        "shared_ids": [],
    }
    cand = host_from_steps([10.0, 10.2, 9.8, 10.0], findings=[finding("b", 1.4, "model")])
    comparison = compare_reports(base, cand)
    combined = comparison["hosts"][0]["predictions"]["combined"]
    assert combined == {
        "predicted": 1.9,
        "predicted_kind": "model",
        "finding_ids": ["a", "b"],
        "addressed_ids": ["a"],
        "other_ids": [],
        "ratio": 0.95,
        "within_tolerance": True,
        "score": "within",
        "score_text": "within 25%",
    }
    assert (
        "Combined estimate of the verdict's findings (a, b): about 1.90×, within 25% of the measured "
        "speedup (ratio 0.95); the candidate did not resolve or reduce b."
    ) in " ".join(render_comparison_text(comparison).split())
    del base["summary"]["combined_estimate"]
    assert compare_reports(base, cand)["hosts"][0]["predictions"]["combined"] is None
