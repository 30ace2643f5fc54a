"""The real H200 PyTorch runs of tests/data/real/h200_heldout (capture.json there): each problem run names its own
cause first (the bottleneck finding and the first finding), with a combined estimate within 25% of the speedup its
fix measured without the profiler; each fix run has no bottleneck where its design is healthy."""

import json

import pytest

from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.pipeline import host_report
from tests.data import REAL

HELDOUT = REAL / "h200_heldout" / "torch"
RUNS = json.loads((HELDOUT / "capture.json").read_text())["runs"]
_CACHE = {}


def _report(run):
    if run not in _CACHE:
        _CACHE[run] = host_report(load_model(str(next((HELDOUT / run).glob("*.pt.trace.json.gz")))))
    return _CACHE[run]


def _measured(problem):
    fix = next(name for name, run in RUNS.items() if run.get("fix_of") == problem)
    return RUNS[problem]["step_ms_unprofiled"] / RUNS[fix]["step_ms_unprofiled"]


@pytest.mark.parametrize(
    "run,cause",
    [
        ("attention_unfused", "fusion.unfused_attention"),  # 52.6 -> 23.9 ms with SDPA: 2.20x
        ("precision_fp32", "precision.fp32_matmul"),  # 222.3 -> 23.0 ms in bf16: 9.67x
        ("allocator_churn", "memory.allocator_churn"),  # 15.3 -> 12.2 ms with the caching allocator: 1.25x
        ("optimizer_per_tensor", "launch.per_tensor_optimizer"),  # 81.2 -> 35.2 ms fused: 2.31x
        ("transfer_pageable", "transfer.pageable_memory"),  # 50.2 -> 16.2 ms pinned: 3.10x
        # 55.9 -> 15.5 ms with 8 workers: 3.62x; the input wait alone (the loader's pace is not in the trace)
        ("input_inline_loader", "input.gpu_waits_for_input"),
    ],
)
def test_problem_run_names_its_cause_first_with_the_measured_speedup(run, cause):
    report = _report(run)
    summary = report["summary"]
    assert summary["bottleneck_finding"] == cause
    assert report["findings"][0]["id"] == cause
    measured = _measured(run)
    estimate = summary["combined_estimate"]["estimated_speedup"]
    assert 0.75 * measured <= estimate <= 1.25 * measured, (estimate, measured)


def test_unfused_attention_counts_every_kernel_between_its_matmuls():
    """Scaling, masking, the f32 softmax and its casts run between the attention's batched matmuls, forward and
    backward: they are the attention's (replaced by one fused kernel), not a separate element-wise fusion."""
    report = _report("attention_unfused")
    ids = [f["id"] for f in report["findings"]]
    assert "fusion.elementwise_kernels" not in ids
    finding = report["findings"][0]
    assert finding["speedup_kind"] == "model"
    # 235.6 ms of the window's 426 ms of kernels, for 13.2 TFLOP of matmuls
    assert 200 < finding["evidence"]["metrics"]["attention_kernel_ms"] < 260
    assert "every kernel from the first to the last matmul" in finding["speedup_basis"]


def test_fp32_attention_and_element_wise_kernels_move_to_16_bits_too():
    """With TF32 off the GEMMs run as fp32 FMA; the fp32 memory-efficient attention (on Tensor Cores) and the
    fp32 element-wise kernels also move to 16 bits under autocast: all are in the model, and no 16-bit GEMM is
    assumed faster than 70% of the bf16 peak."""
    finding = next(f for f in _report("precision_fp32")["findings"] if f["id"] == "precision.fp32_matmul")
    assert finding["speedup_kind"] == "model"
    assert "at most 70% of it" in finding["speedup_basis"]
    assert "32-bit element-wise kernels" in finding["speedup_basis"]


def test_tf32_named_in_the_fix_gets_its_own_figure_below_the_16_bit_estimate():
    """The PyTorch fix opens with TF32 (set_float32_matmul_precision) while the estimate (about 10.3x, measured
    bf16 fix 9.67x) is autocast bf16's: the fix gives TF32 its own model, on the TF32 roof with float32 bytes."""
    finding = next(f for f in _report("precision_fp32")["findings"] if f["id"] == "precision.fp32_matmul")
    note = finding["fix"].split("\n\n", 1)[0]
    assert note.startswith("Per step of the fix: TF32 alone (494.7 TFLOP/s, float32 bytes) about ")
    tf32 = float(note.split("about ", 1)[1].split("×", 1)[0])
    assert 1.5 < tf32 < finding["estimated_speedup"] / 1.5
    assert finding["fix_summary"].startswith("bf16 autocast for the estimate; TF32, off by default in PyTorch")


def test_pinning_is_the_pytorch_estimate_and_overlap_its_ceiling():
    """pin_memory + non_blocking leaves the copy in the step's stream order: the estimate is the pinned rate's model
    (2.78x), the overlap's 4.04x is the ceiling in its basis. The slow rate is the pageable staging's, not the
    link's (the pinned twin moves the same bytes at 55 GB/s): no low-bandwidth finding repeats the time with a
    check-your-PCIe-link fix."""
    report = _report("transfer_pageable")
    finding = report["findings"][0]
    assert finding["speedup_kind"] == "model"
    assert "at most all of their exposed time, up to" in finding["speedup_basis"]
    assert "transfer.low_bandwidth" not in [f["id"] for f in report["findings"]]
    assert "transfer.low_bandwidth" not in [f["id"] for f in _report("input_inline_loader")["findings"]]


@pytest.mark.parametrize("run", ["transfer_pageable", "input_inline_loader"])
def test_a_pageable_copys_own_sync_is_not_a_host_sync_to_remove(run):
    """The only recurring syncs are the cudaStreamSynchronize each blocking `.to(dev)` of pageable memory issues
    inside its aten::copy_: the copy's wait, which the pageable finding fixes (pin, non_blocking). The program has
    no torch.cuda.synchronize() or .item() to remove."""
    assert "sync.host_syncs_in_step" not in [f["id"] for f in _report(run)["findings"]]


def test_sync_idle_leaves_the_input_wait_to_the_input_finding():
    """The inline loader: after each step's sync the host loads the next batch; that idle is the input wait's."""
    report = _report("input_inline_loader")
    assert report["summary"]["bottleneck_finding"] == "input.gpu_waits_for_input"
    sync = next((f for f in report["findings"] if f["id"] == "sync.host_syncs_in_step"), None)
    assert sync is None or sync["evidence"]["metrics"]["idle_after_sync_pct"] < 2


@pytest.mark.parametrize("run", ["attention_sdpa", "precision_bf16", "allocator_cached"])
def test_fix_runs_have_no_false_bottleneck(run):
    assert _report(run)["summary"]["bottleneck"] == "none"


@pytest.mark.parametrize("run", ["precision_bf16", "attention_sdpa", "allocator_cached", "transfer_pinned"])
def test_cudnn_attention_kernels_named_f16_read_as_the_bf16_their_ops_record(run):
    """cuDNN names its bf16 SDPA kernels `..._f16_...`; their op (aten::_scaled_dot_product_cudnn_attention) records
    BFloat16 inputs. Calls outside any recorded op take the type the same kernel's other calls record."""
    configuration = _report(run)["configuration"]
    assert configuration["precision"] == "bf16"
    assert "fp16" not in configuration["matmul_dtype_pct"]


def test_fp32_memory_efficient_attention_is_judged_on_the_3xtf32_roof():
    """PyTorch's fp32 memory-efficient attention (CUTLASS fmha_cutlassF/B_f32) multiplies with three TF32 products
    (OpMultiplyAddFastF32): its roof is a third of the 494.7 TFLOP/s TF32 peak, not the TF32 peak itself."""
    rows = [
        k for k in _report("precision_fp32")["kernels"] if k["name"].startswith("fmha_cutlass") and k["roof_tflops"]
    ]
    assert rows and all(k["roof_tflops"] == 164.9 for k in rows)


@pytest.mark.parametrize("run", sorted(RUNS))
def test_verdict_and_badges_use_one_word_per_kind(run):
    """The verdict's share is what its finding's fix recovers ("recoverable", not the cause's share of the step:
    transfer_pageable's copies take 75% of the step, pinning recovers about 64%), in the word of its badge: a bound
    "up to", a model "about"; the joint figure likewise by its own kind."""
    report = _report(run)
    summary = report["summary"]
    found = {f["id"]: f for f in report["findings"]}
    top = found.get(summary["bottleneck_finding"])
    if top is not None and "% of each step recoverable)" in summary["verdict"]:
        word = "about" if top["speedup_kind"] == "model" else "up to"
        assert f"({word} " in summary["verdict"], (summary["verdict"], top["speedup_kind"])
    combined = summary["combined_estimate"]
    if combined and " together: " in summary["verdict"]:
        word = "about" if combined["speedup_kind"] == "model" else "up to"
        assert f" together: {word} " in summary["verdict"], (summary["verdict"], combined["speedup_kind"])
    if run == "transfer_pageable":
        assert "(about 64% of each step recoverable)" in summary["verdict"]


def test_small_kernels_of_a_per_tensor_optimizer_name_the_optimizer_not_torch_compile_of_the_model():
    """The short and element-wise kernels are the for-loop Adam's (launched inside `Optimizer.step#...`, by Kineto's
    correlation ids): torch.compile(model) does not touch them, so both fixes name the optimizer's fused/foreach
    implementation. The fused side's few kernels keep their own fixes."""
    found = {f["id"]: f for f in _report("optimizer_per_tensor")["findings"]}
    for finding_id in ("launch.tiny_kernels", "fusion.elementwise_kernels"):
        finding = found[finding_id]
        assert finding["fix_summary"].startswith("Fuse the optimizer, not the model"), finding_id
        assert "fused=True" in finding["fix"] and "torch.compile(model)" not in finding["fix_summary"]
        assert finding["evidence"]["metrics"]["optimizer_step_share_pct"] > 50
    fused = {f["id"]: f for f in _report("optimizer_fused")["findings"]}
    assert all(not f["fix_summary"].startswith("Fuse the optimizer") for f in fused.values())
