"""Advice on the demo runs sized and worded from what the trace shows: the XLA-fusion estimate models the runs of
back-to-back element-wise kernels (a fused chain still moves its inputs and outputs) instead of deleting all
element-wise time; a fix already applied (packed, overlapped all-reduce) is not advised again."""


def _fusion(report):
    return next((f for f in report["findings"] if f["id"] == "fusion.elementwise_kernels"), None)


def test_fusion_on_a_healthy_run_is_a_model_well_below_all_element_wise_time(built):
    """input_bound_fixed: 14.8 ms of element-wise kernels in a 64.7 ms step; deleting them all was 1.30x."""
    finding = _fusion(built("input_bound_fixed").report)
    assert finding["speedup_kind"] == "model"
    assert 1.0 < finding["estimated_speedup"] < 1.15
    assert "run of n kernels keeps 1/n of its time" in finding["speedup_basis"]


def test_combined_estimate_of_cpu_placed_op_stays_near_the_measured_fix(built):
    """cpu_placed_op: measured fix 14.89 -> 7.29 ms = 2.04x; with fusion as all element-wise time gone the combined
    figure was 2.70x, a step shorter than the step's GPU work (7.17 ms)."""
    report = built("cpu_placed_op").report
    assert _fusion(report)["speedup_kind"] == "model"
    assert 2.0 < report["summary"]["combined_estimate"]["estimated_speedup"] < 2.4


def test_packed_overlapped_allreduce_is_not_told_to_pack_and_overlap(built):
    """multi_gpu_straggler_fixed packs its gradients (several all-reduces per step) and overlaps them with the last
    backward pass: the remaining exposed all-reduce gets the advice that is left (interconnect, accumulation)."""
    finding = next(
        f for f in built("multi_gpu_straggler_fixed").report["findings"] if f["id"] == "communication.allreduce_exposed"
    )
    assert finding["fix_summary"].startswith("Split and overlapped already")
    assert "all-reduces per step (packed or bucketed gradients)" in finding["fix"]


def test_the_fusion_finding_counts_what_the_kernel_card_calls_fusible_under_xla(built):
    """Review issue 31 D1/D3: the finding's share comes from the Kernels card's classifier
    (analysis.op_types.op_type); for TensorFlow it counts the card's rows XLA would fuse (element-wise, reductions,
    concatenations, gathers: op_types.is_xla_fusible_kernel), since the fix it names is jit_compile."""
    from tb_gpu_advisor.analysis.op_types import is_xla_fusible_kernel

    for name in ("cpu_placed_op", "host_bound", "launch_bound"):
        report = built(name).report
        rows = report["kernels"]
        total = sum(row["total_us"] for row in rows)
        fusible = sum(row["total_us"] for row in rows if is_xla_fusible_kernel(row["name"], row.get("op_name")))
        share = _fusion(report)["evidence"]["metrics"]["elementwise_share_of_kernel_time_pct"]
        assert abs(share - 100.0 * fusible / total) < 0.05, (name, share, 100.0 * fusible / total)
