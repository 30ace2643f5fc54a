"""What a kernel's name (and its op's name) tells: NCCL collective, Tensor Core use, precision, eligibility."""

import re

# XProf's list of substrings that mark a Tensor Core kernel, plus Hopper/Ampere CUTLASS and cuBLAS spellings.
_TENSOR_CORE_PATTERNS = (
    "16816", "c1688", "conv1x1", "conv2d_c1_k1", "dgrad_1x1_stride_2x2", "direct_group",
    "first_layer_wgrad_kernel", "h1688", "h884", "hmma", "i16832", "i8816", "s884", "s1688", "xmma_gemm",
    "xmma_implicit_gemm", "xmma_sparse_conv", "xmma_sparse_gemm", "xmma_warp_specialized_implicit_gemm",
)
_EXTRA_TENSOR_CORE = re.compile(r"sm90_xmma|gmma|wgmma|tensorop|_tf32_|bf16gemm|hgemm.*tensor|cutlass.*tensorop",
                                re.IGNORECASE)
# Names that say the kernel computes in 16 bits or fewer (XProf checks `half` and `fp16` only).
_LOW_PRECISION = re.compile(r"half|fp16|bf16|bfloat16|__nv_bfloat|\bf16\b|_f16|f16_|h884|h1688|h16816|hmma|"
                            r"hgemm|e4m3|e5m2|fp8", re.IGNORECASE)
# Kernels that do 32-bit floating-point matrix math without Tensor Cores: candidates for mixed precision.
_FP32_MATMUL = re.compile(r"sgemm|gemm.*f32|f32.*gemm|fp32.*gemm|gemm.*fp32|scudnn|implicit_convolve_sgemm|"
                          r"sm\d+_xmma_.*f32f32_f32f32|cutlass.*sgemm|gemv2T_kernel_val<.*float|"
                          r"Kernel2<cutlass_80_simt_sgemm", re.IGNORECASE)
_TC_ELIGIBLE_SUFFIXES = ("Conv2D", "Conv2DBackpropFilter", "Conv2DBackpropInput", "Conv3D",
                         "DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropFilter",
                         "DepthwiseConv2dNativeBackpropInput", "/MatMul", "FusedMatMul", "/CudnnRNN",
                         "XlaDot", "XlaDotV2")
_TC_ELIGIBLE_PARTS = ("BatchMatMul", "CudnnRNNV", "CudnnRNNForward", "CudnnRNNBackprop")
# XLA instruction names of matrix multiplies and convolutions (JAX and TF-XLA kernels carry `hlo_op`).
_XLA_DOT = re.compile(r"^(dot|convolution|cublas|cudnn|triton_gemm|gemm)", re.IGNORECASE)


def is_nccl(name):
    """XProf's rule: a collective kernel's name starts with `nccl` (any case)."""
    return name[:4].lower() == "nccl"


def uses_tensor_cores(name):
    return any(pattern in name for pattern in _TENSOR_CORE_PATTERNS) or bool(_EXTRA_TENSOR_CORE.search(name))


def is_low_precision(name):
    """True when the kernel name says it computes in 16-bit (or 8-bit) floating point."""
    return bool(_LOW_PRECISION.search(name))


def is_fp32_matmul(name):
    """A 32-bit matrix-multiply or convolution kernel that does not use Tensor Cores."""
    return bool(_FP32_MATMUL.search(name)) and not uses_tensor_cores(name) and not is_low_precision(name)


def is_tensor_core_eligible(op_name, kernel_name):
    """XProf's eligibility rule on the op name, plus XLA dot/convolution instructions, or TC use itself."""
    if uses_tensor_cores(kernel_name):
        return True
    if not op_name:
        return False
    if op_name.endswith(_TC_ELIGIBLE_SUFFIXES) or any(part in op_name for part in _TC_ELIGIBLE_PARTS):
        return True
    return bool(_XLA_DOT.match(op_name))
