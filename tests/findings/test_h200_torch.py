"""The real H200 PyTorch captures (tests/data/real/h200/torch, capture.json): steps timed on the device, eager launches
read as launch/host-bound with an estimate near the measured fix, the torch.compile(mode="reduce-overhead") run
recognized as CUDA-graph replay and never told to compile, and the capture's own cost named."""

import json

import pytest

from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.pipeline import host_report
from tests.data import REAL

TORCH = REAL / "h200" / "torch"
RUNS = json.loads((TORCH / "capture.json").read_text())["runs"]


@pytest.fixture(scope="module")
def reports():
    cache = {}

    def get(run):
        if run not in cache:
            cache[run] = host_report(load_model(str(next((TORCH / run).glob("*.pt.trace.json.gz")))))
        return cache[run]

    return get


def _fixes(report):
    return " ".join(f"{f['fix_summary']} {f['fix']}" for f in report["findings"])


def test_healthy_run_is_timed_on_the_device(reports):
    """The host marks 14.3 ms steps and runs ahead; the GPU needs ~24.8 ms per step (24.4 ms measured without the
    profiler): the step time, busy share and verdict come from the device."""
    summary = reports("healthy")["summary"]
    assert (summary["step_source"], summary["step_timing"]) == ("host", "device")
    assert abs(summary["step_time_ms"]["median"] - RUNS["healthy"]["step_ms_unprofiled"]) < 0.05 * 24.4
    assert summary["bottleneck"] == "none"
    assert summary["gpu_busy_pct"] > 95


def test_healthy_eager_run_is_not_called_compiled(reports):
    """cuDNN's `cudnn::fusion::` attention kernels are no compiler's: the run is eager."""
    configuration = reports("healthy")["configuration"]
    assert configuration["xla"] is False and not configuration["graph_replay_pct"]


def test_eager_launches_read_launch_bound_with_the_measured_fix(reports):
    """17.9 -> 3.8 ms unprofiled (4.70x) once compiled and replayed as CUDA graphs."""
    report = reports("launch_eager")
    summary = report["summary"]
    assert summary["bottleneck"] in ("host", "launch")
    measured = RUNS["launch_eager"]["step_ms_unprofiled"] / RUNS["launch_compiled"]["step_ms_unprofiled"]
    estimate = summary["combined_estimate"]["estimated_speedup"]
    assert 0.75 * measured <= estimate <= 1.25 * measured
    assert 'mode="reduce-overhead"' in _fixes(report)  # the eager run is the one to compile


def test_compiled_run_is_recognized_as_cuda_graph_replay(reports):
    report = reports("launch_compiled")
    configuration = report["configuration"]
    assert configuration["xla"] is True and configuration["graph_replay_pct"] > 99
    assert any(
        note.startswith("CUDA graphs replay 99% of the device work (3,600 events from 24 graph launches)")
        for note in report["notes"]
    )
    found = {f["id"]: f for f in report["findings"]}
    assert "launch.tiny_kernels" not in found  # graph-replayed kernels have no launch call of their own
    launch = found.get("launch.gpu_starved_by_launches")
    if launch is not None:
        assert "3 graph launches per step" in launch["summary"]


def test_compiled_run_is_never_told_to_compile_or_to_use_a_dataloader(reports):
    report = reports("launch_compiled")
    fixes = _fixes(report)
    assert "torch.compile(model" not in fixes and 'mode="reduce-overhead")   #' not in fixes
    assert "model = torch.compile" not in fixes
    batch = next((f for f in report["findings"] if f["id"] == "batch.gpu_underused"), None)
    if batch is not None:
        assert "DataLoader" not in batch["fix_summary"]  # the trace shows no DataLoader


@pytest.mark.parametrize("run", ["healthy", "launch_eager", "launch_compiled"])
def test_the_capture_overhead_is_named(reports, run):
    """Shapes and FLOPs recorded for every op (record_shapes=True, with_flops=True): the profiled steps ran
    3x (healthy), 6x (eager) and 8x (compiled) the unprofiled ones by wall clock."""
    notes = [note for note in reports(run)["notes"] if note.startswith("This capture recorded input shapes and FLOPs")]
    assert len(notes) == 1 and "record_shapes=False" in notes[0]
    paced = "the device sets the pace" if run == "healthy" else "the host sets the pace"
    assert paced in notes[0]
