import re

import pytest

from tb_gpu_advisor.findings.catalog import CATALOG
from tb_gpu_advisor.findings.rules import RULES
from tb_gpu_advisor.findings.finding import (
    CATEGORIES,
    Evidence,
    Finding,
    capped,
    estimated,
    grade,
    ladder,
    limit,
    speedup,
)
from tb_gpu_advisor.report.units import speedup_phrase
from tb_gpu_advisor.whatif.estimate import Estimate, bound, model


def make(severity="high", recoverable_ms=6.0, finding_id="input.gpu_waits_for_input", note=""):
    return Finding(
        id=finding_id,
        severity=severity,
        summary="s",
        evidence=Evidence({"a_ms": 1.0}, {}, {"steps": []}),
        recoverable_ms=recoverable_ms,
        window_ms=10.0,
        speedup_basis="upper bound: b",
        fix_note=note,
    )


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
    assert ladder("x_pct", 7.0, 20.0, 5.0) == {
        "metric": "x_pct",
        "value": 7.0,
        "high": 20.0,
        "medium": 5.0,
        "crossed": "medium",
    }
    assert limit("n", 3, 1, "below", per_step=2) == {
        "metric": "n",
        "value": 3,
        "direction": "below",
        "level": 1,
        "per_step": 2,
    }


def test_json_shape():
    data = make(note="This profile: x.").to_dict()
    assert list(data) == [
        "id",
        "category",
        "severity",
        "title",
        "summary",
        "evidence",
        "estimated_speedup",
        "speedup_kind",
        "recoverable_ms",
        "speedup_basis",
        "overlaps_with",
        "fix_summary",
        "fix",
        "docs",
    ]
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
        assert family in CATEGORIES + ("steps", "environment", "collectives"), key  # collectives: communication
        assert entry.category in CATEGORIES, key
        assert entry.title and entry.fix_summary and entry.fix, key
        assert len(entry.fix_summary) <= 100, key
        for idiom in (entry.jax, *(variant for _, variant in entry.variants)):
            if idiom is not None:
                assert idiom.fix_summary and idiom.fix and idiom.docs and len(idiom.fix_summary) <= 100, key


def test_fixes_are_written_in_the_frameworks_idiom():
    tf = make(finding_id="fusion.elementwise_kernels").to_dict()
    assert "jit_compile=True" in tf["fix"]  # the default framework is unknown: both idioms
    from dataclasses import replace

    finding = make(finding_id="fusion.elementwise_kernels")
    tf = replace(finding, framework="tensorflow").to_dict()
    jax = replace(finding, framework="jax").to_dict()
    both = replace(finding, framework="unknown").to_dict()
    assert "jit_compile" in tf["fix"] and "jax" not in tf["fix"].lower() and "jax" not in tf["fix_summary"].lower()
    assert "jax.jit" in jax["fix"] and "tf." not in jax["fix"] + jax["fix_summary"]
    assert both["fix"].startswith("TensorFlow:\n\n") and "\n\nJAX:\n\n" in both["fix"]
    assert both["fix_summary"].startswith("TensorFlow: ") and " JAX: " in both["fix_summary"]
    assert set(tf["docs"]) | set(jax["docs"]) == set(both["docs"])
    blocked = replace(finding, framework="tensorflow", condition="xla_blocked").to_dict()
    assert "would fail" in blocked["fix"]


def test_pytorch_traces_get_pytorch_fixes():
    from dataclasses import replace

    finding = replace(make(finding_id="fusion.elementwise_kernels"), framework="pytorch").to_dict()
    assert "torch.compile" in finding["fix"] and "jit_compile" not in finding["fix"] and "jax" not in finding["fix"]
    tf32 = replace(make(finding_id="precision.fp32_matmul"), framework="pytorch", condition="tf32_off").to_dict()
    assert "set_float32_matmul_precision" in tf32["fix"] and "off by default in PyTorch" in tf32["fix_summary"]
    for key, entry in CATALOG.items():
        idioms = [entry.pytorch] + [v for c, v in entry.variants if c.startswith("pytorch:")]
        for idiom in filter(None, idioms):
            text = idiom.fix + idiom.fix_summary
            assert "jax" not in text.lower() and not re.search(r"\btf\.", text), key
            assert len(idiom.fix_summary) <= 100 and idiom.docs, key


def test_no_tensorflow_fix_mentions_jax_and_no_jax_fix_mentions_tensorflow_apis():
    for key, entry in CATALOG.items():
        tensorflow = [variant for condition, variant in entry.variants if ":" not in condition]
        assert entry.pytorch is None or entry.jax is not None, key  # every framework-specific entry has JAX too
        for idiom in [entry.idiom("tensorflow")] + tensorflow:
            assert "jax" not in (idiom.fix + idiom.fix_summary).lower(), key
        for condition, variant in entry.variants:
            if condition.startswith("jax:"):
                assert not re.search(r"\btf\.(?!data)", variant.fix + variant.fix_summary), key
        if entry.jax is not None:  # JAX programs may read with tf.data; no other TensorFlow API
            assert not re.search(r"\btf\.(?!data)", entry.jax.fix + entry.jax.fix_summary), key
            assert "jit_compile" not in entry.jax.fix, key
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


def test_speedup_kind_defaults_to_bound_and_is_checked():
    assert make().speedup_kind == "bound"
    assert make().to_dict()["speedup_kind"] == "bound"
    with pytest.raises(ValueError):
        Finding(
            id="input.gpu_waits_for_input",
            severity="high",
            summary="s",
            evidence=Evidence({}, {}),
            recoverable_ms=1.0,
            window_ms=10.0,
            speedup_basis="b",
            speedup_kind="guess",
        )


def test_an_estimate_sets_recoverable_time_kind_and_basis():
    finding = estimated(make(recoverable_ms=6.0), model(10.0, 6.0, "prefetch: max(producer, consumer)"))
    assert finding.speedup_kind == "model"
    assert finding.recoverable_ms == pytest.approx(4.0)  # window 10 ms: 40% of each step removed
    assert finding.estimated_speedup == 1.67
    assert finding.speedup_basis == "prefetch: max(producer, consumer)"
    assert estimated(make(), bound(30.0, 10.0, "b")).estimated_speedup == 3.0
    assert estimated(make(), model(10.0, 12.0, "slower")).estimated_speedup == 1.0  # a fix never slows the model
    with pytest.raises(ValueError):
        Estimate(10.0, 5.0, "maybe", "b")


def test_speedup_is_worded_by_its_kind():
    assert speedup_phrase(1.32, "model") == "about 1.32×"
    assert speedup_phrase(3.5, "bound") == "up to 3.50×"
    assert speedup_phrase(12.345, None) == "up to 12.3×"  # reports written before the key: bounds
    assert speedup_phrase(1.0, "model") is None


def test_a_speedup_at_the_cap_is_not_worded_as_its_value():
    """99% of the step recoverable at most: 100x is where the number stops, not what the what-if said."""
    from tb_gpu_advisor.findings.finding import speedup

    assert speedup(445.0, 446.0) == 100.0
    assert speedup_phrase(100.0, "model") == "over 100×"
    assert speedup_phrase(100.0, "bound") == "up to 100× or more"
    assert speedup_phrase(99.94, "bound") == "up to 99.9×"
