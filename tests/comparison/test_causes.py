"""A finding gone from the candidate whose cause its trace still shows."""

from tb_gpu_advisor.comparison.causes import cause_still_present
from tb_gpu_advisor.comparison.diff import compare_reports
from tb_gpu_advisor.comparison.render import render_comparison_text

from .reports import host_from_steps


def _candidate(options=(), ops=()):
    return {"configuration": {"tf_data_options": list(options)}, "host_ops": [{"name": name} for name in ops]}


def test_a_tf_data_stage_still_there_is_a_cause_still_present():
    assert cause_still_present("input.sequential_map", _candidate(["prefetch", "sequential map"])) is True
    assert cause_still_present("input.sequential_map", _candidate(["prefetch", "parallel map"])) is False
    assert cause_still_present("input.no_cache", _candidate(["prefetch", "parallel map"])) is True
    assert cause_still_present("input.no_cache", _candidate(["cache", "prefetch"])) is False
    assert cause_still_present("input.no_prefetch", _candidate(["prefetch"])) is False
    assert cause_still_present("input.no_prefetch", _candidate([])) is None  # no tf.data seen: cannot tell


def test_python_callback_ops_still_running_are_a_cause_still_present():
    assert cause_still_present("host.python_function", _candidate(ops=["PyFunc:PyFunc"])) is True
    assert cause_still_present("host.python_function", _candidate(ops=["MatMul:MatMul"])) is None
    assert cause_still_present("launch.tiny_kernels", _candidate(["sequential map"])) is None


def test_the_findings_section_says_no_longer_costs_time():
    base = host_from_steps(
        [10.0, 10.0],
        findings=[
            {"id": "input.sequential_map", "severity": "high", "title": "tf.data map runs one element at a time"}
        ],
    )
    cand = host_from_steps([5.0, 5.0])
    cand["configuration"] = {**(cand.get("configuration") or {}), "tf_data_options": ["prefetch", "sequential map"]}
    comparison = compare_reports(base, cand)
    assert comparison["hosts"][0]["findings"]["resolved"][0]["cause_still_present"] is True
    assert "No longer costs time (the cause is still there): [high] tf.data map runs one element at a time" in " ".join(
        render_comparison_text(comparison).split()
    )
