"""Kernel rows on the roofline: exact FLOPs and bytes joined from embedded HLO, peaks, bound and peak share."""

import pytest

from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.pipeline import host_report
from tb_gpu_advisor.testing.builder import TraceBuilder
from tb_gpu_advisor.testing.roofline_trace import EXPECTED, roofline_builder
from tests.conftest import report_of
from tests.data import real_trace

AMD_TRACE = real_trace("amd_mi300x_jax08_gemm.xplane.pb")


@pytest.fixture(scope="module")
def generated():
    return report_of(roofline_builder(steps=3))


@pytest.fixture(scope="module")
def amd():
    return host_report(load_model(str(AMD_TRACE)))


def test_generated_rows_carry_exact_flops_and_bytes(generated):
    rows = {row["op_name"]: row for row in generated["kernels"]}
    for kernel in EXPECTED:
        row = rows[kernel.op]
        assert (row["flops"], row["bytes"]) == (kernel.flops, kernel.bytes)
        assert row["achieved_tflops"] == pytest.approx(kernel.flops / (kernel.duration_us * 1e-6) / 1e12, rel=1e-5)
        assert row["achieved_gbps"] == pytest.approx(kernel.bytes / (kernel.duration_us * 1e-6) / 1e9, rel=1e-5)
        assert row["arithmetic_intensity"] == pytest.approx(kernel.flops / kernel.bytes, rel=1e-5)


def test_generated_bound_and_peak_share(generated):
    rows = {row["op_name"]: row for row in generated["kernels"]}
    device = generated["devices"][0]
    assert (device["peak_tflops"], device["peak_gbps"]) == (312.0, 2039.0)  # A100-SXM4-80GB, published
    attention = rows["custom-call.2"]  # 2.15 GFLOP over 8.45 MB: far right of the ridge (153 FLOP/B)
    assert attention["bound"] == "compute"
    assert attention["peak_pct"] == pytest.approx(100 * EXPECTED[2].flops / 40e-6 / 312e12, abs=0.01)
    elementwise = rows["add_fusion"]  # f32 vector work, 1/6 FLOP per byte
    assert elementwise["bound"] == "memory"
    assert elementwise["peak_pct"] == pytest.approx(100 * EXPECTED[4].bytes / 8e-6 / 2039e9, abs=0.01)
    assert elementwise["roof_tflops"] == 19.5


def test_generated_summary_utilization(generated):
    summary = generated["summary"]
    window_us = sum(k.duration_us + 1.0 for k in EXPECTED) * 3 - 1.0
    flops = sum(k.flops for k in EXPECTED) * 3
    assert summary["costed_kernel_time_pct"] == 100.0
    assert summary["flops_utilization_pct"] == pytest.approx(100 * flops / (312e12 * window_us * 1e-6), abs=0.01)


def test_without_hlo_everything_is_null():
    builder = TraceBuilder()
    builder.gpu(0).kernel("volta_sgemm_128x64_nn", 10.0, 5.0)
    report = report_of(builder)
    row = report["kernels"][0]
    assert all(
        row[key] is None
        for key in ("flops", "bytes", "achieved_tflops", "achieved_gbps", "arithmetic_intensity", "bound", "peak_pct")
    )
    assert report["summary"]["flops_utilization_pct"] is None
    assert report["summary"]["costed_kernel_time_pct"] == 0.0


def test_amd_hipblaslt_gemms_cost_two_mnk(amd):
    """The issue's numbers: the 8192x4096 by 4096x8192 hipBLASLt GEMM is 2*M*N*K = 550 GFLOP in 611 us."""
    gemm = next(row for row in amd["kernels"] if row["name"].startswith("Cijk_Ailk_Bljk_BBS_BH_MT256x224x64"))
    assert gemm["flops"] == 2 * 8192 * 8192 * 4096
    assert gemm["bytes"] == (8192 * 4096 * 2 + 8192 * 8192) * 2
    assert gemm["avg_us"] == 611.001
    assert gemm["achieved_tflops"] == pytest.approx(899.76, abs=0.01)
    assert gemm["bound"] == "compute" and gemm["peak_pct"] == 68.82


def test_amd_peaks_are_gfx942_with_the_rocm_bandwidth_corrected(amd):
    device = amd["devices"][0]
    assert device["memory_bandwidth_gbps"] == 2662.4  # as ROCm reports it: half the HBM peak
    assert device["peak_gbps"] == 5324.8
    assert device["peak_tflops"] == 1307.44  # 2048 FLOP/clock/CU x 304 CUs x 2.1 GHz: MI300X dense bf16


def test_no_kernel_exceeds_a_peak(amd, generated):
    for report in (amd, generated):
        shares = [row["peak_pct"] for row in report["kernels"] if row["peak_pct"] is not None]
        assert shares and max(shares) <= 100.0


def test_amd_costs_every_hlo_kernel(amd):
    uncosted = {row["name"] for row in amd["kernels"] if row["flops"] is None}
    assert uncosted == {"__amd_rocclr_copyBuffer.kd"}  # runtime copies that run no HLO op
    assert amd["summary"]["costed_kernel_time_pct"] == 98.27


def test_real_v100_tensorflow_kernels_costed_from_op_and_shapes():
    """TF without XLA: the dropout Mul/GreaterEqual kernels of the real 8xV100 trace, from tf op and shapes."""
    report = host_report(load_model(str(real_trace("gpu_multi_worker_v100x8.xplane.pb"))))
    costed = [row for row in report["kernels"] if row["flops"] is not None]
    assert costed and all(row["bound"] == "memory" and row["peak_pct"] <= 100 for row in costed)
    assert report["summary"]["costed_kernel_time_pct"] == pytest.approx(30.5, abs=0.1)
    device = next(d for d in report["devices"] if d["kernel_count"])
    # no model name in the trace; 80 SMs, 1530 MHz, 16 GiB at sm_70 identify a V100-SXM2-16GB: its published peak
    assert device["peak_tflops"] == pytest.approx(125.0, abs=0.001)
