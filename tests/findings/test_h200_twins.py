"""The fix runs of the real H200 pairs that still hold a problem of their own (tests/data/real/h200*, capture.json):
the remainder is named, and its estimate is physically possible for the program as it runs without the profiler:
never a step shorter than the GPU's work per step, nor, where the fix removes a wait, than the host's."""

import json

import pytest

from tb_gpu_advisor.pipeline import host_report
from tb_gpu_advisor.readers.load import load_model
from tests.data import REAL

TORCH_SETS = ("h200/torch", "h200_heldout/torch")
_CACHE = {}


def _report(folder, run):
    if (folder, run) not in _CACHE:
        found = sorted((REAL / folder / run).rglob("*.xplane.pb")) + sorted((REAL / folder / run).glob("*.gz"))
        _CACHE[folder, run] = host_report(load_model(str(found[0])))
    return _CACHE[folder, run]


def _runs(folder):
    return json.loads((REAL / folder / "capture.json").read_text())["runs"]


def _gpu_ms_per_step(summary):
    """The GPU's busy time per step of the trace (the device's work, which the profiler does not lengthen)."""
    return summary["gpu_busy_pct"] / 100.0 * summary["step_time_ms"]["mean"]


@pytest.mark.parametrize("folder,run", [(folder, run) for folder in TORCH_SETS for run in sorted(_runs(folder))])
def test_no_estimate_promises_a_step_shorter_than_the_gpu_work_without_the_profiler(folder, run):
    """With shapes and FLOPs recorded the traced step is up to 1.5x the unprofiled one (launch_compiled 5.32 ms
    against 3.81 ms): a combined estimate taken on the traced step alone promised 3.38x there, a 1.13 ms step for
    1.31 ms of GPU work. Set against the step without the profiler's host time, no estimate does."""
    report = _report(folder, run)
    summary = report["summary"]
    combined = summary["combined_estimate"]
    if combined is None:
        return
    # Fixes of the GPU's own work (kernels, copies) lower the floor by what they recover.
    device = {"kernel", "precision", "fusion", "occupancy", "transfer"}
    saved = sum(
        f["recoverable_ms"]
        for f in report["findings"]
        if f["id"] in combined["finding_ids"] and f["category"] in device and f["id"] != "transfer.d2h_sync_in_step"
    )
    gpu_left = _gpu_ms_per_step(summary) - saved / summary["step_time_ms"]["count"]
    unprofiled = _runs(folder)[run]["step_ms_unprofiled"]
    assert unprofiled / combined["estimated_speedup"] >= gpu_left, combined


def test_jitted_jax_step_is_paced_by_its_dispatch_once_the_read_back_goes():
    """launch_jit (the jitted fix of launch_bound): 1.19 ms of GPU work and ~2.3 ms of host work (dispatch, XLA's
    command-buffer update, the graph launch) per 3.77 ms step, serialized by the per-step float(loss). Dropping the
    read lets them overlap but removes neither: at most about 1.65x, not the 6.45x that counted the launch calls
    after the read twice and let the step fall below both works. The idle after the read is the next call's
    dispatch (the command-buffer update and its graph launch: launch time), so fewer dispatches per step (more
    work per replay) is the larger fix, and the joint figure counts it once, with the read's time shared."""
    report = _report("h200/jax", "launch_jit")
    summary = report["summary"]
    assert summary["bottleneck_finding"] == "transfer.d2h_sync_in_step"
    # A 4-byte read is no transfer: the idle after it is the host's next dispatch (XLA's command-buffer update
    # and the graph launch), which the verdict names; the host is blocked on the read for little of it.
    assert summary["bottleneck"] == "host" and summary["verdict"].startswith(
        "Host-bound: reading results back each step serializes the host's dispatch with the GPU"
    )
    metrics = report["findings"][0]["evidence"]["metrics"]
    assert metrics["stall_host_dispatch_ms"] > 4 * metrics["stall_host_blocked_ms"]
    assert "JAX's asynchronous dispatch" in report["findings"][0]["fix"]
    first = report["findings"][0]
    assert first["estimated_speedup"] <= 1.8 and "host's or the GPU's own work per step" in first["speedup_basis"]
    # One 4-byte read per step (12 in the trace), not the 22 idle fragments after them.
    assert first["evidence"]["metrics"]["d2h_copies_per_step"] == 1.0
    assert "(1 device-to-host copy per step)" in first["summary"]
    # The Time line leads with kernel launch 40.6% and host compute 11.4%: the verdict says that most of both is
    # the idle after the read (the host's next dispatch), so the verdict, the ranking and the Time line agree.
    assert (
        "Most of the Time line's kernel launch 40.6% and host compute 11.4% is this idle (36.3% and 10.3% of the "
        "step): the host dispatching the next call" in summary["verdict"]
    )
    # The read is counted for that time, held at the host's own work per step (its fix leaves that work): not the
    # "up to 2.08x" of summing the launch and host time, which the read's fix overlaps and no fix removes whole.
    combined = summary["combined_estimate"]
    assert combined["finding_ids"] == ["transfer.d2h_sync_in_step"] and combined["speedup_kind"] == "bound"
    assert "launch.gpu_starved_by_launches" in combined["shared_ids"]
    assert combined["estimated_speedup"] == first["estimated_speedup"] and "Fixing findings" not in summary["verdict"]
    assert summary["step_time_ms"]["mean"] / combined["estimated_speedup"] >= _gpu_ms_per_step(summary)


def test_compiled_twin_keeps_a_host_bound_remainder_within_its_unprofiled_step():
    """launch_compiled replays CUDA graphs, yet its host still sets the pace (3.81 ms unprofiled for 1.31 ms of GPU
    work): host-bound is right, and the estimate stays under the 2.9x the unprofiled step allows."""
    summary = _report("h200/torch", "launch_compiled")["summary"]
    assert summary["bottleneck"] == "host"
    assert 2.0 <= summary["combined_estimate"]["estimated_speedup"] <= 3.81 / 1.31


@pytest.mark.parametrize(
    "run,cause",
    [
        # 200 eager Linear(256) layers: 5.2 ms of GPU work in a 35.2 ms unprofiled step once Adam is fused.
        ("optimizer_fused", "host.gpu_idle_host_busy"),
        # 8 workers feed the batches; the step thread stalls ~6 ms inside a backward node in 5 of 8 steps, in step
        # with the pin-memory thread, and sets a 15.5 ms step for 4 ms of GPU work: the stall is named first.
        ("input_worker_loader", "host.op_stall"),
    ],
)
def test_fix_runs_with_a_host_bound_remainder_name_it(run, cause):
    summary = _report("h200_heldout/torch", run)["summary"]
    assert summary["bottleneck_finding"] == cause
    assert summary["combined_estimate"]["estimated_speedup"] > 1.5


@pytest.mark.parametrize(
    "folder,run,measured",
    [
        # 256 MiB from pinned memory every step, on the compute stream: 38.62 -> 34.39 ms kept on the device.
        ("h200/jax", "transfer_pinned", 38.62 / 34.39),
        # The same in PyTorch (no on-device twin measured): the copy is ~30% of the step.
        ("h200_heldout/torch", "transfer_pinned", None),
    ],
)
def test_pinned_copy_every_step_is_a_real_remainder(folder, run, measured):
    report = _report(folder, run)
    summary = report["summary"]
    assert summary["bottleneck_finding"] == "transfer.input_copy_in_step"
    assert "transfer.pageable_memory" not in {f["id"] for f in report["findings"]}
    if measured is not None:
        estimate = summary["combined_estimate"]["estimated_speedup"]
        assert 0.75 * measured <= estimate <= 1.25 * measured


@pytest.mark.parametrize(
    "folder,run",
    [
        ("h200/torch", "launch_eager"),
        ("h200_heldout/torch", "optimizer_fused"),
        ("h200_heldout/torch", "optimizer_per_tensor"),
    ],
)
def test_gemms_of_a_few_microseconds_are_not_told_to_change_precision(folder, run):
    """64x512x512 and 64x256x256 fp32 GEMMs of 2-5 µs per call are bound by the device's per-call latency: reaching
    the roof, or bf16/TF32, cannot take a call below it: no GEMM finding, and the precision finding claims at most
    what halving the element-wise kernels' bytes gives."""
    findings = {f["id"]: f for f in _report(folder, run)["findings"]}
    assert "kernel.gemm_below_roof" not in findings
    assert "precision.fp32_matmul" not in findings or findings["precision.fp32_matmul"]["estimated_speedup"] <= 1.03


def test_graph_replayed_kernels_report_the_graph_launchs_latency():
    """launch_jit replays 256 kernels per step from one command-buffer launch: the latency percentiles are the 12
    launches' (call to first kernel, p50 ~0.66 ms, most of it cuGraphLaunch itself), not 3,072 kernels' time since
    the launch (p50 was 1.2 ms); every kernel still counts as paired."""
    launch = _report("h200/jax", "launch_jit")["launch"]
    assert launch["count"] == launch["kernel_count"] == 3072
    assert launch["latency_us"]["p50"] < 800 and launch["latency_us"]["max"] < 1500
