"""The speed guard (benchmarks/guard.py): its comparison on fake numbers, and the guard itself (perf tier)."""

import itertools

import pytest

from benchmarks import guard


def test_a_ratio_is_the_ratio_of_the_medians():
    assert guard.ratio([1.0, 100.0, 2.0], [4.0, 4.0, 0.1]) == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("measured", "ok"),
    [(0.05, True), (0.30, True), (0.3599, True), (0.3601, False), (0.45, False)],
)
def test_the_verdict_allows_twenty_percent_over_the_baseline(measured, ok):
    assert guard.verdict(measured, 0.30)[0] is ok


def test_the_verdict_says_by_how_much():
    ok, message = guard.verdict(0.39, 0.30)
    assert not ok
    assert message == "ratio 0.390 against the baseline 0.300 (+30%; limit 0.360)"


def test_runs_alternate_which_tool_goes_first():
    order = []

    def measure(kind):
        order.append(kind)
        return 1.0

    ours, reference = guard.interleaved(measure, "ours", "ref", 4)
    assert order == ["ours", "ref", "ref", "ours", "ours", "ref", "ref", "ours"]
    assert ours == reference == [1.0] * 4


def _fake(times):
    """measure(kind) returning the next of `times[kind]`."""
    iterators = {kind: iter(values) for kind, values in times.items()}
    return lambda kind: next(iterators[kind])


def test_one_slow_outlier_does_not_fail_the_pair():
    measure = _fake({"ours": [1.0, 9.0, 1.0, 1.0, 1.0], "ref": [4.0] * 5})
    result = guard.check_pair(measure, "ours", "ref", baseline=0.25, runs=5)
    assert result["ok"] and result["ratio"] == pytest.approx(0.25)
    assert len(result["ours_s"]) == 5  # no second set


def test_a_real_slowdown_fails_after_a_second_set():
    measure = _fake({"ours": itertools.repeat(1.3), "ref": itertools.repeat(4.0)})
    result = guard.check_pair(measure, "ours", "ref", baseline=0.25, runs=3)
    assert not result["ok"]
    assert len(result["ours_s"]) == 6
    assert result["message"].startswith("ratio 0.325 against the baseline 0.250 (+30%")
    assert "pooled over 6 runs" in result["message"]


def test_a_noisy_first_set_is_pooled_with_a_second():
    ours = [1.4, 1.4, 1.4] + [0.9, 0.9, 0.9]  # a busy moment, then quiet
    measure = _fake({"ours": ours, "ref": itertools.repeat(4.0)})
    result = guard.check_pair(measure, "ours", "ref", baseline=0.25, runs=3)
    assert result["ok"]  # pooled median 1.15: ratio 0.2875, under the limit 0.30
    assert result["ratio"] == pytest.approx(0.2875)


def test_the_reference_getting_faster_counts_against_us():
    measure = _fake({"ours": itertools.repeat(1.0), "ref": itertools.repeat(3.0)})
    assert not guard.check_pair(measure, "ours", "ref", baseline=0.25, runs=3)["ok"]


def test_the_committed_baseline_has_both_pairs_and_its_machine():
    import json

    with open(guard.BASELINE, encoding="utf-8") as handle:
        record = json.load(handle)
    assert set(record["pairs"]) == set(guard.PAIRS)
    assert record["machine"]["cpu"] and record["machine"]["cores"]
    assert all(0 < ratio < 5 for ratio in guard.load_baseline().values())


def test_the_guard_holds_against_the_committed_baseline(tmp_path):
    """perf tier (tests/tiers.py): the small benchmarks, medians of interleaved runs, against the baseline."""
    results = guard.run_guard(str(tmp_path), guard.load_baseline())
    failed = {pair: r["message"] for pair, r in results.items() if not r["ok"]}
    assert not failed, failed
