"""No advice that the trace shows applied, on the real H200 runs (tests/data/real/h200, h200_heldout): the fix of a
problem run is its own; the fix runs are never told to do what they do already (DataLoader workers, pinned
asynchronous copies, fused optimizers, torch.compile, CUDA graphs), and the words are the framework's."""

import functools
import re

import pytest

from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.pipeline import host_report
from tests.data import REAL


@functools.cache
def _report(run):
    folder = REAL / run
    path = next(iter(sorted(folder.rglob("*.xplane.pb")) + sorted(folder.glob("*.pt.trace.json.gz"))))
    return host_report(load_model(str(path)))


def _found(run):
    return {f["id"]: f for f in _report(run)["findings"]}


def _fixes(run):
    return " ".join(f"{f['fix_summary']} {f['fix']}" for f in _report(run)["findings"])


def test_worker_loader_is_not_told_to_use_workers_or_a_fused_optimizer():
    """8 DataLoader workers (`_MultiProcessingDataLoaderIter`), pinned batches, fused AdamW (`aten::_fused_adamw_`):
    none of them is advised; the host time before the first kernel is the loop's (the copy, the forward's ops),
    left to the host finding, not called batch preparation."""
    found = _found("h200_heldout/torch/input_worker_loader")
    assert "input.host_batch_prep" not in found
    fixes = _fixes("h200_heldout/torch/input_worker_loader")
    assert "num_workers" not in fixes and "fused=True" not in fixes
    assert "fused or foreach already" in found["host.gpu_idle_host_busy"]["fix"]
    assert _report("h200_heldout/torch/input_worker_loader")["summary"]["batch_prep_pct"] is None


def test_inline_loader_is_still_told_to_use_workers():
    """The problem run of the pair (num_workers=0) keeps its fix."""
    assert "num_workers=8" in _fixes("h200_heldout/torch/input_inline_loader")


def test_compiled_run_gets_no_loader_compile_or_optimizer_advice():
    """torch.compile(mode="reduce-overhead") with its optimizer update compiled (Inductor's `triton_for_` kernels),
    no DataLoader: the compiled region starts each step (no batch preparation before it), nothing advises
    compiling, CUDA graphs, a DataLoader or a fused optimizer, and the fix does not call the compiled plain SGD
    update a fused optimizer."""
    found = _found("h200/torch/launch_compiled")
    assert "input.host_batch_prep" not in found
    fixes = _fixes("h200/torch/launch_compiled")
    for applied in (
        "DataLoader(",
        "num_workers",
        "model = torch.compile",
        'mode="reduce-overhead")   #',
        "fused=True",
        "compile the optimizer",
    ):
        assert applied not in fixes, applied
    assert found["host.gpu_idle_host_busy"]["fix_summary"].startswith(
        "Compiled already (torch.compile), optimizer fused or compiled"
    )


def test_fused_optimizer_run_is_not_told_to_fuse_its_optimizer():
    """Adam(fused=True) over 400 tensors: its multi-tensor kernels are in the trace. The step is still eager
    (1,220 kernels per step, 35.2 ms measured without the profiler for ~5 ms of GPU work), so host and launch advice
    stays, without the optimizer."""
    found = _found("h200_heldout/torch/optimizer_fused")
    assert "launch.per_tensor_optimizer" not in found
    fixes = _fixes("h200_heldout/torch/optimizer_fused")
    assert "fused=True" not in fixes and "fused optimizers" not in fixes
    assert "model = torch.compile(model)" in found["host.gpu_idle_host_busy"]["fix"]


def test_per_tensor_optimizer_run_is_told_to_fuse_it_without_a_warm_up_caveat():
    """foreach=False: fused=True is the fix. Its 4.11 ms of warm-up is 0.5% of the steps' time: a note, the
    confidence stays high and no finding is told to recapture."""
    report = _report("h200_heldout/torch/optimizer_per_tensor")
    assert report["summary"]["confidence"]["level"] == "high"
    assert any(note.startswith("Warm-up inside the captured steps: 4.11 ms") for note in report["notes"])
    found = _found("h200_heldout/torch/optimizer_per_tensor")
    assert "fused=True" in found["launch.per_tensor_optimizer"]["fix_summary"]
    assert not any(f["fix_summary"].startswith("Recapture") for f in found.values())


def test_per_tensor_optimizer_fix_names_the_optimizer_class_the_trace_shows():
    """The trace says `Optimizer.step#Adam.step`: the fix keeps Adam (AdamW would change the weight-decay math)."""
    finding = _found("h200_heldout/torch/optimizer_per_tensor")["launch.per_tensor_optimizer"]
    assert "torch.optim.Adam(model.parameters(), ..., fused=True)" in finding["fix"]
    assert "torch.optim.AdamW" not in finding["fix_summary"] + finding["fix"]


def test_pinned_copy_is_not_told_to_pin_or_to_copy_asynchronously():
    """`Memcpy HtoD (Pinned -> Device)` from `.to(dev, non_blocking=True)`: the fix left is when the copy is issued
    (or keeping the unchanging table on the GPU); the pageable run of the pair is still told to pin."""
    copy = _found("h200_heldout/torch/transfer_pinned")["transfer.input_copy_in_step"]
    assert copy["fix_summary"].startswith("Pinned already")
    assert "pin_memory" not in copy["fix_summary"] and "non_blocking" not in copy["fix_summary"]
    assert "pin_memory=True" in _found("h200_heldout/torch/transfer_pageable")["transfer.pageable_memory"]["fix"]


def test_jax_pinned_copy_leads_with_keeping_unchanging_data_on_the_device():
    """jax/transfer_pinned sends the same 256 MiB from pinned host memory every step: the fix leads with putting
    an unchanging array on the device once, as the PyTorch twin's does, then the batch one step ahead."""
    copy = _found("h200/jax/transfer_pinned")["transfer.input_copy_in_step"]
    assert copy["fix_summary"].startswith("device_put unchanging arrays once, before the loop")
    assert copy["fix"].index("once, before the loop") < copy["fix"].index("transfer batch n+1")
    assert "pin_memory" not in copy["fix"] and "torch" not in copy["fix"]


def test_jax_command_buffers_are_not_told_about_graph_breaks():
    """launch_jit: XLA replays the jitted step as command buffers; graph breaks are torch.compile's."""
    fixes = _fixes("h200/jax/launch_jit")
    assert "graph break" not in fixes.lower() and "torch" not in fixes.lower()
    launch = _found("h200/jax/launch_jit")["launch.gpu_starved_by_launches"]
    assert launch["fix_summary"].startswith("XLA replays the step as command buffers already")


@pytest.mark.parametrize("run", ["h200/jax/launch_jit"])
def test_gemm_fix_names_only_the_causes_its_gemms_show(run):
    """Padding only where a flagged GEMM's dims are misaligned, a larger batch only where one is small (or its
    calls too short to reach the roof), bf16 only for f32 inputs; on these runs every flagged GEMM is aligned
    (multiples of 64). launch_eager's and the optimizer runs' 2-5 µs GEMMs are no longer flagged
    (test_h200_twins)."""
    finding = _found(run)["kernel.gemm_below_roof"]
    reasons = {reason for item in finding["evidence"]["metrics"]["per_kernel"] for reason in item["reasons"]}
    summary = finding["fix_summary"]
    assert ("Pad GEMM" in summary) == any(reason.startswith("dims_not_multiple") for reason in reasons)
    assert ("raise the batch" in summary.lower()) == bool(reasons & {"small_dims", "small_work_per_call"})
    assert ("bf16" in summary) == bool(reasons & {"f32_inputs", "f64_inputs"})
    assert "Pad GEMM" not in summary


@pytest.mark.parametrize(
    "run",
    ["h200/jax/launch_jit", "h200_heldout/torch/optimizer_per_tensor", "h200_heldout/torch/optimizer_fused"],
)
def test_gemms_that_do_not_fill_the_gpu_get_no_precision_advice(run):
    """launch_jit's Triton f32 dots (8-17 µs, 128 blocks on 132 SMs) and the optimizer runs' 64x256x256 GEMMs
    (2-5 µs, 16-64 blocks) are held back by their grid and per-call latency: neither bf16 nor TF32 is advised for
    them, and no precision model enters the combined estimate."""
    report = _report(run)
    found = {f["id"]: f for f in report["findings"]}
    assert "precision.fp32_matmul" not in found
    gemm = found.get("kernel.gemm_below_roof")
    if gemm is not None:
        rows = {row["name"]: row for row in report["kernels"]}
        for item in gemm["evidence"]["metrics"]["per_kernel"]:
            grid = rows[item["kernel"]]["grid"]
            assert grid[0] * grid[1] * grid[2] >= 132, item
            assert "f32_inputs" not in item["reasons"], item
        assert "bf16" not in gemm["fix_summary"]
    combined = report["summary"]["combined_estimate"] or {}
    assert "precision.fp32_matmul" not in combined.get("finding_ids", [])


def test_pageable_copy_without_a_dataloader_is_not_told_to_configure_one():
    """transfer_pageable copies a plain host tensor with `.to(dev)` each step and runs no DataLoader: the fix pins
    (or keeps on the GPU) the program's own tensor; the input_inline_loader run, which has a DataLoader, keeps
    DataLoader(pin_memory=True)."""
    finding = _found("h200_heldout/torch/transfer_pageable")["transfer.pageable_memory"]
    assert "DataLoader(" not in finding["fix_summary"] + finding["fix"]
    assert "pin_memory=True" in finding["fix"] and "non_blocking=True" in finding["fix"]
    loader = _found("h200_heldout/torch/input_inline_loader")["transfer.pageable_memory"]["fix"]
    assert "DataLoader(" in loader and "pin_memory=True" in loader


def test_worker_loader_stall_is_a_wait_not_host_work():
    """In 5 of 8 steps one backward autograd node spans 5-6.5 ms with ~0.25 ms traced inside it, next to the
    DataLoader's pin-memory thread's calls: a stall, named as such first, with no torch.compile advice in its fix,
    the host finding keeps only the rest of the host time, and the confidence drops (the cause is inferred)."""
    report = _report("h200_heldout/torch/input_worker_loader")
    first = report["findings"][0]
    assert first["id"] == "host.op_stall"
    assert "pin-memory thread" in first["summary"] and "a wait, not slow host work" in first["summary"]
    assert "NativeLayerNormBackward0" in first["summary"] and "PowBackward0" in first["summary"]
    assert "torch.compile(" not in first["fix"] and "compile" not in first["fix_summary"].split(";")[0]
    host = _found("h200_heldout/torch/input_worker_loader")["host.gpu_idle_host_busy"]
    assert host["evidence"]["metrics"]["host_exposed_pct"] < first["evidence"]["metrics"]["stall_exposed_pct"]
    assert first["evidence"]["metrics"]["stall_exposed_pct"] > 25
    assert report["summary"]["confidence"]["level"] == "medium"
    assert "The first finding rests on inference" in report["summary"]["confidence"]["reasons"][0]


def test_a_stall_reads_as_a_wait_in_the_verdict_and_its_idle_in_the_words_of_the_time_line():
    """input_worker_loader's verdict names the stall (finding #1 says "a wait, not slow host work"): it is
    host_blocked, "Host-blocked", never "Host-bound"; the Time line's idle and the Idle line's untraced host time
    are the same 13.1% and say "idle" in both."""
    from tb_gpu_advisor.report.summary_section import idle_lines

    report = _report("h200_heldout/torch/input_worker_loader")
    summary = report["summary"]
    assert summary["bottleneck"] == "host_blocked" and summary["bottleneck_finding"] == "host.op_stall"
    assert summary["verdict"].startswith("Host-blocked: the step thread stalls inside an operator call")
    assert summary["breakdown_pct"]["idle"] == pytest.approx(13.1, abs=0.05)
    (line,) = idle_lines(report["idle_attribution"], report["trace_format"])
    assert "idle (host not traced) 13.1%" in line


def test_runs_without_stalls_name_none():
    """The inline-loader twin (the same model, no pin-memory thread) has no op stall."""
    assert "host.op_stall" not in _found("h200_heldout/torch/input_inline_loader")


def test_low_certainty_batch_prep_says_why_it_is_held_at_medium():
    """jax/input_bound: the host is barely traced in the 25.7 ms before each step, so batch preparation is an
    inference: the finding is medium and says so, not "[medium] ... how sure: low"."""
    finding = _found("h200/jax/input_bound")["input.host_batch_prep"]
    assert finding["severity"] == "medium" and finding["evidence"]["metrics"]["certainty"] == "low"
    assert "how sure: low" not in finding["summary"]
    assert finding["summary"].endswith("is inferred, as the trace shows little host work there, so at most medium).")


def test_the_verdict_share_is_its_own_finding_and_the_joint_figure_follows():
    """input_worker_loader (Hopper review 2): the verdict's "(up to N% of each step recoverable)" is the stall's own
    share (finding #1), never the joint figure of three fixes, which its own sentence carries; the share of the
    step its speedup is set against (the one without the profiler's own host time: 32.6%, not the captured 31%,
    review finalA 3)."""
    report = _report("h200_heldout/torch/input_worker_loader")
    verdict, first = report["summary"]["verdict"], report["findings"][0]
    assert round(first["evidence"]["metrics"]["stall_exposed_pct"]) == 31
    assert "so it is 32.6% of that step" in first["summary"] and first["estimated_speedup"] == 1.48
    assert "(up to 33% of each step recoverable)" in verdict and "57%" not in verdict
    assert "Fixing findings #1, " in verdict and "together: up to 2.35× faster" in verdict


_UNPROFILED = {  # the step without the profiler's own host time, in the Note and in every finding that uses it
    "h200/torch/launch_eager": "20.53 ms",
    "h200/torch/launch_compiled": "4.35 ms",
    "h200_heldout/torch/allocator_churn": "14.39 ms",
    "h200_heldout/torch/input_worker_loader": "13.92 ms",
    "h200_heldout/torch/optimizer_fused": "37.12 ms",
    "h200_heldout/torch/optimizer_per_tensor": "78.29 ms",
}


@pytest.mark.parametrize("run", sorted(_UNPROFILED))
def test_one_unprofiled_step_per_report(run):
    """Review finalA 2: the Note and the findings give one step without the profiler's own host time (the Note
    said "shorter by about 1.3 ms" of allocator_churn's 14.65 ms step while the findings used 14.39 ms)."""
    report = _report(run)
    step = _UNPROFILED[run]
    note = next(n for n in report["notes"] if "the options cost the host" in n)
    assert f"the estimates below are set against that {step} step" in note and "shorter by" not in note
    said = [f for f in report["findings"] if "without the profiler's own host time (" in f["summary"]]
    assert said and all(f"without the profiler's own host time ({step})" in f["summary"] for f in said)


@pytest.mark.parametrize(
    "run, share",
    [
        ("h200_heldout/torch/optimizer_per_tensor", "50%"),  # #1: 49.8% of that step (captured 51%)
        ("h200_heldout/torch/allocator_churn", "13%"),  # #1: 13.3% of that step (captured 14%)
        ("h200/torch/launch_compiled", "52%"),  # host idle: 52.1% of that step (captured 57%)
    ],
)
def test_the_verdict_share_is_the_one_its_finding_sets_against_the_unprofiled_step(run, share):
    """Review finalA 3: the verdict's share is its finding's share of the step its bound uses."""
    report = _report(run)
    verdict = report["summary"]["verdict"]
    top = next(f for f in report["findings"] if f["id"] == report["summary"]["bottleneck_finding"])
    own = re.search(r"so it is ([\d.]+)% of that step", top["summary"])
    assert own is not None and f"{float(own.group(1)):.0f}%" == share and f" {share} " in verdict


@pytest.mark.parametrize(
    "run",
    [
        "h200_heldout/torch/precision_fp32",
        "h200_heldout/torch/attention_unfused",
        "h200_heldout/torch/input_inline_loader",
    ],
)
def test_no_unprofiled_step_where_the_note_does_not_introduce_one(run):
    """Review finalA 4: where the profiler's cost changes the step little (no Note says the step is shorter), the
    estimates use the captured step and no finding names another."""
    report = _report(run)
    assert not any("the options cost the host" in n for n in report["notes"])
    assert not any("profiler's own host time" in f["summary"] + f["speedup_basis"] for f in report["findings"])
