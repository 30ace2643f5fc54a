"""Kernel names per architecture and precision are the ones the analyzer (and XProf) recognize."""

import pytest

from tb_gpu_advisor.analysis.kernel_names import is_fp32_matmul, is_low_precision, is_nccl, uses_tensor_cores
from tb_gpu_advisor.scenarios import kernels as k
from tb_gpu_advisor.scenarios.devices import A100_SXM4_80GB, H100_SXM5_80GB, V100_SXM2_16GB


@pytest.mark.parametrize(
    "spec, math_kind, prefix, tensor_cores, low_precision",
    [
        (V100_SXM2_16GB, "fp16", "volta_fp16_s884gemm_fp16_128x128_ldg8_f2f_nn", True, True),
        (V100_SXM2_16GB, "fp32", "volta_sgemm_128x64_nn", False, False),
        (A100_SXM4_80GB, "fp32", "ampere_sgemm_128x64_nn", False, False),
        (A100_SXM4_80GB, "tf32", "ampere_tf32_s1688gemm_tf32_128x128", True, False),
        (A100_SXM4_80GB, "fp16", "ampere_fp16_s16816gemm_fp16_128x128", True, True),
        (H100_SXM5_80GB, "bf16", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn", True, True),
    ],
)
def test_gemm_names(spec, math_kind, prefix, tensor_cores, low_precision):
    kernel = k.gemm(spec, 4096, 4096, 1024, math_kind)
    assert kernel.name.startswith(prefix)
    assert (uses_tensor_cores(kernel.name), is_low_precision(kernel.name)) == (tensor_cores, low_precision)
    assert is_fp32_matmul(kernel.name) == (math_kind == "fp32")


def test_gemm_duration_follows_the_roofline():
    # 2 x 4096^3 flop at 16.5 TFLOP/s sustained (8329.6 us), 3 x 64 MiB at 80% of 2039 GB/s (123.4 us), plus
    # 2 us, on the 0.5 us grid.
    kernel = k.gemm(A100_SXM4_80GB, 4096, 4096, 4096, "fp32")
    assert kernel.duration_us == 8455.0
    assert kernel.grid == (64, 32, 1)
    # The same GEMM on the Tensor Cores in float16: 120 TFLOP/s (1145.3 us), half the bytes (61.7 us), 2 us.
    assert k.gemm(A100_SXM4_80GB, 4096, 4096, 4096, "fp16").duration_us == 1209.0


def test_cudnn_and_nccl_names():
    assert uses_tensor_cores(k.conv(A100_SXM4_80GB, "fprop", 16, 64, 64, 64, 64, 3, 3).name)
    assert is_fp32_matmul(k.conv(A100_SXM4_80GB, "wgrad", 16, 64, 64, 64, 64, 3, 3, math_kind="fp32").name)
    nccl = k.nccl_all_reduce("f32", 1234.4)
    assert nccl.name == "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
    assert is_nccl(nccl.name) and nccl.duration_us == 1234.5


def test_xla_fusion_is_named_after_its_instruction():
    kernel = k.xla_fusion(H100_SXM5_80GB, "loop_add_fusion.12", 1 << 20)
    assert (kernel.name, kernel.hlo_op) == ("loop_add_fusion_12", "loop_add_fusion.12")
