"""A matrix op's FLOPs go to its matrix kernels, not to its helper kernels (analysis.op_split)."""

from types import SimpleNamespace

import numpy as np

from tb_gpu_advisor.analysis.op_split import (
    HELPER_METHOD,
    OP_SPLIT_METHOD,
    is_matrix_kernel,
    matrix_work,
    runs_on_tensor_cores,
)
from tb_gpu_advisor.model.trace import ActivityKind
from tb_gpu_advisor.model.work import EventWork
from tb_gpu_advisor.readers.hlo.op_cost import MATRIX, VECTOR, OpCost

SDPA = "cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_7_64x128x128_4x1x1_kernel0_0"
DOT = "void cudnn::fusion::compute_dot_do_o_specialized<true, 128, 32, false, __nv_bfloat16>(int, int)"
CAST = "void cudnn::fusion::convert_dq_to_16bits<__nv_bfloat16>(float const*, __nv_bfloat16*, int, int, int)"


def _activity(names, durations, instances, costs):
    count = len(names)
    table = sorted(set(names))
    flops = np.array([np.nan if i < 0 else 1.0 for i in instances])
    work = EventWork(flops, flops.copy(), np.array(instances, dtype=np.int64), tuple(costs))
    return SimpleNamespace(
        work=work,
        names=tuple(table),
        name_id=np.array([table.index(n) for n in names]),
        kind=np.full(count, int(ActivityKind.KERNEL)),
        duration_ps=np.array(durations, dtype=np.int64),
    )


def test_helpers_of_attention_backward_are_not_matrix_kernels():
    assert is_matrix_kernel(SDPA)
    assert not is_matrix_kernel(DOT) and not is_matrix_kernel(CAST)
    assert not is_matrix_kernel("flash_bwd_convert_dq_kernel") and is_matrix_kernel("flash_bwd_dq_dk_dv_loop_kernel")


def test_op_flops_go_to_its_matrix_kernel_only():
    cost = OpCost(1000, 400, MATRIX, "bf16", "shapes")
    activity = _activity([SDPA, DOT, CAST], [600, 200, 200], [0, 0, 0], [cost])
    work = matrix_work(activity)
    assert work.flops[0] == 1000 and work.bytes[0] == 400
    assert np.isnan(work.flops[1:]).all()
    helper = work.costs[work.cost_index[1]]
    assert helper.method == HELPER_METHOD and helper.compute == VECTOR and helper.dtype == "bf16"


def test_without_a_known_matrix_kernel_the_split_is_an_op_average():
    cost = OpCost(1000, None, MATRIX, "bf16", "shapes")
    activity = _activity(["my_kernel_a", "my_kernel_b"], [750, 250], [0, 0], [cost])
    work = matrix_work(activity)
    assert work.flops.tolist() == [750.0, 250.0]
    assert work.costs[0].method == OP_SPLIT_METHOD


def test_triton_gemm_fusion_runs_on_tensor_cores_by_its_dtype_or_rate():
    caps = SimpleNamespace(vendor="nvidia", compute_capability=(9, 0), model_name="NVIDIA H200")
    bf16 = OpCost(10**12, 10**9, MATRIX, "bf16", "hlo")
    assert runs_on_tensor_cores("gemm_fusion_dot_29", bf16, None, 0, caps)
    f32 = OpCost(10**12, 10**9, MATRIX, "f32", "hlo", precision="DEFAULT")
    assert runs_on_tensor_cores("gemm_fusion_dot_29", f32, None, 0, caps)
    highest = OpCost(10**12, 10**9, MATRIX, "f32", "hlo", precision="HIGHEST")
    assert not runs_on_tensor_cores("gemm_fusion_dot_29", highest, None, 0, caps)
    # 500 TFLOP/s of f32 work: no unit but the Tensor Cores goes that fast.
    assert runs_on_tensor_cores("gemm_fusion_dot_29", highest, 5e14, 10**12, caps)
    assert not runs_on_tensor_cores(
        "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x8_ffma_aligna4", bf16, None, 0, caps
    )
