"""Kernels inside an XLA command buffer (a CUDA graph), whose events name the buffer instead of the HLO op, and the
kernel families that tell Tensor Core GEMMs, fp32 SIMT GEMMs and occupancy-by-design kernels apart."""

import pytest

from tb_gpu_advisor.analysis.host_analysis import analyze_host
from tb_gpu_advisor.analysis.kernel_families import (
    is_simt_gemm,
    is_tensor_core_family,
    nvjet_input_dtype,
    occupancy_by_design,
)
from tb_gpu_advisor.analysis.kernel_names import is_fp32_matmul, kernel_precision, uses_tensor_cores
from tb_gpu_advisor.testing.builder import TraceBuilder
from tb_gpu_advisor.testing.hlo import HloModuleBuilder, gemm_config, shape, tuple_shape
from tb_gpu_advisor.readers.xplane.reader import parse_space
from tb_gpu_advisor.readers.xplane.build import build_model

FFMA = "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_warpsize4x2x1_ffma_aligna4_alignc4_execute"
NVJET = "nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_NTN"
GEMM_A = 2 * 512 * 1024 * 256  # custom-call.1: [512,256] x [256,1024]
GEMM_B = 2 * 512 * 256 * 1024  # custom-call.2: [512,1024] x [1024,256]
ADD = 512 * 1024  # add.3, one FLOP per element


def test_kernel_families_by_name():
    assert is_simt_gemm(FFMA) and not uses_tensor_cores(FFMA) and is_fp32_matmul(FFMA)
    assert kernel_precision(FFMA) == "32bit"
    assert uses_tensor_cores(NVJET) and is_tensor_core_family(NVJET) and nvjet_input_dtype(NVJET) == "bf16"
    assert kernel_precision(NVJET) == "16bit"
    assert nvjet_input_dtype("nvjet_hsh_64x8_64x16_4x1_v_bz_TNT") == "f16"
    assert nvjet_input_dtype("fusion_12") is None
    assert uses_tensor_cores("sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x32")  # tensor-op xmma
    # Occupancy by design: tensor-core/library kernels, Triton matmuls, 96 KiB or more of shared memory per block.
    assert occupancy_by_design(NVJET, 213188, True, True)
    assert occupancy_by_design("gemm_fusion_dot_29", 147456, False, False)
    assert occupancy_by_design("my_kernel", 96 * 1024, False, False)
    assert not occupancy_by_design("fusion_161", 128, False, False)
    assert not occupancy_by_design("query_ball_point_gpu", 0, False, False)


def _module():
    """jit_step: two fp32 GEMM custom-calls at precision HIGHEST and an element-wise fusion."""
    module = HloModuleBuilder("jit_step", 21)
    x = module.entry.parameter("x", shape("f32", 512, 256))
    w1 = module.entry.parameter("w1", shape("f32", 256, 1024))
    w2 = module.entry.parameter("w2", shape("f32", 1024, 256))
    config = gemm_config((1,), (0,))
    config["gemm_backend_config"]["precision_config"] = {"operand_precision": ["HIGHEST", "HIGHEST"]}
    first = module.entry.add(
        "custom-call.1",
        "custom-call",
        tuple_shape(shape("f32", 512, 1024), shape("s8", 0)),
        (x, w1),
        custom_call_target="__cublas$lt$matmul",
        backend_config=config,
    )
    hidden = module.entry.add(
        "get-tuple-element.1", "get-tuple-element", shape("f32", 512, 1024), (first,), tuple_index=0
    )
    fused = module.computation("fused_add")
    p0 = fused.parameter("param_0", shape("f32", 512, 1024))
    fused.add("add.3", "add", shape("f32", 512, 1024), (p0, p0))
    added = module.entry.add(
        "add_fusion.3", "fusion", shape("f32", 512, 1024), (hidden,), fusion_kind="kLoop", called=[fused]
    )
    module.entry.add(
        "custom-call.2",
        "custom-call",
        tuple_shape(shape("f32", 512, 256), shape("s8", 0)),
        (added, w2),
        custom_call_target="__cublas$lt$matmul",
        backend_config=config,
    )
    return module


def _trace(launches=3):
    """Each launch of the command buffer: GEMM 30 µs, add 10 µs, GEMM 10 µs, sharing one correlation id."""
    builder = TraceBuilder()
    gpu = builder.gpu(0)
    module = _module()
    builder.hlo_module(21, "jit_step", module.to_bytes())
    start = 10.0
    for launch in range(launches):
        for name, duration in ((FFMA, 30.0), ("add_fusion_3", 10.0), (FFMA + "_2", 10.0)):
            gpu.kernel(
                name,
                start,
                duration,
                hlo_op="command_buffer_1",
                hlo_module="jit_step",
                program_id=21,
                grid=(132, 1, 1),
                correlation_id=1000 + launch,
            )
            start += duration + 1.0
    return build_model(parse_space(builder.to_bytes(), "graph.xplane.pb"))


def test_command_buffer_kernels_get_their_module_work():
    """The add kernel is found by its name (add_fusion_3 -> add_fusion.3); the two GEMM kernels of each launch
    share the module's GEMM FLOPs by their time (30:10), so the launch's total is exact."""
    analysis = analyze_host(_trace())
    rows = {row.name: row for row in analysis.kernels}
    gemm = GEMM_A + GEMM_B
    assert rows[FFMA].flops == pytest.approx(3 * gemm * 0.75)
    assert rows[FFMA + "_2"].flops == pytest.approx(3 * gemm * 0.25)
    assert rows["add_fusion_3"].flops == 3 * ADD
    assert rows[FFMA].dtype == "f32" and rows[FFMA].matrix_precision == "HIGHEST"
    assert not rows[FFMA].uses_tensor_cores
    assert analysis.flop_utilization.costed_kernel_time_pct == 100.0
    assert analysis.flop_utilization.flops == pytest.approx(3 * (gemm + ADD))
