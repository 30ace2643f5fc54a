"""The kernels of attention computed piece by piece (PyTorch: batched matmuls around a softmax, or SDPA's math
backend): on one GPU's timeline, every kernel from an attention matmul to the last attention matmul that follows
it with no other matrix kernel between them, where a softmax runs in that run. Scaling, masking, the softmax,
dropout and their casts sit between the matmuls, forward and backward: all of them are the attention's, and a
fused attention kernel replaces them all."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.analysis.kernel_names import is_fp32_matmul, is_library_math, uses_tensor_cores
from tb_gpu_advisor.model.trace import ActivityKind

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.model.trace import DeviceActivity


ATTENTION_MATMUL_OPS = frozenset({"aten::bmm", "aten::baddbmm"})
SOFTMAX_OPS = frozenset({"aten::_softmax", "aten::softmax", "aten::_softmax_backward_data", "aten::_safe_softmax"})


def _other_matrix(name):
    return uses_tensor_cores(name) or is_fp32_matmul(name) or is_library_math(name)


def attention_kernel_mask(activity: DeviceActivity) -> np.ndarray:
    """Boolean mask over one GPU's events (DeviceActivity): the kernels of its unfused attention runs."""
    count = len(activity)
    mask = np.zeros(count, dtype=bool)
    if not count or not activity.op_names:
        return mask
    op_kind = np.array(
        [2 if op in ATTENTION_MATMUL_OPS else 1 if op in SOFTMAX_OPS else 0 for op in activity.op_names] + [0],
        dtype=np.int8,
    )[activity.op_id]
    kernels = np.flatnonzero(activity.mask(ActivityKind.KERNEL))
    if not (op_kind[kernels] == 2).any() or not (op_kind[kernels] == 1).any():
        return mask
    matrix_name = np.array([_other_matrix(name) for name in activity.names] + [False], dtype=bool)
    run_start = None
    softmax_seen = False
    for position in kernels.tolist():  # sorted by start
        kind = int(op_kind[position])
        if kind == 2:
            if run_start is None:
                run_start, softmax_seen = position, False
            elif softmax_seen:
                mask[run_start : position + 1] = True
        elif kind == 1 and run_start is not None:
            softmax_seen = True
        elif matrix_name[activity.name_id[position]]:
            run_start = None
    mask &= activity.mask(ActivityKind.KERNEL)
    return mask
