"""Kernel names and launch shapes as cuBLAS, cuDNN, Eigen, TensorFlow, XLA and NCCL name them, with durations.

Durations come from a simple roofline: math at a realistic sustained rate for the precision and GPU, plus
memory traffic at a realistic share of peak bandwidth, plus a small fixed cost; rounded to 0.5 us.
"""

import math

from tb_gpu_advisor.scenarios.engine import Kernel, half_us

# Sustained TFLOP/s reached by library kernels, by (compute capability major, math), and by memory (GB/s).
_SUSTAINED_TFLOPS = {
    (7, "fp16"): 70.0,
    (7, "fp32"): 13.0,
    (8, "fp16"): 120.0,
    (8, "tf32"): 95.0,
    (8, "fp32"): 16.5,
    (9, "fp16"): 560.0,
    (9, "bf16"): 560.0,
    (9, "fp32"): 45.0,
}
_MEMORY_EFFICIENCY = 0.8
_FIXED_US = 2.0
_BYTES = {"fp16": 2, "bf16": 2, "fp32": 4, "tf32": 4}
_ARCH_PREFIX = {7: "volta", 8: "ampere", 9: "sm90"}


def roofline_us(spec, flops, nbytes, math_kind):
    """Duration of a kernel doing `flops` in `math_kind` and moving `nbytes`, on the 0.5 us grid."""
    rate = _SUSTAINED_TFLOPS[(spec.compute_capability[0], math_kind)] * 1e6  # flop per us
    bandwidth = spec.memory_bandwidth_bytes * _MEMORY_EFFICIENCY / 1e6  # bytes per us
    return half_us(_FIXED_US + flops / rate + nbytes / bandwidth)


def gemm(spec, m, n, k, math_kind, layout="nn", batch=1, tile=(128, 128), hlo_op=None):
    """A cuBLAS GEMM C[m,n] = A[m,k] B[k,n] (`batch` of them), named as cuBLAS names it on `spec`."""
    major = spec.compute_capability[0]
    size = _BYTES[math_kind]
    tile_name = f"{tile[0]}x{tile[1]}"
    if math_kind == "fp32":  # SIMT sgemm tiles are half as wide
        tile = (tile[0], tile[1] // 2)
        name = f"{_ARCH_PREFIX[major]}_sgemm_{tile[0]}x{tile[1]}_{layout}"
        block, registers, static, dynamic = 256, 122, 16384, 0
    elif major == 7:
        name = f"volta_fp16_s884gemm_fp16_{tile_name}_ldg8_f2f_{layout}"
        block, registers, static, dynamic = 256, 232, 0, 49152
    elif major == 8 and math_kind == "tf32":
        name = f"ampere_tf32_s1688gemm_tf32_{tile_name}_ldg8_f2f_stages_32x3_{layout}"
        block, registers, static, dynamic = 256, 254, 0, 98304
    elif major == 8:
        name = f"ampere_fp16_s16816gemm_fp16_{tile_name}_ldg8_f2f_stages_32x5_{layout}"
        block, registers, static, dynamic = 256, 234, 0, 81920
    else:
        name = (
            f"sm90_xmma_gemm_{math_kind}{math_kind}_{math_kind}f32_f32_{layout}_n_tilesize{tile_name}x64_"
            f"warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas"
        )
        block, registers, static, dynamic = 384, 168, 0, 213_248
    grid = (math.ceil(n / tile[1]), math.ceil(m / tile[0]), batch)
    duration = roofline_us(spec, 2.0 * m * n * k * batch, (m * k + k * n + m * n) * size * batch, math_kind)
    return Kernel(name, duration, grid, (block, 1, 1), registers, static, dynamic, hlo_op)


def conv(spec, pass_name, n, h, w, c, k, r, s, stride=1, math_kind="fp16"):
    """A cuDNN convolution (NHWC input n,h,w,c; k filters r x s); pass_name is fprop, dgrad or wgrad."""
    p, q = math.ceil(h / stride), math.ceil(w / stride)
    flops = 2.0 * n * p * q * k * c * r * s
    size = _BYTES[math_kind]
    nbytes = (n * h * w * c + n * p * q * k + k * c * r * s) * size
    arch = _ARCH_PREFIX[spec.compute_capability[0]]
    if math_kind == "fp32":
        mma, layout = f"{arch}_scudnn", "nn_v1"
        name = {
            "fprop": f"{mma}_128x64_relu_interior_{layout}",
            "dgrad": f"{mma}_128x64_stridedB_interior_{layout}",
            "wgrad": f"{mma}_128x128_stridedB_splitK_interior_{layout}",
        }[pass_name]
        block, registers, static, dynamic = 256, 128, 16384, 0
    else:
        mma = {7: "volta_fp16_s884cudnn_fp16", 8: "ampere_fp16_s16816cudnn_fp16"}[spec.compute_capability[0]]
        name = {
            "fprop": f"{mma}_256x128_ldg8_relu_f2f_exp_small_nhwc_tn_v1",
            "dgrad": f"{mma}_128x128_ldg8_dgrad_f2f_exp_small_nhwc2nchw_tt_v1",
            "wgrad": f"{mma}_128x128_ldg8_wgrad_idx_exp_interior_nhwc_nt_v1",
        }[pass_name]
        block, registers, static, dynamic = 256, 232, 0, 49152
    rows = {"fprop": n * p * q, "dgrad": n * h * w, "wgrad": k}[pass_name]
    cols = {"fprop": k, "dgrad": c, "wgrad": c * r * s}[pass_name]
    tile = 256 if pass_name == "fprop" else 128
    grid = (math.ceil(rows / tile), math.ceil(cols / 128), 1)
    return Kernel(name, roofline_us(spec, flops, nbytes, math_kind), grid, (block, 1, 1), registers, static, dynamic)


def _elementwise_grid(spec, elements, threads=256, vector=4):
    blocks = min(math.ceil(elements / (threads * vector)), spec.sm_count * 8)
    return (max(1, blocks), 1, 1), (threads, 1, 1)


def memory_bound(spec, name, elements, dtype="fp32", passes=3, registers=24, threads=256):
    """A kernel that streams `passes` tensors of `elements` values (elementwise, reductions, optimizers)."""
    grid, block = _elementwise_grid(spec, elements, threads)
    nbytes = elements * _BYTES[dtype] * passes
    return Kernel(name, roofline_us(spec, 0.0, nbytes, "fp32"), grid, block, registers)


def eigen(functor, dtype="float", binary=True):
    """Eigen's elementwise kernel name for `functor` (e.g. scalar_sum_op) on `dtype`."""
    tensor = f"Eigen::TensorMap<Eigen::Tensor<{dtype}, 1, 1, long>, 16, Eigen::MakePointer>"
    const = f"Eigen::TensorMap<Eigen::Tensor<{dtype} const, 1, 1, long>, 16, Eigen::MakePointer> const"
    if binary:
        expr = f"Eigen::TensorCwiseBinaryOp<Eigen::internal::{functor}<{dtype}, {dtype}>, {const}, {const}>"
    else:
        expr = f"Eigen::TensorCwiseUnaryOp<Eigen::internal::{functor}<{dtype}>, {const}>"
    evaluator = f"Eigen::TensorEvaluator<Eigen::TensorAssignOp<{tensor}, {expr} const> const, Eigen::GpuDevice>"
    return f"void Eigen::internal::EigenMetaKernel<{evaluator}, long>({evaluator}, long)"


def eigen_cast_to_half():
    """Eigen's float->half Cast kernel: it reads float tensors and writes an Eigen::half one."""
    unary = eigen("scalar_cast_op", "float", binary=False).replace(
        "scalar_cast_op<float>", "scalar_cast_op<float, Eigen::half>"
    )
    return unary.replace(
        "TensorAssignOp<Eigen::TensorMap<Eigen::Tensor<float,",
        "TensorAssignOp<Eigen::TensorMap<Eigen::Tensor<Eigen::half,",
    )


def bias_add(dtype="float"):
    return f"void tensorflow::functor::BiasNHWCKernel<{dtype}>(int, {dtype} const*, {dtype} const*, {dtype}*, int)"


def bias_grad(dtype="float"):
    return (
        f"void tensorflow::functor::BiasGradNHWC_SharedAtomics<{dtype}>(int, {dtype} const*, {dtype}*, {dtype}*, int)"
    )


def batch_norm(direction, dtype="__half"):
    if direction == "forward":
        return (
            f"void cudnn::bn_fw_tr_1C11_kernel_NCHW<{dtype}, float, 512, true, 1>(cudnnTensorStruct, "
            f"{dtype} const*, cudnnTensorStruct, {dtype}*, float const*, float const*, float, float, float*, "
            f"float*, float*, float*, float, float)"
        )
    return (
        f"void cudnn::bn_bw_1C11_kernel_new<{dtype}, float, float2, 512, true, 1>({dtype}, {dtype}, "
        f"{dtype}, {dtype}, cudnnTensorStruct, {dtype} const*, cudnnTensorStruct, {dtype} const*, "
        f"cudnnTensorStruct, {dtype}*, float const*, float*, float*, float const*, float const*, float)"
    )


def nccl_all_reduce(dtype, duration_us, channels=16):
    """NCCL's ring all-reduce kernel (NCCL >= 2.19 names); its duration includes waiting for the peers."""
    return Kernel(
        f"ncclDevKernel_AllReduce_Sum_{dtype}_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
        half_us(duration_us),
        (channels, 1, 1),
        (640, 1, 1),
        96,
        0,
        0,
    )


def xla_fusion(spec, hlo_name, elements, dtype="bf16", passes=3, registers=32):
    """An XLA fusion kernel: the kernel is named after its HLO instruction with `.` replaced by `_`."""
    grid, block = _elementwise_grid(spec, elements, 128, vector=4)
    nbytes = elements * _BYTES[dtype] * passes
    return Kernel(
        hlo_name.replace(".", "_"), roofline_us(spec, 0.0, nbytes, "fp32"), grid, block, registers, hlo_op=hlo_name
    )
