"""The roofline counts each HLO op's work once, split over the kernels it lowers to, and never shows a share of a
roof above 100%: an op whose counted FLOPs would outrun its GPU is left out, a row above its roof says why
(issues 28 and 29)."""

import glob
from types import SimpleNamespace

import numpy as np
import pytest

from tb_gpu_advisor.analysis.peaks import DevicePeaks
from tb_gpu_advisor.analysis.command_buffers import SPLIT_METHOD
from tb_gpu_advisor.analysis.kernels import event_costs
from tb_gpu_advisor.analysis.roofline import kernel_costs, kernel_roofline
from tb_gpu_advisor.model.trace import ActivityKind
from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.pipeline import host_report
from tb_gpu_advisor.report.invariants import report_problems
from tb_gpu_advisor.testing.builder import TraceBuilder
from tb_gpu_advisor.testing.roofline_trace import EXPECTED, MODULES
from tests.conftest import report_of
from tests.data import REAL, real_trace
from tests.readers.hlo.test_hostile_modules import doubling_module

DEMO_LOGS = REAL.parents[2] / "demo_logs"
GEMM = EXPECTED[0]  # custom-call.1 of program 11: a batched bf16 GEMM, 2.1 GFLOP
ADD = EXPECTED[4]  # add_fusion of program 14: 2 MFLOP over 12 MiB, memory-bound


def _builder(kernels, steps=3, modules=(11,)):
    """`steps` repetitions of `kernels` [(kernel name, program id, op, duration us)] on one A100-SXM4-80GB."""
    builder = TraceBuilder()
    for program_id in modules:
        module = MODULES[program_id]() if program_id in MODULES else doubling_module()
        builder.hlo_module(program_id, module.proto.name, module.to_bytes())
    gpu, start = builder.gpu(0), 10.0
    for _ in range(steps):
        for name, program_id, op, duration in kernels:
            gpu.kernel(name, start, duration, hlo_op=op, program_id=program_id, hlo_module="m", grid=(108, 1, 1))
            start += duration + 1.0
    return builder


def test_an_op_lowered_to_two_kernels_is_counted_once_split_by_time():
    """cuBLAS split-K: the GEMM kernel (15 us) and its reduction (5 us) share one execution's 2.1 GFLOP."""
    report = report_of(_builder([(GEMM.name, 11, GEMM.op, 15.0), ("splitKreduce_kernel", 11, GEMM.op, 5.0)]))
    rows = {row["name"]: row for row in report["kernels"]}
    gemm, reduce = rows[GEMM.name], rows["splitKreduce_kernel"]
    assert gemm["flops"] == round(GEMM.flops * 0.75) and reduce["flops"] == round(GEMM.flops * 0.25)
    assert gemm["achieved_tflops"] == reduce["achieved_tflops"] == pytest.approx(GEMM.flops / 20e-6 / 1e12, rel=1e-4)
    window_s = (15 + 1 + 5 + 1) * 3e-6 - 1e-6
    assert report["summary"]["flops_utilization_pct"] == pytest.approx(
        100 * 3 * GEMM.flops / (312e12 * window_s), abs=0.01
    )
    assert report_problems(report) == []


def test_an_op_with_one_kernel_keeps_its_exact_cost():
    report = report_of(_builder([(GEMM.name, 11, GEMM.op, 20.0)]))
    assert report["kernels"][0]["flops"] == GEMM.flops and report["kernels"][0]["roofline_implausible"] is None


def test_a_crafted_module_faster_than_the_gpu_is_left_out():
    """60 computations each calling the next twice: 9.2e18 FLOPs in a 10 us kernel, 1e12 times the A100's peak."""
    report = report_of(_builder([("loop_add_fusion", 99, "top", 10.0)], modules=(99,)))
    row = report["kernels"][0]
    assert row["flops"] is None and row["peak_pct"] is None and row["achieved_tflops"] is None
    assert report["summary"]["flops_utilization_pct"] is None
    assert any("HLO op top (program 99)" in note and "left out" in note for note in report["notes"])
    assert report_problems(report) == []


def test_a_row_above_its_roof_shows_no_share_and_says_why():
    """12 MiB of logical bytes in 0.01 us is 1.3 PB/s, 600x the HBM peak: kept as counted, no share shown."""
    report = report_of(_builder([("loop_add_fusion", 14, ADD.op, 0.01)], modules=(14,)))
    row = report["kernels"][0]
    assert row["flops"] == ADD.flops and row["peak_pct"] is None and row["bound"] is None
    assert "above the 2039 GB/s HBM peak" in row["roofline_implausible"]
    assert any(note.startswith("Kernel loop_add_fusion: ") for note in report["notes"])
    assert report_problems(report) == []


def test_a_compute_row_above_its_roof_shows_no_share():
    peaks = DevicePeaks(312.0, 19.5, 2039.0, 1, 0.5, "test")
    row = SimpleNamespace(
        total_ps=10**6,
        occurrences=1,
        flops=1e9,
        bytes=1e6,
        compute="matrix",
        dtype="f32",
        name="sm80_xmma_gemm_f32f32_tf32",
        matrix_precision=None,
    )
    roof = kernel_roofline(row, peaks)  # 1000 TFLOP/s of f32 (TF32 roof 156)
    assert roof.peak_pct is None and "156 TFLOP/s matrix roof of its f32 inputs" in roof.implausible
    assert kernel_roofline(SimpleNamespace(**{**vars(row), "flops": 1e8}), peaks).peak_pct == pytest.approx(64.1, 0.01)


# Every committed XPlane whose GPU kernels carry HLO modules (a demo run among them).
REAL_ROOFLINES = (
    [real_trace("amd_mi300x_jax08_gemm.xplane.pb")]
    + sorted(glob.glob(str(REAL / "h200" / "jax" / "*" / "plugins" / "profile" / "*" / "*.xplane.pb")))
    + sorted(glob.glob(str(DEMO_LOGS / "jax_decoder_roofline" / "plugins" / "profile" / "*" / "*.xplane.pb")))
)


def test_every_xplane_with_hlo_is_checked():
    """Ten H200 JAX runs, the MI300X GEMM and the demo decoder: the list is not silently empty."""
    assert len(REAL_ROOFLINES) == 12


@pytest.mark.parametrize("path", REAL_ROOFLINES, ids=lambda p: str(p).split("real/")[-1].split("demo_logs/")[-1])
def test_no_share_above_100_on_real_traces(path):
    """No row above any roof, none left out as implausible: on real costs the split below keeps every share
    physical (H200 up to 93%, MI300X 70%, the demo decoder 80%)."""
    model = load_model(str(path))
    report = host_report(model)
    assert report_problems(report) == []
    shares = [row["peak_pct"] for row in report["kernels"] if row["peak_pct"] is not None]
    assert shares and all(0 <= share <= 100 for share in shares)
    assert not [row["name"] for row in report["kernels"] if row["roofline_implausible"]]
    assert not [note for note in report["notes"] if "left out" in note and "HLO op" in note]
    _assert_each_op_counted_once(model)


def _assert_each_op_counted_once(model):
    """The FLOPs the kernels of one HLO op carry add up to its cost times its executions (the count of its most
    frequent kernel), never times its kernel count; in a command buffer each graph launch carries the module's
    library FLOPs exactly once, and a kernel named after an instruction carries that instruction's cost once."""
    costs = kernel_costs(model)
    checked = 0
    for gpu in model.gpus:
        activity = gpu.activity
        flops, _, _, _ = event_costs(activity, costs)
        kernels = activity.kind == ActivityKind.KERNEL
        keyed = np.flatnonzero(kernels & (activity.program_id >= 0) & (activity.op_id >= 0) & ~np.isnan(flops))
        by_op = {}
        for i in keyed.tolist():
            by_op.setdefault((int(activity.program_id[i]), activity.op_names[activity.op_id[i]]), []).append(i)
        for key, events in by_op.items():
            cost = costs.get(key)
            if cost is None or not cost.flops:
                continue
            executions = max(np.unique(activity.name_id[events], return_counts=True)[1])
            assert flops[events].sum() == pytest.approx(cost.flops * executions, rel=1e-9), key
            checked += 1
        work = costs.events.get(activity)
        if work is None:
            continue
        launches = {}
        for i in np.flatnonzero(work.cost_index >= 0).tolist():
            launches.setdefault((int(activity.correlation_id[i]), int(work.cost_index[i])), []).append(i)
        for (_, index), events in launches.items():
            cost = work.costs[index]
            if cost.method == SPLIT_METHOD:
                assert work.flops[events].sum() == pytest.approx(cost.flops, rel=1e-9)
            else:
                assert cost.flops is None or (work.flops[events] == cost.flops).all()
            checked += 1
    assert checked
