"""The demo's roofline run: a healthy JAX decoder whose profile carries the step's HLO, so each GEMM, attention
and element-wise kernel has its FLOPs and bytes, and nothing else of the library changes."""

from tb_gpu_advisor.demo import demo_timestamp
from tb_gpu_advisor.scenarios import SCENARIOS
from tests.scenarios.scenario_checks import summary


def test_the_roofline_places_the_gemms_attention_and_element_wise_kernels(built):
    report = built("jax_decoder_roofline").report
    assert report["summary"]["bottleneck"] == "none" and report["findings"] == [] and report["notes"] == []
    assert summary(report)["busy"] > 99
    placed = [k for k in report["kernels"] if k["peak_pct"] is not None]
    assert len(placed) == 258 and len(report["kernels"]) == 310  # reductions and the gather have no HLO op
    bounds = {k["name"].split("_")[0]: k["bound"] for k in placed}
    assert bounds == {"sm90": "compute", "cudnn": "compute", "loop": "memory"}
    assert all(0 < k["peak_pct"] <= 100 for k in placed)
    gemm = next(k for k in placed if k["name"].startswith("sm90_xmma_gemm"))
    assert gemm["dtype"] == "bf16" and gemm["compute_roof"] == "matrix"


def test_it_comes_last_so_the_other_demo_runs_keep_their_times():
    assert list(SCENARIOS)[-1] == "jax_decoder_roofline"
    assert demo_timestamp("input_bound") == "2026_01_15_09_30_00"
    assert demo_timestamp("cpu_placed_op_fixed") == "2026_01_15_09_10_00"


def test_the_global_batch_text_is_a_few_items(built):
    """The step program's operands (hundreds of HLO shapes) are listed as five and a count, not all (review G17)."""
    text = built("jax_decoder_roofline").report["configuration"]["examples_per_step"]["reason"]
    assert len(text) < 600 and " more)" in text
