"""Kernel families a name identifies by plain substring tests: fp32 SIMT GEMMs, Hopper/Blackwell tensor-core
GEMM and attention kernels, and the ones whose design is one (or two) large blocks per SM, so that low occupancy
is not what limits them (they are judged by their FLOP rate against the roof instead)."""

from __future__ import annotations

# cuBLAS/CUTLASS spell the math instruction of a GEMM in its name: `_ffma_` (fp32 fused multiply-add on the CUDA
# cores) and `simt` mean no Tensor Core, whatever else the name says (`sm80_xmma_gemm_f32f32_..._ffma_...`).
_SIMT_MARKS = ("_ffma_", "simt", "_fma_")
# Tensor-core GEMM/attention families of Hopper (sm90) and Blackwell (sm100) and their libraries: cuBLAS's nvjet
# kernels, warpgroup MMA (wgmma/gmma), TMA and warp-specialized CUTLASS 3 kernels, cuDNN v9's runtime-fused
# graphs (including its SDPA), FlashAttention 2/3 and xformers/PyTorch memory-efficient attention.
_TENSOR_CORE_FAMILIES = (
    "nvjet",
    "wgmma",
    "gmma_",
    "_gmma",
    "warpspecialized",
    "warp_specialized",
    "tma_",
    "cutlass3x_sm90",
    "cutlass3x_sm100",
    "cutlass_sm90",
    "cutlass_sm100",
    "sm90_xmma",
    "sm100_xmma",
    "cudnn_generated_fort_native_sdpa",
    "flash_fwd",
    "flash_bwd",
    "flashattn",
    "flash::",
    "fmha",
    "pytorch_flash::",
    "attentionkernel",
    "attention_kernel_backward",
    "tensorop",
)
# Matrix-multiply kernels compiled by Triton (XLA's `gemm_fusion_dot`/`triton_gemm`, Inductor's `triton_tem_*mm`,
# `triton_*_mm_*`): one large tile per block by design.
_TRITON_MATMUL = ("gemm_fusion", "triton_gemm", "triton_tem_", "_mm_", "_bmm_", "_addmm_")
# Shared memory per block from which at most two blocks fit on an SM of any current GPU (V100 96 KiB, A100 164,
# H100/H200 228): a kernel asking this much chose a large tile over occupancy.
LARGE_SHARED_MEMORY_BYTES = 96 * 1024
# cuBLAS nvjet kernels name their types after the family and architecture: `nvjet_sm90_tst_...` is bf16 inputs
# (t), fp32 compute (s), bf16 output (t); `nvjet_hsh_...` fp16. Only the input letters we know are read.
_NVJET_INPUT = {"t": "bf16", "h": "f16"}


def is_simt_gemm(name: str) -> bool:
    """A GEMM/convolution kernel whose name says it runs on the CUDA cores (fp32 FMA, SIMT), not Tensor Cores."""
    lower = name.lower()
    return any(mark in lower for mark in _SIMT_MARKS)


def is_tensor_core_family(name: str) -> bool:
    """A Hopper/Blackwell-era tensor-core GEMM or attention kernel, known by its family name."""
    lower = name.lower()
    return not is_simt_gemm(name) and any(family in lower for family in _TENSOR_CORE_FAMILIES)


def is_triton_matmul(name: str) -> bool:
    lower = name.lower()
    return lower.startswith(("triton", "gemm_fusion")) and any(part in lower for part in _TRITON_MATMUL)


def nvjet_input_dtype(name: str) -> str | None:
    """ "bf16" or "f16" for an nvjet kernel whose type code says so (`nvjet_sm90_tst_...`, `nvjet_hsh_...`); None
    otherwise."""
    if not name.startswith("nvjet_"):
        return None
    for part in name.split("_")[1:3]:
        if len(part) == 3 and part.isalpha():
            return _NVJET_INPUT.get(part[0])
    return None


def occupancy_by_design(name: str, shared_memory_bytes: int, uses_tensor_cores: bool, library_math: bool) -> bool:
    """True where low occupancy is the kernel's design rather than its limiter: tensor-core and library GEMMs and
    attention (one large tile per SM), Triton matmuls, and any kernel whose shared memory per block leaves room
    for two blocks at most."""
    if uses_tensor_cores or library_math or is_tensor_core_family(name) or is_triton_matmul(name):
        return True
    return shared_memory_bytes is not None and shared_memory_bytes >= LARGE_SHARED_MEMORY_BYTES
