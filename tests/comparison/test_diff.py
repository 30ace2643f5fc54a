import json

import pytest

from tb_gpu_advisor.comparison.diff import compare_reports
from tb_gpu_advisor.files.discovery import resolve_target
from tb_gpu_advisor.pipeline import run_report
from tb_gpu_advisor.testing.pairs import EXPECTED_DRIVER, PAIRS
from tb_gpu_advisor.vocabulary import in_sentence
from tests.data import real_trace

from .reports import host_from_steps

REAL_PAIR = ("tf221_cpu_keras_input_bound.xplane.pb", "tf221_cpu_keras_input_fixed.xplane.pb")


@pytest.fixture(scope="module")
def real_pair():
    return [run_report(*resolve_target(str(real_trace(name)))) for name in REAL_PAIR]


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_the_fix_is_faster_and_named(pair_reports, pair):
    reports = pair_reports[pair]
    comparison = compare_reports(reports["problem"], reports["fixed"])
    host = comparison["hosts"][0]
    assert host["change"] == "faster"
    assert host["step_time_ms"]["mean"]["significant"]
    assert host["driver"]["category"] == EXPECTED_DRIVER[pair]
    assert host["driver"]["direction"] == "fell"
    assert host["speedup"] > 3
    assert comparison["verdict"].startswith(f"{host['speedup']:.2f}× faster")
    assert f"{in_sentence(host['driver']['label'])} fell from" in comparison["verdict"]
    json.dumps(comparison, allow_nan=False)


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_the_reverse_is_slower_and_names_the_same_category(pair_reports, pair):
    reports = pair_reports[pair]
    host = compare_reports(reports["fixed"], reports["problem"])["hosts"][0]
    assert host["change"] == "slower"
    assert host["driver"]["category"] == EXPECTED_DRIVER[pair]
    assert host["driver"]["direction"] == "rose"
    mean = host["step_time_ms"]["mean"]
    assert host["verdict"].startswith(f"{mean['candidate'] / mean['baseline']:.2f}× slower")


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_same_vs_same_is_within_noise(pair_reports, pair):
    reports = pair_reports[pair]
    for other in (reports["problem"], reports["problem_again"]):
        comparison = compare_reports(reports["problem"], other)
        assert comparison["hosts"][0]["change"] == "within_noise"
        assert comparison["hosts"][0]["driver"] is None
        assert comparison["verdict"].startswith("Within noise")


def test_fused_kernels_replace_the_tiny_ones_gone(pair_reports):
    reports = pair_reports["launch"]
    kernels = compare_reports(reports["problem"], reports["fixed"])["hosts"][0]["kernels"]
    assert kernels["basis"] == "per_step"
    assert kernels["counts"] == {"new": 0, "fused": 4, "gone": 8, "faster": 0, "slower": 0, "unchanged": 0}
    assert {k["name"] for k in kernels["fused"]} == {f"fused_layer_block_{i}" for i in range(4)}
    gone = kernels["gone"][0]
    # 200 kernels of 3 us a step over 8 names: 25 a step each.
    assert gone["baseline_us"] == pytest.approx(75.0) and gone["candidate_us"] is None
    assert gone["baseline_occurrences"] == 16 * 25


def test_gpu_busy_rises_when_the_launch_overhead_goes(pair_reports):
    reports = pair_reports["launch"]
    busy = compare_reports(reports["problem"], reports["fixed"])["hosts"][0]["gpu_busy_pct"]
    assert busy["baseline"] < 20 < 80 < busy["candidate"]
    assert busy["delta_points"] == pytest.approx(busy["candidate"] - busy["baseline"], abs=0.01)
    assert busy["per_step"]["significant"]


def test_real_input_bound_vs_fixed(real_pair):
    bound, fixed = real_pair
    comparison = compare_reports(bound, fixed)
    host = comparison["hosts"][0]
    mean = host["step_time_ms"]["mean"]
    assert mean["baseline"] == pytest.approx(83.42, abs=0.01)
    assert mean["candidate"] == pytest.approx(38.43, abs=0.01)
    assert host["step_time_ms"]["baseline"]["count"] == host["step_time_ms"]["candidate"]["count"] == 21
    assert host["change"] == "faster" and mean["ci_high"] < 0
    assert host["driver"]["category"] == "input_wait"
    assert comparison["verdict"].startswith("2.17× faster")
    assert "input wait fell from 77.12 ms to 33.45 ms per step" in comparison["verdict"]
    assert host["gpu_busy_pct"]["delta_points"] is None
    assert host["kernels"]["counts"] == {"new": 0, "fused": 0, "gone": 0, "faster": 0, "slower": 0, "unchanged": 0}
    assert [f["id"] for f in host["findings"]["resolved"]] == ["input.sequential_map", "input.no_prefetch"]
    # the parallel map now waits on its 2-thread pool: the next lever is the pool's size
    assert [f["id"] for f in host["findings"]["new"]] == ["input.map_pool_saturated"]


def test_real_reverse_and_same(real_pair):
    bound, fixed = real_pair
    assert compare_reports(fixed, bound)["hosts"][0]["change"] == "slower"
    same = compare_reports(bound, bound)["hosts"][0]
    assert same["change"] == "within_noise"
    assert same["step_time_ms"]["mean"]["ci_low"] < 0 < same["step_time_ms"]["mean"]["ci_high"]


def test_small_significant_change_below_the_floor_is_within_noise():
    base = host_from_steps([100.0, 100.1, 99.9, 100.0] * 5)
    cand = host_from_steps([99.5, 99.6, 99.4, 99.5] * 5)
    host = compare_reports(base, cand)["hosts"][0]
    assert host["step_time_ms"]["mean"]["significant"]
    assert host["change"] == "within_noise"


def test_noisy_change_is_within_noise():
    base = host_from_steps([80.0, 120.0, 90.0, 110.0])
    cand = host_from_steps([85.0, 125.0, 95.0, 115.0])
    host = compare_reports(base, cand)["hosts"][0]
    assert host["change"] == "within_noise"
    assert host["verdict"].startswith("Within noise: mean step 100.00 ms → 105.00 ms (+5.0%, 95% CI")


def test_single_step_sides_decide_on_the_point_estimate_and_say_so():
    host = compare_reports(host_from_steps([100.0]), host_from_steps([50.0]))["hosts"][0]
    assert host["change"] == "faster"
    assert "noise unknown" in host["verdict"]
    assert any("single step" in note for note in host["notes"])


def test_without_steps_the_change_is_unknown():
    base = host_from_steps([], busy=40.0)
    cand = host_from_steps([10.0, 10.0], busy=80.0)
    host = compare_reports(base, cand)["hosts"][0]
    assert host["change"] == "unknown" and host["driver"] is None and host["speedup"] is None
    assert host["verdict"] == "Step time cannot be compared: a side has no step markers; GPU busy 40.0% → 80.0%."


def test_kernels_faster_slower_unchanged_per_step():
    kernels_base = [("gemm", 1000.0, 10), ("relu", 100.0, 10), ("copy", 50.0, 10), ("old", 10.0, 1)]
    kernels_cand = [("gemm", 1000.0, 20), ("relu", 300.0, 20), ("copy", 102.0, 20), ("new", 5.0, 1)]
    # Candidate has twice the steps: per step gemm halves, relu rises 50%, copy stays within 5%.
    base = host_from_steps([10.0] * 2, kernels=kernels_base)
    cand = host_from_steps([10.0] * 4, kernels=kernels_cand)
    kernels = compare_reports(base, cand)["hosts"][0]["kernels"]
    assert kernels["counts"] == {"new": 1, "fused": 0, "gone": 1, "faster": 1, "slower": 1, "unchanged": 1}
    assert kernels["faster"][0] == {
        "name": "gemm",
        "op_name": None,
        "basis": "per_step",
        "baseline_us": 500.0,
        "candidate_us": 250.0,
        "delta_us": -250.0,
        "delta_pct": -50.0,
        "baseline_occurrences": 10,
        "candidate_occurrences": 20,
    }
    assert kernels["slower"][0]["name"] == "relu" and kernels["slower"][0]["delta_pct"] == 50.0


def test_a_kernel_run_for_a_new_op_is_new_work_not_a_slowdown_of_its_namesake():
    """The fix moved a MatMul from the CPU to the GPU: the candidate runs the same cuBLAS kernel for that new op
    (a larger grid) beside the classifier's. Matched on name and op (then launch shape), the classifier's
    kernel is unchanged and the new op's kernel is new work; matched by name alone it read 2 us -> 32.6 us."""
    sgemm = "sm90_sgemm_128x64_nn"
    base = host_from_steps([10.0] * 5, kernels=[(sgemm, 10.0, 5, "model/classifier/MatMul", [1, 2, 1], [256, 1, 1])])
    cand = host_from_steps(
        [10.0] * 5,
        kernels=[
            (sgemm, 10.0, 5, "model/classifier/MatMul", [1, 2, 1], [256, 1, 1]),
            (sgemm, 152.75, 5, "model/cross/MatMul", [8, 2, 1], [256, 1, 1]),
        ],
    )
    kernels = compare_reports(base, cand)["hosts"][0]["kernels"]
    assert kernels["counts"] == {"new": 1, "fused": 0, "gone": 0, "faster": 0, "slower": 0, "unchanged": 1}
    assert (kernels["new"][0]["op_name"], kernels["new"][0]["candidate_us"]) == ("model/cross/MatMul", 30.55)


def test_kernels_match_by_op_across_a_new_launch_shape_then_by_name():
    """A new batch size changes a kernel's grid: still the same op's kernel (slower per step, not gone + new);
    an op renamed between runs: still the same kernel by name."""
    base = host_from_steps(
        [10.0] * 2,
        kernels=[
            ("gemm", 100.0, 2, "dense/MatMul", [4, 1, 1], [128, 1, 1]),
            ("relu", 10.0, 2, "relu_1", [1, 1, 1], [128, 1, 1]),
        ],
    )
    cand = host_from_steps(
        [10.0] * 2,
        kernels=[
            ("gemm", 200.0, 2, "dense/MatMul", [8, 1, 1], [128, 1, 1]),
            ("relu", 10.0, 2, "relu_2", [1, 1, 1], [128, 1, 1]),
        ],
    )
    kernels = compare_reports(base, cand)["hosts"][0]["kernels"]
    assert kernels["counts"] == {"new": 0, "fused": 0, "gone": 0, "faster": 0, "slower": 1, "unchanged": 1}
    assert (kernels["slower"][0]["op_name"], kernels["slower"][0]["delta_pct"]) == ("dense/MatMul", 100.0)


def test_kernels_launched_more_often_per_step_are_compared_per_launch():
    # gemm runs twice a step in the candidate (2 micro-batches) at the same 100 us a launch: not slower.
    # relu runs twice a step too, each launch 30% faster; attention runs as often, 20% slower.
    base = host_from_steps([10.0] * 4, kernels=[("gemm", 400.0, 4), ("relu", 40.0, 4), ("attention", 80.0, 4)])
    cand = host_from_steps([20.0] * 4, kernels=[("gemm", 800.0, 8), ("relu", 56.0, 8), ("attention", 96.0, 4)])
    kernels = compare_reports(base, cand)["hosts"][0]["kernels"]
    assert kernels["counts"] == {"new": 0, "fused": 0, "gone": 0, "faster": 1, "slower": 1, "unchanged": 1}
    relu, attention = kernels["faster"][0], kernels["slower"][0]
    assert (relu["name"], relu["basis"], relu["baseline_us"], relu["candidate_us"]) == ("relu", "per_launch", 10.0, 7.0)
    assert (attention["basis"], attention["delta_pct"]) == ("per_step", 20.0)


def test_new_fused_kernels_replacing_gone_ones_are_fused_not_new():
    base = host_from_steps(
        [10.0] * 2, kernels=[("EigenMetaKernel_add", 50.0, 20), ("EigenMetaKernel_mul", 50.0, 20), ("gemm", 100.0, 2)]
    )
    cand = host_from_steps(
        [8.0] * 2, kernels=[("loop_add_multiply_fusion", 30.0, 2), ("gemm", 100.0, 2), ("my_custom_kernel", 4.0, 2)]
    )
    kernels = compare_reports(base, cand)["hosts"][0]["kernels"]
    assert [k["name"] for k in kernels["fused"]] == ["loop_add_multiply_fusion"]
    assert [k["name"] for k in kernels["new"]] == ["my_custom_kernel"]
    # Without a kernel gone, a fusion replaces nothing: it is new.
    alone = host_from_steps(
        [8.0] * 2,
        kernels=[
            ("EigenMetaKernel_add", 50.0, 20),
            ("EigenMetaKernel_mul", 50.0, 20),
            ("gemm", 100.0, 2),
            ("fused_bias_relu", 3.0, 2),
        ],
    )
    assert [k["name"] for k in compare_reports(base, alone)["hosts"][0]["kernels"]["new"]] == ["fused_bias_relu"]


def test_kernels_with_several_launch_configs_are_summed_by_name():
    base = host_from_steps([10.0], kernels=[("k", 10.0, 1), ("k", 30.0, 2)])
    cand = host_from_steps([10.0], kernels=[("k", 20.0, 3)])
    slower_or_faster = compare_reports(base, cand)["hosts"][0]["kernels"]["faster"]
    assert slower_or_faster[0]["baseline_us"] == 40.0 and slower_or_faster[0]["baseline_occurrences"] == 3


def test_findings_are_matched_on_id():
    def finding(key, severity="high"):
        return {"id": key, "severity": severity, "title": f"title {key}", "summary": "s"}

    base = host_from_steps([10.0, 10.0], findings=[finding("GA1"), finding("GA2")])
    cand = host_from_steps([10.0, 10.0], findings=[finding("GA2", "low"), finding("GA3")])
    findings = compare_reports(base, cand)["hosts"][0]["findings"]
    assert findings["resolved"] == [
        {"id": "GA1", "severity": "high", "title": "title GA1", "cause_still_present": None}
    ]
    assert findings["new"] == [{"id": "GA3", "severity": "high", "title": "title GA3"}]
    assert findings["persisting"] == [
        {"id": "GA2", "severity": "low", "title": "title GA2", "baseline_severity": "high"}
    ]
    assert (findings["baseline_count"], findings["candidate_count"]) == (2, 2)


def test_hosts_are_matched_by_name_in_multi_host_runs():
    def run(*names):
        return {"run": "r", "hosts": [host_from_steps([10.0, 10.0], host=n) for n in names], "errors": []}

    comparison = compare_reports(run("a", "b"), run("b", "c"))
    assert [(h["baseline_host"], h["candidate_host"]) for h in comparison["hosts"]] == [("b", "b")]
    assert comparison["unmatched_hosts"] == {"baseline": ["a"], "candidate": ["c"]}
    assert comparison["verdict"].startswith("Within noise")
    assert compare_reports(run("a", "b"), run("a", "b"))["verdict"].startswith("a: Within noise")
    assert compare_reports(run("a"), run("z"))["hosts"][0]["candidate_host"] == "z"
    assert compare_reports(run("a", "b"), run("c", "d"))["verdict"].startswith("Nothing to compare")


def test_accepts_host_reports_and_keeps_side_errors():
    base = {
        "run": "r1",
        "hosts": [host_from_steps([10.0, 11.0])],
        "errors": [{"host": "bad", "file": "/bad.xplane.pb", "error": "file is empty"}],
    }
    comparison = compare_reports(base, host_from_steps([10.0, 11.0]))
    assert comparison["baseline"] == {"run": "r1", "hosts": ["h"], "errors": base["errors"]}
    assert comparison["candidate"] == {"run": None, "hosts": ["h"], "errors": []}
    assert comparison["kind"] == "comparison" and comparison["schema_version"] == 1


def test_a_real_large_speedup_has_an_interval_above_minus_100_percent():
    """tf_eager_eager -> tf_eager_function (17x; 36x in an earlier capture, noisy eager steps): the step-time intervals once read
    "-117.3% to -77.2%" (mean) and "-126.9%" (median)."""
    from tb_gpu_advisor.comparison.diff import compare_reports
    from tb_gpu_advisor.files.discovery import resolve_target
    from tb_gpu_advisor.pipeline import run_report

    pair = [
        run_report(*resolve_target(f"tests/data/real/cpu_pairs/tf_eager_{side}.xplane.pb"))
        for side in ("eager", "function")
    ]
    host = compare_reports(*pair)["hosts"][0]
    for statistic in ("mean", "median"):
        diff = host["step_time_ms"][statistic]
        assert -100 < diff["ci_low_pct"] <= diff["delta_pct"] <= diff["ci_high_pct"] < 0
    assert "95% CI -95.0% to -93.4%" in host["verdict"]


def test_gpu_busy_leads_with_compute_busy_when_copies_fill_the_gaps():
    # Before: kernels 77.6% of the time, copies fill the rest (99.9% with copies); after: kernels 99.4%.
    from tb_gpu_advisor.comparison.render import gpu_busy_change

    base, cand = host_from_steps([10.0] * 8, busy=99.9), host_from_steps([8.0] * 8, busy=99.8)
    base["summary"].update(gpu_kernel_busy_pct=77.6, gpu_compute_busy_pct=99.9)
    cand["summary"].update(gpu_kernel_busy_pct=99.4, gpu_compute_busy_pct=99.8)
    busy = compare_reports(base, cand)["hosts"][0]["gpu_busy_pct"]
    assert busy["compute"] == {
        "baseline": 77.6,
        "candidate": 99.4,
        "delta_points": 21.8,
        "with_copies": {"baseline": 99.9, "candidate": 99.8},
        "copies_shown_apart": True,
    }
    assert gpu_busy_change(busy) == "GPU compute busy 77.6% → 99.4% (+21.8 points; with copies 99.9% → 99.8%)"
    # copies adding under a point on both sides: the plain figure, as analyze's header
    base["summary"].update(gpu_kernel_busy_pct=99.5)
    cand["summary"].update(gpu_kernel_busy_pct=99.6)
    busy = compare_reports(base, cand)["hosts"][0]["gpu_busy_pct"]
    assert gpu_busy_change(busy) == "GPU busy 99.9% → 99.8% (-0.1 points)"
