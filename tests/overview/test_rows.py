"""Overview rows: a host report's summary and the change against the previous run of the same series."""

from tb_gpu_advisor.overview.rows import run_summary, series_of, with_changes


def _row(run, step_ms, busy):
    return {"run": run, "summary": {"step_time_ms": step_ms, "gpu_busy_pct": busy}}


def test_the_summary_takes_verdict_confidence_numbers_and_the_first_finding():
    report = {
        "summary": {
            "bottleneck": "input",
            "verdict": "Input-bound: ...",
            "gpu_busy_pct": 40.0,
            "confidence": {"level": "high", "reasons": []},
            "step_time_ms": {"mean": 12.5, "median": 12.0, "stdev": 1.0, "count": 16},
        },
        "findings": [
            {
                "id": "input.no_prefetch",
                "title": "No prefetch",
                "severity": "high",
                "estimated_speedup": 2.5,
                "speedup_kind": "bound",
                "evidence": {},
            },
            {"id": "other", "title": "Other"},
        ],
    }
    assert run_summary(report) == {
        "bottleneck": "input",
        "verdict": "Input-bound: ...",
        "confidence": "high",
        "step_time_ms": 12.5,
        "step_count": 16,
        "gpu_busy_pct": 40.0,
        "top_finding": {
            "id": "input.no_prefetch",
            "title": "No prefetch",
            "severity": "high",
            "estimated_speedup": 2.5,
            "speedup_kind": "bound",
        },
    }
    assert run_summary({"summary": {}, "findings": []})["top_finding"] is None


def test_series_are_the_run_id_without_its_last_component():
    assert series_of("bert/lr3/2026_01_02_00_00_00") == "bert/lr3"
    assert series_of("2026_01_02_00_00_00") == ""


def test_each_run_is_compared_with_the_next_older_run_of_its_series():
    rows = [
        _row("bert/2026_01_03_00_00_00", 80.0, 90.0),
        _row("gpt/2026_01_02_00_00_00", 10.0, 50.0),
        {"run": "bert/2026_01_02_00_00_00", "summary": None},  # not analyzed yet: skipped
        _row("bert/2026_01_01_00_00_00", 100.0, 80.0),
        _row("gpt/2026_01_01_00_00_00", 10.0, None),
    ]
    with_changes(rows)
    assert rows[0]["change"] == {
        "previous_run": "bert/2026_01_01_00_00_00",
        "step_time_pct": -20.0,
        "gpu_busy_pct_points": 10.0,
    }
    assert rows[1]["change"] == {
        "previous_run": "gpt/2026_01_01_00_00_00",
        "step_time_pct": 0.0,
        "gpu_busy_pct_points": None,
    }
    assert rows[2]["change"] is None and rows[3]["change"] is None and rows[4]["change"] is None


def test_pytorch_runs_are_compared_within_their_directory_oldest_first_by_capture_time():
    """Two PyTorch run directories at the logdir's root are two series (not one compared in reverse alphabetical
    order); within a series the previous run is the one captured before, whatever the names."""
    rows = [
        {**_row("zeta", 50.0, 60.0), "series": "zeta", "captured_at": 300.0},
        {**_row("alpha", 100.0, 40.0), "series": "alpha", "captured_at": 100.0},
        {**_row("bert/1700000009000", 40.0, 70.0), "series": "bert", "captured_at": 200.0},
        {**_row("bert/1700000010000", 80.0, 50.0), "series": "bert", "captured_at": 100.0},
    ]
    with_changes(rows)
    assert rows[0]["change"] is None and rows[1]["change"] is None and rows[3]["change"] is None
    assert rows[2]["change"] == {
        "previous_run": "bert/1700000010000",
        "step_time_pct": -50.0,
        "gpu_busy_pct_points": 20.0,
    }
