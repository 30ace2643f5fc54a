"""AMD: runtime copy/fill kernels are copy time in the breakdown, Tensile bf16 GEMMs are 16-bit compute."""

from tb_gpu_advisor.analysis.kernel_names import is_low_precision, is_runtime_copy, uses_matrix_units
from tb_gpu_advisor.pipeline import analyze_host_file
from tb_gpu_advisor.testing.rocm import COPY_KERNEL, FILL_KERNEL, TENSILE_GEMM, rocm_gemm_trace
from tests.conftest import report_of
from tests.data import real_trace


def test_runtime_copy_kernels_stay_kernels_but_count_as_copies():
    report = report_of(rocm_gemm_trace())
    names = {k["name"] for k in report["kernels"]}
    assert {COPY_KERNEL, FILL_KERNEL} <= names
    window = report["summary"]["analysis_window_ms"]
    breakdown_ms = {k: round(v * window / 100, 4) for k, v in report["summary"]["breakdown_pct"].items() if v}
    # copyBuffer 4 us + fillBuffer 2 us + the two CopyDeviceToDevice (8 + 4 us) are copy time; the GEMM (100 us)
    # is 16-bit compute (BBS: bf16); the broadcast fusion (10 us) names no type and the trace has no HLO for it:
    # of unknown precision, not 32-bit.
    assert breakdown_ms["d2d"] == 0.018
    assert breakdown_ms["h2d"] == 0.02
    assert breakdown_ms["compute_16bit"] == 0.1
    assert breakdown_ms["compute_unknown"] == 0.01
    assert "compute_32bit" not in breakdown_ms


def test_amd_names():
    assert is_runtime_copy(COPY_KERNEL) and is_runtime_copy(FILL_KERNEL) and not is_runtime_copy(TENSILE_GEMM)
    assert is_low_precision(TENSILE_GEMM)
    assert is_low_precision("Cijk_Alik_Bljk_HHS_BH_MT64x64x32_MI32x32x8x1_SN_ISA90a.kd")
    assert not is_low_precision("Cijk_Ailk_Bljk_SB_MT64x64x8_SN_ISA908.kd")
    assert uses_matrix_units(TENSILE_GEMM, "AMD") and not uses_matrix_units(TENSILE_GEMM, "NVIDIA")
    assert not uses_matrix_units("Cijk_Ailk_Bljk_SB_MT64x64x8_SN_ISA908.kd", "AMD")  # no MFMA tag
    assert uses_matrix_units("ck_tile::kentry<GemmKernel<...>>", "AMD")
    assert uses_matrix_units("gemm_fusion_dot_general_1.kd", "AMD")


def test_real_mi300x_breakdown_and_no_nvidia_advice():
    report = analyze_host_file(str(real_trace("amd_mi300x_jax08_gemm.xplane.pb")))
    pct = report["summary"]["breakdown_pct"]
    # The bf16 Tensile GEMMs and the broadcast fusions, bf16 by their HLO: all compute is 16-bit.
    assert pct["compute_16bit"] > 0 and pct["compute_32bit"] == pct["compute_unknown"] == 0
    assert pct["d2d"] > 0  # 24 copyBuffer kernels
    nvidia_only = ("fp32", "tensor_core", "cuda", "occupancy.low_occupancy", "environment.")
    assert not [f["id"] for f in report["findings"] if any(word in f["id"] for word in nvidia_only)]


def test_amd_library_gemms_never_get_occupancy_advice_and_rccl_is_a_collective():
    from tb_gpu_advisor.testing.rocm import rocm_builder, rocm_details

    builder = rocm_builder(2)
    python = builder.thread("python")
    for step in range(4):
        python.step(step, step * 1000, 1000)
        for ordinal in range(2):
            gpu = builder.gpu(ordinal)
            start = step * 1000 + 20
            for index in range(6):  # an fp32 Tensile GEMM without matrix-core instructions, 12.5% occupancy
                gpu.kernel(
                    "Cijk_Ailk_Bljk_SB_MT64x64x8_SN_ISA90a_K1.kd",
                    start + index * 110,
                    100,
                    stream=16,
                    details=rocm_details((4, 1, 1), (256, 1, 1), occupancy=12.5),
                    hlo_op="dot.1",
                    launch=(python, start + index * 110 - 10, 5),
                )
            gpu.kernel("rcclKernel_AllReduce_RING_LL_Sum_float", start + 660, 200, stream=17)
    report = report_of(builder)
    ids = {f["id"] for f in report["findings"]}
    assert "occupancy.low_occupancy" not in ids
    assert not {i for i in ids if i.startswith(("precision.", "environment."))}
    assert [(d["arch"], d["compute_busy_pct"], d["collective_busy_pct"]) for d in report["devices"]] == [
        ("gfx90a", 60.0, 20.0),
        ("gfx90a", 60.0, 20.0),
    ]
