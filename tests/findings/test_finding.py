import pytest

from tb_gpu_advisor.findings.catalog import CATALOG
from tb_gpu_advisor.findings.rules import RULES
from tb_gpu_advisor.findings.finding import CATEGORIES, Evidence, Finding, capped, grade, ladder, limit, speedup


def make(severity="high", recoverable_ms=6.0, finding_id="input.gpu_waits_for_input", note=""):
    return Finding(id=finding_id, severity=severity, summary="s", evidence=Evidence({"a_ms": 1.0}, {}, {"steps": []}),
                   recoverable_ms=recoverable_ms, window_ms=10.0, speedup_basis="upper bound: b", fix_note=note)


def test_speedup_is_the_step_time_ratio_and_never_below_one():
    assert speedup(6.0, 10.0) == 2.5
    assert speedup(0.0, 10.0) == 1.0
    assert speedup(-1.0, 10.0) == 1.0
    assert speedup(5.0, 0.0) == 1.0
    assert speedup(10.0, 10.0) == 100.0  # capped just below the whole window: finite


def test_grade_and_thresholds():
    assert grade(20.0, 20.0, 5.0) == "high"
    assert grade(19.99, 20.0, 5.0) == "medium"
    assert grade(4.0, 20.0, 5.0) is None
    assert grade(4.0, 20.0, 5.0, low=1.0) == "low"
    assert grade(None, 20.0, 5.0) is None
    assert ladder("x_pct", 7.0, 20.0, 5.0) == {"metric": "x_pct", "value": 7.0, "high": 20.0, "medium": 5.0,
                                               "crossed": "medium"}
    assert limit("n", 3, 1, "below", per_step=2) == {"metric": "n", "value": 3, "direction": "below", "level": 1,
                                                     "per_step": 2}


def test_json_shape():
    data = make(note="This profile: x.").to_dict()
    assert list(data) == ["id", "category", "severity", "title", "summary", "evidence", "estimated_speedup",
                          "recoverable_ms", "speedup_basis", "fix_summary", "fix", "docs"]
    assert data["evidence"] == {"metrics": {"a_ms": 1.0}, "threshold": {}, "pointers": {}}  # empty pointers dropped
    assert data["estimated_speedup"] == 2.5
    assert data["fix"].startswith("This profile: x.\n\n")
    assert data["category"] == "input"


def test_unknown_ids_and_severities_are_refused():
    with pytest.raises(ValueError):
        make(finding_id="input.nonsense")
    with pytest.raises(ValueError):
        make(severity="critical")


def test_capped_only_lowers():
    assert capped(make("high"), "medium").severity == "medium"
    assert capped(make("low"), "medium").severity == "low"


def test_catalog_entries_are_complete():
    assert len(CATALOG) == len(RULES)  # one entry per rule, registered as the rule families load
    for key, entry in CATALOG.items():
        family = key.split(".")[0]
        assert family in CATEGORIES + ("steps", "environment"), key
        assert entry.category in CATEGORIES, key
        assert entry.title and entry.fix_summary and entry.fix, key
        assert len(entry.fix_summary) <= 100, key
        assert entry.docs and all(url.startswith("https://") for url in entry.docs), key


def test_every_finding_id_and_threshold_is_documented():
    import pathlib

    from tb_gpu_advisor.findings import thresholds
    text = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "findings.md").read_text(encoding="utf-8")
    missing = [key for key in CATALOG if f"`{key}`" not in text]
    assert not missing, f"finding ids missing from docs/findings.md: {missing}"
    constants = [name for name in vars(thresholds) if name.isupper()]
    undocumented = [name for name in constants if name not in text]
    assert not undocumented, f"thresholds missing from docs/findings.md: {undocumented}"
