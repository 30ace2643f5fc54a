"""Which kernels of a PyTorch op instance get its matrix FLOPs. The reader (kineto.op_work) splits an op's FLOPs
over every kernel it launched by their time; a GEMM or fused-attention op also launches small helper kernels
(cuDNN's SDPA backward runs `compute_dot_do_o` and `convert_dq_to_16bits` beside its Tensor Core kernel, a
split-K GEMM a reduction), which do none of its matrix work. Here the FLOPs (and logical bytes) of a matrix op
go to its matrix kernels only, known by their names; the helpers keep the op's element type but no FLOPs. Where
no kernel of the instance is known by name to be its matrix kernel and several kernel names share it, the split
stays by time and the rows say it is the op's average (OP_SPLIT_METHOD), not each kernel's rate."""

from __future__ import annotations

import re
import weakref
from dataclasses import replace

import numpy as np

from tb_gpu_advisor.analysis.kernel_families import is_simt_gemm, is_triton_matmul
from tb_gpu_advisor.analysis.kernel_names import is_fp32_matmul, is_xla_kernel, uses_tensor_cores
from tb_gpu_advisor.analysis.peaks import device_peaks
from tb_gpu_advisor.model.trace import ActivityKind
from tb_gpu_advisor.model.work import EventWork
from tb_gpu_advisor.readers.hlo.op_cost import MATRIX, VECTOR, OpCost

OP_SPLIT_METHOD = "the op's FLOPs split by time over kernels of several names, none known to be its matrix kernel"
HELPER_METHOD = "a helper kernel of a matrix op (the op's FLOPs go to its matrix kernels)"
# Helper kernels of fused attention backward, in FlashAttention's and cuDNN's spelling: a rowwise dot(dO, O) and
# the casts of the fp32 dQ/dK/dV accumulators. Their family names (flash_bwd...) would otherwise say matrix.
_HELPERS = ("dot_do_o", "convert_dq", "convert_dkv")
# Matrix kernels by name beyond the Tensor Core, SIMT-GEMM and Triton families: library GEMMs, GEMVs and
# convolutions (also AMD's Tensile `Cijk_` kernels) and fused attention.
_MATRIX = re.compile(r"gemm|gemv|convolve|convolution|fprop|dgrad|wgrad|^cijk_|attention|fmha|sdpa", re.IGNORECASE)

# XLA on NVIDIA compute capability 8.0+ runs an f32 dot at DEFAULT precision in TF32 (configuration.py says so too).
_XLA_TF32_MIN_CC = (8, 0)
_16_BIT = ("bf16", "f16")

_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def is_matrix_kernel(name: str) -> bool:
    """A kernel that does an op's matrix work, by its name: a GEMM, convolution or attention kernel (Tensor Core or
    not), never an attention-backward helper."""
    lower = name.lower()
    if any(helper in lower for helper in _HELPERS):
        return False
    return (
        uses_tensor_cores(name)
        or is_simt_gemm(name)
        or is_fp32_matmul(name)
        or is_triton_matmul(name)
        or bool(_MATRIX.search(name))
    )


def runs_on_tensor_cores(name, cost, flops, total_ps, capabilities) -> bool:
    """Tensor Core use of a matrix kernel whose name does not say it (XLA's Triton `gemm_fusion_dot`, Inductor's
    `triton_*mm`), from evidence: a FLOP rate no other unit of its GPU reaches (above its vector roof), or a 16- or
    8-bit matrix op on a GPU with Tensor Cores, or an f32 dot XLA compiled at DEFAULT precision (TF32) on one of
    compute capability 8.0+. Never a kernel whose name says fp32 FMA (SIMT)."""
    if cost is None or cost.compute != MATRIX or is_simt_gemm(name) or is_fp32_matmul(name):
        return False
    if not is_matrix_kernel(name) and not is_xla_kernel(name):
        return False
    peaks = device_peaks(capabilities)
    vector = peaks.vector_roof(cost.dtype)
    if flops and total_ps > 0 and vector and flops / (total_ps / 1e12) > vector * 1e12:
        return True
    lower = name.lower()
    gemm = is_triton_matmul(name) or ("gemm" in lower and "gemv" not in lower)  # a GEMV runs on the CUDA cores
    if not gemm or not peaks.matrix_tflops or (capabilities.vendor or "nvidia").lower() != "nvidia":
        return False
    if cost.dtype in _16_BIT or (cost.dtype or "").startswith("f8"):
        return True
    cc = tuple(capabilities.compute_capability or ())
    return (
        cost.dtype == "f32"
        and cost.precision in (None, "DEFAULT")
        and cc >= _XLA_TF32_MIN_CC
        and (lower.startswith("gemm_fusion") or is_xla_kernel(name))
    )


def matrix_work(activity) -> EventWork | None:
    """activity.work with each matrix op instance's FLOPs and bytes on its matrix kernels only (cached)."""
    work = activity.work
    if work is None:
        return None
    found = _CACHE.get(work)
    if found is None or found[0] is not activity.name_id or found[1] is not activity.names:
        found = (activity.name_id, activity.names, _resplit(activity, work))
        _CACHE[work] = found
    return found[2]


def _resplit(activity, work):
    index = work.cost_index
    matrix_cost = np.array([c.compute == MATRIX and c.flops is not None for c in work.costs] + [False])
    events = np.flatnonzero((index >= 0) & matrix_cost[index])
    if not len(events):
        return work
    instance = index[events]
    ids, inverse = np.unique(instance, return_inverse=True)
    inverse = np.asarray(inverse).reshape(-1)
    name_ids = activity.name_id[events]
    by_name = {int(n): is_matrix_kernel(activity.names[n]) for n in np.unique(name_ids).tolist()}
    matrix = np.array([by_name[int(n)] for n in name_ids.tolist()], dtype=bool)
    matrix &= activity.kind[events] == int(ActivityKind.KERNEL)
    has_matrix = np.bincount(inverse, weights=matrix, minlength=len(ids)) > 0
    receives = matrix | ~has_matrix[inverse]
    weights = activity.duration_ps[events].astype(float) * receives
    totals = np.bincount(inverse, weights=weights, minlength=len(ids))
    counts = np.bincount(inverse, weights=receives, minlength=len(ids))
    share = np.where(
        totals[inverse] > 0,
        weights / np.maximum(totals[inverse], 1e-300),
        receives / np.maximum(counts[inverse], 1.0),
    )
    costs = list(work.costs)
    flops, nbytes, cost_index = work.flops.copy(), work.bytes.copy(), index.copy()
    op_flops = np.array([float(costs[i].flops) for i in ids.tolist()])
    op_bytes = np.array([np.nan if costs[i].bytes is None else float(costs[i].bytes) for i in ids.tolist()])
    flops[events] = np.where(receives, op_flops[inverse] * share, np.nan)
    nbytes[events] = np.where(receives, op_bytes[inverse] * share, np.nan)
    helpers = {}
    for event in events[~receives].tolist():
        dtype = costs[int(index[event])].dtype
        if dtype not in helpers:
            helpers[dtype] = len(costs)
            costs.append(OpCost(None, None, VECTOR, dtype, HELPER_METHOD))
        cost_index[event] = helpers[dtype]
    # Several kernel names share an instance's FLOPs (none known as its matrix kernel): the rate is the op's.
    pairs = np.unique(np.stack([inverse[receives], name_ids[receives]], axis=1), axis=0)
    names_per_instance = np.bincount(pairs[:, 0], minlength=len(ids)) if len(pairs) else np.zeros(len(ids))
    for slot in np.flatnonzero((names_per_instance > 1) & ~has_matrix).tolist():
        op = int(ids[slot])
        costs[op] = replace(costs[op], method=OP_SPLIT_METHOD)
    return EventWork(flops, nbytes, cost_index, tuple(costs))
