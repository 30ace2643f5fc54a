"""What a kernel's name (and its op's name) tells: NCCL collective, Tensor Core use, precision, eligibility."""

from __future__ import annotations

import re

from tb_gpu_advisor.analysis.kernel_families import is_simt_gemm, is_tensor_core_family, nvjet_input_dtype
from tb_gpu_advisor.model.vendor import AMD
from tb_gpu_advisor.text_match import in_order

# XProf's list of substrings that mark a Tensor Core kernel, plus Hopper/Ampere CUTLASS and cuBLAS spellings.
_TENSOR_CORE_PATTERNS = (
    "16816",
    "c1688",
    "conv1x1",
    "conv2d_c1_k1",
    "dgrad_1x1_stride_2x2",
    "direct_group",
    "first_layer_wgrad_kernel",
    "h1688",
    "h884",
    "hmma",
    "i16832",
    "i8816",
    "s884",
    "s1688",
    "xmma_gemm",
    "xmma_implicit_gemm",
    "xmma_sparse_conv",
    "xmma_sparse_gemm",
    "xmma_warp_specialized_implicit_gemm",
)
# TF32 exists only on Tensor Cores, and cuDNN/cuBLAS xmma kernels name their MMA instruction shape
# (`_tensor16x8x8_`) when they use them (`_ffma_` when they do not).
# (`cutlass...tensorop` says no more than `tensorop`; `hgemm...tensor` is tested in order, in linear time.)
_EXTRA_TENSOR_CORE = re.compile(r"sm90_xmma|gmma|wgmma|tensorop|tf32|_tensor\d+x\d+x\d+|bf16gemm", re.IGNORECASE)
# Names that say the kernel computes in 16 bits or fewer (XProf checks `half` and `fp16` only).
_LOW_PRECISION = re.compile(
    r"half|fp16|bf16|bfloat16|__nv_bfloat|\bf16\b|_f16|f16_|h884|h1688|h16816|hmma|"
    r"hgemm|e4m3|e5m2|fp8",
    re.IGNORECASE,
)
# Tensile/hipBLASLt GEMM names spell their data types after the index order: `Cijk_Ailk_Bljk_BBS_...` is bf16
# inputs and output with fp32 compute (H half, B bf16, S float, D double, F8/B8 fp8/bf8, I8 int8).
_TENSILE_TYPES = re.compile(r"^Cijk_A[a-z]+_B[a-z]+_([A-Za-z0-9]+)_")
_TENSILE_LOW_PRECISION = ("H", "B", "F8", "I8", "4xi8")
# TensorFlow's Eigen kernels name the tensor they write first: `TensorAssignOp<Eigen::TensorMap<Eigen::Tensor<T, ...`.
_EIGEN_ASSIGNED_TYPE = re.compile(r"TensorAssignOp<Eigen::TensorMap<Eigen::Tensor<([\w:]+)")
# Kernels that do 32-bit floating-point matrix math without Tensor Cores: candidates for mixed precision.
# Words that say so anywhere (`sgemm` also covers `implicit_convolve_sgemm`, `cutlass...sgemm` and
# `Kernel2<cutlass_80_simt_sgemm`), then pairs of words that say so in this order (lower case), and cuDNN's
# `sm<NN>_xmma_..._f32f32_f32f32`.
_FP32_MATMUL = re.compile(r"sgemm|scudnn", re.IGNORECASE)
_FP32_MATMUL_IN_ORDER = (
    ("gemm", "f32"),
    ("f32", "gemm"),
    ("fp32", "gemm"),
    ("gemm", "fp32"),
    ("gemv2t_kernel_val<", "float"),
)
_XMMA_ARCH = re.compile(r"sm\d+_xmma_", re.IGNORECASE)
_TC_ELIGIBLE_SUFFIXES = (
    "Conv2D",
    "Conv2DBackpropFilter",
    "Conv2DBackpropInput",
    "Conv3D",
    "DepthwiseConv2dNative",
    "DepthwiseConv2dNativeBackpropFilter",
    "DepthwiseConv2dNativeBackpropInput",
    "/MatMul",
    "FusedMatMul",
    "/CudnnRNN",
    "XlaDot",
    "XlaDotV2",
)
_TC_ELIGIBLE_PARTS = ("BatchMatMul", "CudnnRNNV", "CudnnRNNForward", "CudnnRNNBackprop")
# XLA instruction names of matrix multiplies and convolutions (JAX and TF-XLA kernels carry `hlo_op`).
_XLA_DOT = re.compile(r"^(dot|convolution|cublas|cudnn|triton_gemm|gemm)", re.IGNORECASE)
_JAX_DOT = re.compile(r"^(dot_general|conv_general_dilated|einsum|matmul)\b")


# AMD matrix-core (MFMA) kernels: hipBLASLt/Tensile GEMMs tagged with their MFMA instruction (`_MI16x16x16`),
# composable-kernel GEMMs (`ck::`, `ck_tile::`), and XLA's GEMM fusions, which Triton compiles to MFMA on CDNA.
_AMD_MATRIX_CORE = re.compile(r"\bck_tile::|\bck::|^gemm_fusion|^triton_gemm", re.IGNORECASE)
_MFMA_TILE = re.compile(r"_MI\d+x\d+x\d", re.IGNORECASE)


# The HIP runtime's own copy and fill kernels (hipMemcpy between device buffers, hipMemset): kernels to the
# profiler and to XProf's kernel table, copies and memsets to the time breakdown.
_RUNTIME_COPY = re.compile(r"^__amd_rocclr_(copy|fill)", re.IGNORECASE)


def is_runtime_copy(name: str) -> bool:
    """A kernel the GPU runtime launches to copy or fill memory (ROCm's `__amd_rocclr_copyBuffer*`/`fillBuffer*`)."""
    return bool(_RUNTIME_COPY.match(name))


def is_nccl(name: str) -> bool:
    """XProf's rule: a collective kernel's name starts with `nccl` (any case); RCCL's own `rccl` prefix too."""
    return name[:4].lower() in ("nccl", "rccl")


def uses_tensor_cores(name: str) -> bool:
    """A Tensor Core kernel by its name; never one whose name says fp32 FMA on the CUDA cores (`_ffma_`, simt)."""
    if is_simt_gemm(name):
        return False
    return (
        any(pattern in name for pattern in _TENSOR_CORE_PATTERNS)
        or is_tensor_core_family(name)
        or bool(_EXTRA_TENSOR_CORE.search(name))
        or in_order(name.lower(), "hgemm", "tensor")
    )


def uses_matrix_units(name: str, vendor: str | None = None) -> bool:
    """Tensor Cores on NVIDIA (and when the vendor is unknown); matrix cores on AMD."""
    if vendor == AMD:
        return bool(_AMD_MATRIX_CORE.search(name)) or (
            name[:5].lower() == "cijk_" and bool(_MFMA_TILE.search(name.partition("\n")[0], 5))
        )
    return uses_tensor_cores(name)


def is_low_precision(name):
    """True when the kernel name says it computes in 16-bit (or 8-bit) floating point; an Eigen assignment kernel
    by the type of the tensor it writes (a half->float cast or a comparison of halves is not 16-bit output)."""
    written = _EIGEN_ASSIGNED_TYPE.search(name)
    if written:
        return bool(_LOW_PRECISION.search(written.group(1)))
    if name.startswith("Cijk_"):
        types = _TENSILE_TYPES.match(name)
        return bool(types) and types.group(1).startswith(_TENSILE_LOW_PRECISION)
    return nvjet_input_dtype(name) is not None or bool(_LOW_PRECISION.search(name))


# Names that say the kernel computes in 32-bit (or 64-bit) floating point: a float/double type, cuBLAS/cuDNN
# single-precision prefixes (sgemm, scudnn), TF32 Tensor-Core shapes (s1688, s16816), xmma's f32 type codes.
_HIGH_PRECISION = re.compile(
    r"(?<![a-z])float(?!16)|double|(?<![a-z])f32|tf32|fp32|(?<![a-z])f64|fp64|"
    r"sgemm|dgemm|cgemm|zgemm|scudnn|dcudnn|(?<![a-z0-9])s(?:1688|16816|884)",
    re.IGNORECASE,
)
_EIGEN_FLOAT_TYPES = re.compile(r"half|bfloat16|float|double", re.IGNORECASE)
# Element types of a kernel's op (HLO instruction, TF op inputs) by the precision they compute in.
_LOW_DTYPES = ("f16", "bf16", "f8e4m3fn", "f8e5m2", "f8e4m3fnuz", "f8e5m2fnuz", "f8e4m3b11fnuz", "f8e4m3", "f8e3m4")
_HIGH_DTYPES = ("f32", "f64", "tf32")
PRECISIONS = ("16bit", "32bit")


def kernel_precision(name: str, dtype: str | None = None) -> str | None:
    """ "16bit", "32bit" or None (unknown): the floating-point width a kernel computes in, from the type its name
    says it writes (an Eigen assignment kernel's output tensor, a Tensile type code; for an Eigen kernel writing
    bool or integers the type it reads), else any 16-bit or 32-bit spelling in its name, else `dtype`, its op's
    element type (HLO or TF op inputs) when known. A kernel whose name says no floating-point type and whose op
    is not costed (a custom kernel, an uncosted XLA fusion) is unknown, never assumed 32-bit."""
    written = _EIGEN_ASSIGNED_TYPE.search(name)
    if written and _EIGEN_FLOAT_TYPES.search(written.group(1)):
        return "16bit" if _LOW_PRECISION.search(written.group(1)) else "32bit"
    if name.startswith("Cijk_"):
        types = _TENSILE_TYPES.match(name)
        if types:
            code = types.group(1)
            if code.startswith(_TENSILE_LOW_PRECISION):
                return "16bit"
            if code.startswith(("S", "D")):
                return "32bit"
    elif nvjet_input_dtype(name):
        return "16bit"
    else:
        # An Eigen kernel writing bool or integers (a comparison, an arg-max) computes in the type it reads.
        text = name[written.end() :] if written else name
        if _LOW_PRECISION.search(text):
            return "16bit"
        if _HIGH_PRECISION.search(text):
            return "32bit"
    if dtype in _LOW_DTYPES:
        return "16bit"
    if dtype in _HIGH_DTYPES:
        return "32bit"
    return None


def is_fp32_matmul(name: str) -> bool:
    """A 32-bit matrix-multiply or convolution kernel that does not use Tensor Cores."""
    if is_simt_gemm(name) and ("gemm" in name.lower() or "conv" in name.lower()):
        return not is_low_precision(name)
    return _names_fp32_matmul(name) and not uses_tensor_cores(name) and not is_low_precision(name)


def _names_fp32_matmul(name):
    if _FP32_MATMUL.search(name):
        return True
    lower = name.lower()
    if any(in_order(lower, first, then) for first, then in _FP32_MATMUL_IN_ORDER):
        return True
    return any(
        (arch := _XMMA_ARCH.search(line)) and "f32f32_f32f32" in line[arch.end() :].lower() for line in name.split("\n")
    )


def is_tensor_core_eligible(op_name: str, kernel_name: str) -> bool:
    """XProf's eligibility rule on the op name, plus XLA dot/convolution instructions, or TC use itself."""
    if uses_tensor_cores(kernel_name):
        return True
    if not op_name:
        return False
    if op_name.endswith(_TC_ELIGIBLE_SUFFIXES) or any(part in op_name for part in _TC_ELIGIBLE_PARTS):
        return True
    # XLA instruction names (`dot.7`) and JAX op names, whose last part is the primitive (`jit(f)/dot_general`).
    return bool(_XLA_DOT.match(op_name) or _JAX_DOT.match(op_name.rpartition("/")[2]))


# Element-wise (and small reduction) kernels of TensorFlow's Eigen/functor library and of PyTorch-style
# naming: the kernels XLA fuses into a few.
_ELEMENTWISE = re.compile(
    r"EigenMetaKernel|elementwise|Cwise|scalar_|BiasNHWC|BiasNCHW|BiasGrad|Philox|"
    r"functor::|Relu|Sigmoid|Tanh|Softplus|ApplyAdam|ApplyGradientDescent|ApplyMomentum|"
    r"SparseApply|_kernel_cast|CastKernel|multi_tensor_apply|dropout",
    re.IGNORECASE,
)
# Kernels of vendor math and communication libraries, never element-wise however they are named (cuDNN's
# `volta_fp16_s884cudnn_..._relu_...` fuses a ReLU into a convolution): cuDNN, cuBLAS/cuBLASLt, CUTLASS, xmma,
# per-architecture SASS kernels (`sm80_`, `volta_`, `ampere_`...), MAGMA, cuFFT, hipBLASLt/Tensile (`Cijk_`),
# rocBLAS, MIOpen, composable kernel (`ck::`, `ck_tile::`).
_LIBRARY_KERNEL = re.compile(
    r"cudnn|cublas|cutlass|xmma|magma_|rocblas|hipblas|miopen|Cijk_|\bck_tile::|\bck::|internal::gemvx|"
    r"splitKreduce|^(void )?(sm\d{2,3}_|maxwell_|pascal_|volta_|turing_|ampere_|ada_|hopper_|blackwell_|"
    r"gemm|gemv|fft2d_)",
    re.IGNORECASE,
)
# Names XLA gives the kernels it emits, checked before library names (`gemm_fusion_dot` is XLA's, not cuBLAS's).
_XLA_PREFIX = re.compile(r"^(fusion|gemm_fusion|triton_|wrapped_|loop_|input_)", re.IGNORECASE)
KERNEL_CLASSES = ("collective", "runtime_copy", "xla", "library", "elementwise", "other")
# Kernels generated by XLA are named after their fusion or emitter (loop_add_fusion, input_reduce_fusion_3,
# fusion_12, triton_gemm_dot_1, wrapped_convert ...).
_XLA_KERNEL = re.compile(r"fusion|^triton_|^wrapped_|^loop_|^input_", re.IGNORECASE)
# Vendor GEMM/convolution kernels: large tiles and low occupancy by design.
_LIBRARY_MATH = re.compile(
    r"(?<!fb)gemm|gemv|cutlass|cublas|cudnn|xmma|conv(?!ersion)|implicit|winograd|wgrad|dgrad", re.IGNORECASE
)


def kernel_class(name: str) -> str:
    """One of KERNEL_CLASSES: collective, the runtime's copy/fill, XLA-generated, vendor library, a framework's
    element-wise kernel, or other (reductions, normalization, sort, embedding...)."""
    if is_nccl(name):
        return "collective"
    if is_runtime_copy(name):
        return "runtime_copy"
    if _XLA_PREFIX.match(name):
        return "xla"
    if _LIBRARY_KERNEL.search(name):
        return "library"
    if is_xla_kernel(name):
        return "xla"
    if _ELEMENTWISE.search(without_parameters(name)):
        return "elementwise"
    return "other"


# Namespaces and prefixes of the kernels frameworks and their libraries ship (PyTorch's at::/c10::, TensorFlow's and
# Eigen's, CUB/Thrust, FlashAttention, Apex, Transformer Engine, JAX/XLA's runtime, PyTorch's anonymous-namespace
# kernels such as softmax_warp_forward): not a kernel the user launches.
_FRAMEWORK_KERNEL = re.compile(
    r"\b(at|c10|tensorflow|Eigen|cub|thrust|xla|jax|stream_executor|flash|apex|transformer_engine|onnxruntime)::|"
    r"\(anonymous namespace\)::|^(void )?(flash_|fmha|cub|cunn_|at_|tf_|Eigen)",
    re.IGNORECASE,
)


def is_custom_kernel(name: str) -> bool:
    """A kernel neither a library, a framework nor XLA/Triton generated (kernel_class "other" outside the
    frameworks' namespaces): a custom op's own CUDA kernel, whose grid its own launch code sets
    (`query_ball_point_gpu`, `farthestpointsamplingKernel`)."""
    return kernel_class(name) == "other" and not _FRAMEWORK_KERNEL.search(name)


def without_parameters(name: str) -> str:
    """A demangled signature without its parameter list: `void f<T>(float*, Philox)` -> `void f<T>`, so the
    types a kernel takes do not classify it."""
    depth = 0
    index = 0
    while index < len(name):
        char = name[index]
        if char == "<":
            depth += 1
        elif char == ">" and depth:
            depth -= 1
        elif char == "(" and depth == 0:
            if name.startswith("(anonymous namespace)", index):
                index += len("(anonymous namespace)")
                continue
            return name[:index]
        index += 1
    return name


def is_elementwise(name: str) -> bool:
    """A framework element-wise kernel: never a library, collective or XLA-generated one."""
    return kernel_class(name) == "elementwise"


def is_xla_kernel(name: str) -> bool:
    """A kernel XLA generated (the program is already compiled with XLA)."""
    return bool(_XLA_KERNEL.search(name))


def is_library_math(name: str) -> bool:
    """A vendor library's kernel (cuBLAS, cuDNN, CUTLASS, hipBLASLt/Tensile, composable kernel...) or a
    matrix-multiply or convolution kernel: tuned tiles whose occupancy the user does not choose."""
    return (
        bool(_LIBRARY_MATH.search(name))
        or name.startswith("nvjet_")
        or is_tensor_core_family(name)
        or kernel_class(name) == "library"
    )


# The element type in NCCL/RCCL kernel names, in their several spellings across versions:
# ncclDevKernel_AllReduce_Sum_f32_RING_LL, ncclKernel_AllReduce_RING_LL_Sum_float, ncclAllReduceRingLLKernel_sum_f16.
_COLLECTIVE_DTYPE = re.compile(
    r"(?<![a-z0-9])(bf16|bfloat16|f16|half|float16|f32|float32|float|f64|double|"
    r"f8e4m3|f8e5m2|i8|int8|u8|uint8|i32|int32|u32|uint32|i64|int64|u64|uint64)(?![a-z0-9])",
    re.IGNORECASE,
)
_DTYPE_NAMES = {
    "bfloat16": "bf16",
    "half": "f16",
    "float16": "f16",
    "float": "f32",
    "float32": "f32",
    "double": "f64",
    "int8": "i8",
    "uint8": "u8",
    "int32": "i32",
    "uint32": "u32",
    "int64": "i64",
    "uint64": "u64",
}


def collective_dtype(kernel_name: str, op_name: str | None = None) -> str | None:
    """ "f32", "bf16", "f16", ... the collective reduces in, from its kernel name, else its op (HLO) name; None when
    neither says (e.g. `ncclDevKernel_Generic`)."""
    for text in (kernel_name, op_name or ""):
        found = _COLLECTIVE_DTYPE.search(text.replace("_", " "))
        if found:
            value = found.group(1).lower()
            return _DTYPE_NAMES.get(value, value)
    return None


# The collective a kernel runs, from NCCL/RCCL names in their spellings across versions
# (ncclKernel_AllReduce_RING_LL_Sum_float, ncclDevKernel_SendRecv, ncclAllToAllKernel, ncclKernel_Broadcast_...)
# or from an XLA op name (all-reduce.3, all-to-all, collective-permute).
_COLLECTIVE_KINDS = (
    ("allreduce", re.compile(r"all[-_]?reduce", re.IGNORECASE)),
    ("reducescatter", re.compile(r"reduce[-_]?scatter", re.IGNORECASE)),
    ("allgather", re.compile(r"all[-_]?gather", re.IGNORECASE)),
    ("alltoall", re.compile(r"all[-_]?to[-_]?all", re.IGNORECASE)),
    ("sendrecv", re.compile(r"send|recv|collective[-_]permute", re.IGNORECASE)),
    ("broadcast", re.compile(r"broadcast", re.IGNORECASE)),
    ("reduce", re.compile(r"reduce", re.IGNORECASE)),
)


def collective_kind(kernel_name, op_name=None):
    """ "allreduce", "sendrecv", "alltoall", ... for a collective kernel, from its name, else its op (HLO) name;
    None when neither says (e.g. `ncclDevKernel_Generic`)."""
    for text in (kernel_name, op_name or ""):
        for kind, pattern in _COLLECTIVE_KINDS:
            if pattern.search(text):
                return kind
    return None
