"""The work guard (benchmarks/work_guard.py): its counter, its comparison on made-up counts, and the guard itself."""

import copy

import pytest

from benchmarks import work_guard


def _measured(modules, peak=1000):
    """A measurement of {module: lines} (calls: a tenth of the lines)."""
    return {
        "lines": sum(modules.values()),
        "calls": sum(lines // 10 for lines in modules.values()),
        "peak_bytes": peak,
        "modules": {module: [lines, lines // 10] for module, lines in modules.items()},
    }


BASE = _measured(
    {
        "readers/xplane/wire_scan.py": 500_000,
        "readers/xplane/plane_scan.py": 50_000,
        "model/details.py": 100_000,
        "analysis/kernel_names.py": 300_000,
        "report/finite.py": 50_000,
    }
)


def _grown(module, lines, peak=1000):
    modules = {m: counts[0] for m, counts in BASE["modules"].items()}
    modules[module] = modules.get(module, 0) + lines
    return _measured(modules, peak)


def test_the_same_counts_hold():
    assert work_guard.compare(copy.deepcopy(BASE), BASE) == []


def test_a_total_over_twenty_percent_fails_and_says_what_grew():
    problems = work_guard.compare(_grown("analysis/kernel_names.py", 250_000), BASE)
    assert problems[0] == "lines 1,000,000 -> 1,250,000 (+25%; limit +20%)"
    assert "lines in tb_gpu_advisor/analysis 300,000 -> 550,000 (+83%)" in problems


def test_more_memory_fails():
    problems = work_guard.compare(_grown("report/finite.py", 0, peak=1300), BASE)
    assert problems == ["peak_bytes 1,000 -> 1,300 (+30%; limit +20%)"]


def test_a_loop_in_one_reader_module_fails_though_the_total_holds():
    problems = work_guard.compare(_grown("readers/xplane/plane_scan.py", 100_000), BASE)
    assert problems == [
        "lines in tb_gpu_advisor/readers/xplane/plane_scan.py 50,000 -> 150,000 (+200%)",
    ]


def test_a_part_growing_more_than_twenty_percent_fails():
    problems = work_guard.compare(_grown("model/new_module.py", 30_000), BASE)
    assert "lines in tb_gpu_advisor/model 100,000 -> 130,000 (+30%)" in problems
    assert "lines in tb_gpu_advisor/model/new_module.py 0 -> 30,000 (+inf%)" in problems


def test_small_growth_under_the_floor_holds():
    # +38% of a reader module, but under 2% of the trace's lines: not a slower reader
    assert work_guard.compare(_grown("readers/xplane/plane_scan.py", 19_000), BASE) == []
    # a module outside the reader and the model is checked only through its part (analysis: +17%)
    assert work_guard.compare(_grown("analysis/new_analysis.py", 50_000), BASE) == []
    assert work_guard.compare(_grown("model/new_module.py", 50_000), BASE) != []


def test_the_failure_names_the_modules_that_grew_the_most():
    grown = _grown("readers/xplane/plane_scan.py", 100_000)
    assert work_guard.grown_modules(grown, BASE) == [
        "tb_gpu_advisor/readers/xplane/plane_scan.py: lines 50,000 -> 150,000, calls 5,000 -> 15,000"
    ]


def test_the_counter_counts_lines_and_calls_of_the_package_only():
    from tb_gpu_advisor.report.safe_text import escape_controls

    def run(times):
        with work_guard.WorkCounter() as counter:
            for _ in range(times):
                escape_controls("a kernel\tname")
                sorted([3, 1, 2])  # not ours: not counted
        return counter

    once, thrice = run(1), run(3)
    assert set(once.lines) == {"report/safe_text.py"}
    assert once.lines["report/safe_text.py"] > 0
    assert thrice.lines["report/safe_text.py"] == 3 * once.lines["report/safe_text.py"]
    assert thrice.calls["report/safe_text.py"] == 3 * once.calls["report/safe_text.py"]


def test_the_committed_baseline_has_both_traces():
    baseline = work_guard.load_baseline()
    assert set(baseline["traces"]) == {"xplane", "kineto"}
    for entry in baseline["traces"].values():
        assert entry["lines"] == sum(counts[0] for counts in entry["modules"].values())
        assert entry["lines"] > 100_000 and entry["peak_bytes"] > 1_000_000


def test_the_work_holds_against_the_committed_baseline(tmp_path):
    """Our analyze of the guard's two small traces does no more work than the committed baseline (+20%)."""
    baseline = work_guard.load_baseline()
    if not work_guard.same_python(baseline):
        pytest.skip(f"the baseline was counted on Python {baseline['python']}; rerecord it on this one")
    results = work_guard.check(work_guard.traces(str(tmp_path)), baseline)
    failed = {name: result["problems"] for name, result in results.items() if not result["ok"]}
    assert not failed, f"{failed} (an intended change: python benchmarks/work_guard.py --write-baseline)"
