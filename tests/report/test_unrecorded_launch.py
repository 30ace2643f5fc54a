"""A launch configuration the trace does not record (Kineto on ROCm) is null in the report and "-" in the text
and HTML tables, never a 1-thread kernel with 0 registers; a recorded one is kept as it is."""

import pytest

from tb_gpu_advisor.analysis.kernels import KernelRow, launch_recorded
from tb_gpu_advisor.report.html import render_html
from tb_gpu_advisor.report.units import launch_dims
from tests.readers.kineto.real import real_kineto


def _row(grid, block, registers, shared):
    return KernelRow("k", 1, 1, 1, 1, None, registers, shared, grid, block, False, False, "op")


@pytest.mark.parametrize(
    "grid, block, registers, shared, recorded",
    [
        ((1, 1, 1), (1, 1, 1), 0, 0, False),  # the readers' fillers: no launch configuration in the trace
        ((1, 1, 1), None, 0, 0, False),
        ((1, 1, 1), (1, 1, 1), 16, 0, True),  # a real one-thread kernel uses registers
        ((1, 1, 1), (1, 1, 1), 0, 48, True),
        ((80, 1, 1), (256, 1, 1), 0, 0, True),
    ],
)
def test_only_the_readers_fillers_are_unrecorded(grid, block, registers, shared, recorded):
    assert launch_recorded(_row(grid, block, registers, shared)) is recorded


@pytest.fixture(scope="module")
def mi250_report():
    from tb_gpu_advisor.api import analyze

    return analyze(str(real_kineto("mi250_minitoy_train")))


def test_a_rocm_trace_without_launch_values_reports_nulls(mi250_report):
    kernels = mi250_report["hosts"][0]["kernels"]
    assert kernels
    for kernel in kernels:
        launch = [kernel[key] for key in ("grid", "block", "registers_per_thread", "shared_memory_bytes")]
        assert launch == [None, None, None, None], kernel["name"]
    assert launch_dims(None, None) == "-" and launch_dims([32, 1, 1], [256, 1, 1]) == "32 / 256"
    html = render_html(mi250_report)
    assert '<td class="">-</td>' in html and "1 / 1</td>" not in html


def test_a_recorded_launch_configuration_is_kept():
    from tb_gpu_advisor.api import analyze

    report = analyze(str(real_kineto("a100_alexnet_sync")))
    host = report["hosts"][0]
    assert all(k["grid"] and k["block"] and k["registers_per_thread"] for k in host["kernels"])


def test_a_bandwidth_is_unknown_without_copy_sizes_and_never_reads_0():
    from tb_gpu_advisor.analysis.transfers import TransferStats
    from tb_gpu_advisor.report.units import rate_gbps

    unsized = TransferStats(count=2, bytes=0, time_ps=38_161_000, pageable_count=0, sync_count=None, small_count=2)
    assert unsized.gbps is None and rate_gbps(unsized.gbps) == "-"  # MI250: copies with no bytes recorded
    tiny = TransferStats(count=5, bytes=20, time_ps=10_000_000, pageable_count=0, sync_count=0, small_count=5)
    assert rate_gbps(tiny.gbps) == "<0.01 GB/s" and rate_gbps(12.345) == "12.35 GB/s"


def test_zero_registers_are_not_recorded_resources():
    """Review issue 31 A1 (MI300X xplane GEMMs: "Regs 0", "Shared mem 0 B"): every kernel uses registers, so 0 is
    a trace that did not record the kernel's resources: registers and shared memory are null (the tab and HTML
    print "not recorded"), while the grid and block it did record are kept."""
    from tb_gpu_advisor.testing import TraceBuilder
    from tests.conftest import report_of

    builder = TraceBuilder()
    builder.thread().step(0, 0, 1000)
    gpu = builder.gpu(0)
    gpu.kernel(
        "Cijk_Ailk_Bljk_BBS_BH_MT256x224x64_MI16x16x16x1", 10, 100, grid=(32, 37, 1), block=(256, 1, 1), registers=0
    )
    gpu.kernel("ampere_sgemm_128x64_tn", 200, 100, registers=128, static_shared=0)
    rows = {row["name"]: row for row in report_of(builder)["kernels"]}
    amd = rows["Cijk_Ailk_Bljk_BBS_BH_MT256x224x64_MI16x16x16x1"]
    assert (amd["registers_per_thread"], amd["shared_memory_bytes"]) == (None, None)
    assert (amd["grid"], amd["block"]) == ([32, 37, 1], [256, 1, 1])
    nvidia = rows["ampere_sgemm_128x64_tn"]
    assert (nvidia["registers_per_thread"], nvidia["shared_memory_bytes"]) == (128, 0)  # 0 B recorded beside regs
