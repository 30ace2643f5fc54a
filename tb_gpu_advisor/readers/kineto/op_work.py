"""The work of a PyTorch op from what `record_shapes` / `with_flops` write in its args: its FLOPs (the `flops`
arg, else from `Input Dims` for the matrix ops: mm, addmm, bmm, baddbmm and the fused attention backends), its
logical bytes, and the element type of its floating-point inputs (`Input type`). FLOPs follow the profiler's
own rule: a multiply-add is 2 FLOPs; attention forward is 4*B*H*Sq*Skv*D, halved when causal, backward 2.5x."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import math

import numpy as np

from tb_gpu_advisor.readers.hlo.op_cost import MATRIX, VECTOR, OpCost
from tb_gpu_advisor.readers.kineto.ops import innermost_enclosing
from tb_gpu_advisor.model.trace import HostActivity
from tb_gpu_advisor.model.work import EventWork

DTYPES = {
    "float": "f32",
    "c10::BFloat16": "bf16",
    "c10::Half": "f16",
    "double": "f64",
    "c10::Float8_e4m3fn": "f8e4m3fn",
    "c10::Float8_e5m2": "f8e5m2",
    "c10::Float8_e4m3fnuz": "f8e4m3fnuz",
    "c10::Float8_e5m2fnuz": "f8e5m2fnuz",
}
_BYTES = {"f32": 4, "bf16": 2, "f16": 2, "f64": 8}
# (index of the first matrix operand among the inputs) of each GEMM op: C = A @ B (+ bias first for addmm/baddbmm).
_GEMMS = {"aten::mm": 0, "aten::addmm": 1, "aten::bmm": 0, "aten::baddbmm": 1}
# Fused attention ops whose query/key/value are [batch, heads, seq, head dim]: (index of query, index of the
# is_causal argument among the inputs, backward?). The public aten::scaled_dot_product_attention dispatches to
# one of these, which is the op the kernels run inside.
_ATTENTION = {
    "aten::_scaled_dot_product_flash_attention": (0, 4, False),
    "aten::_scaled_dot_product_efficient_attention": (0, 6, False),
    "aten::_scaled_dot_product_cudnn_attention": (0, 6, False),
    "aten::_scaled_dot_product_flash_attention_backward": (1, 11, True),
    "aten::_scaled_dot_product_efficient_attention_backward": (1, 11, True),
    "aten::_scaled_dot_product_cudnn_attention_backward": (1, 14, True),
}
ATTENTION_OPS = frozenset(_ATTENTION)
# The ops whose FLOPs op_cost works out from their shapes (without a `flops` arg).
COSTED_BY_SHAPE = frozenset(_GEMMS) | ATTENTION_OPS
ATTENTION_BACKWARD_FACTOR = 2.5
_MATRIX_OPS = (
    frozenset(_GEMMS)
    | ATTENTION_OPS
    | {"aten::convolution", "aten::_convolution", "aten::cudnn_convolution", "aten::conv2d"}
)


def input_dtype(args: Mapping[str, Any]) -> str | None:
    """The element type of an op's first floating-point tensor input ("bf16", "f32"...), or None."""
    types = args.get("Input type")
    if not isinstance(types, list):
        return None
    for name in types:
        found = DTYPES.get(name) if isinstance(name, str) else None
        if found:
            return found
    return None


def _dims(args):
    dims = args.get("Input Dims")
    if not isinstance(dims, list):
        return None
    if not all(
        isinstance(d, list) and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in d) for d in dims
    ):
        return None
    return dims


def op_cost(name: str, args: Mapping[str, Any]) -> OpCost | None:
    """OpCost of one op from its args, or None when its FLOPs are not known; a recorded `flops` arg wins."""
    dtype = input_dtype(args)
    recorded = args.get("flops")
    if isinstance(recorded, int) and not isinstance(recorded, bool) and recorded > 0:
        return OpCost(recorded, None, MATRIX if name in _MATRIX_OPS else VECTOR, dtype, "the profiler's flops arg")
    if name in _GEMMS:
        return _gemm(name, _dims(args), dtype)
    if name in _ATTENTION:
        return _attention(name, _dims(args), args.get("Concrete Inputs"), dtype)
    return None


def _gemm(name, dims, dtype):
    first = _GEMMS[name]
    if dims is None or len(dims) < first + 2:
        return None
    a, b = dims[first], dims[first + 1]
    if len(a) != len(b) or len(a) not in (2, 3) or a[-1] != b[-2] or (len(a) == 3 and a[0] != b[0]):
        return None
    batch = a[0] if len(a) == 3 else 1
    m, k, n = a[-2], a[-1], b[-1]
    flops = 2 * batch * m * n * k
    width = _BYTES.get(dtype)
    nbytes = batch * (m * k + k * n + m * n) * width if width else None
    return OpCost(flops, nbytes, MATRIX, dtype, "op input shapes (2 x batch x M x N x K)", (batch, m, n, k))


def _attention(name, dims, concrete, dtype):
    query, causal_at, backward = _ATTENTION[name]
    if dims is None or len(dims) < query + 3:
        return None
    q, k, v = dims[query], dims[query + 1], dims[query + 2]
    if len(q) != 4 or len(k) != 4 or len(v) != 4:
        return None
    batch, heads, seq_q, head_dim = q
    seq_kv, value_dim = k[2], v[3]
    flops = 2 * batch * heads * seq_q * seq_kv * (head_dim + value_dim)
    causal = isinstance(concrete, list) and len(concrete) > causal_at and concrete[causal_at] == "True"
    if causal:
        flops //= 2
    if backward:
        flops = int(flops * ATTENTION_BACKWARD_FACTOR)
    width = _BYTES.get(dtype)
    nbytes = (2 if backward else 1) * (math.prod(q) * 2 + math.prod(k) + math.prod(v)) * width if width else None
    return OpCost(
        flops,
        nbytes,
        MATRIX,
        dtype,
        "fused attention from its input shapes (4*B*H*S^2*D forward; causal /2; backward x2.5)",
    )


def launch_work(
    host: HostActivity, launch_thread: np.ndarray, ops: Mapping[int, tuple[np.ndarray, ...]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sorted correlation ids, the innermost costed op instance of each: a global index into the costs, -1 none;
    the innermost op's dtype id, -1 none) for the launches made inside ops.

    `ops` maps a thread to (starts, ends, cost ids, dtype ids) of its cpu_op events; a cost id is a global index
    (one per op instance), so the kernels of one op instance can share its FLOPs."""
    corr_out, cost_out, dtype_out = [], [], []
    for thread, (starts, ends, cost_ids, dtype_ids) in ops.items():
        mine = np.flatnonzero(launch_thread == thread)
        if not len(mine) or not len(starts):
            continue
        times = host.launch_start_ps[mine]
        order = np.argsort(times, kind="stable")
        inside = innermost_enclosing(starts, ends, times[order])
        dtype = np.where(inside >= 0, dtype_ids[np.maximum(inside, 0)], -1)
        costed = np.flatnonzero(cost_ids >= 0)
        cost = np.full(len(order), -1, dtype=np.int64)
        if len(costed):
            within = innermost_enclosing(starts[costed], ends[costed], times[order])
            cost = np.where(within >= 0, cost_ids[costed][np.maximum(within, 0)], -1)
        corr_out.append(host.launch_correlation_id[mine[order]])
        cost_out.append(cost)
        dtype_out.append(dtype)
    if not corr_out:
        empty = np.zeros(0, np.int64)
        return empty, empty, empty
    corr = np.concatenate(corr_out)
    order = np.argsort(corr, kind="stable")
    return corr[order], np.concatenate(cost_out)[order], np.concatenate(dtype_out)[order]


def event_work(
    correlation: np.ndarray,
    duration: np.ndarray,
    launches: tuple[np.ndarray, np.ndarray, np.ndarray],
    costs: Sequence[OpCost],
    dtypes: Sequence[str],
) -> EventWork | None:
    """EventWork of one GPU's events (their correlation ids and durations) from launch_work's `launches`: each
    op instance's FLOPs and bytes split over the events it launched by their time; an event inside no costed op
    gets the dtype of its innermost op (no FLOPs). None when no event is either."""
    corr, cost_of, dtype_of = launches
    count = len(correlation)
    flops, nbytes = np.full(count, np.nan), np.full(count, np.nan)
    index = np.full(count, -1, dtype=np.int64)
    if not len(corr) or not count:
        return None
    position = np.minimum(np.searchsorted(corr, correlation), len(corr) - 1)
    found = (corr[position] == correlation) & (correlation >= 0)
    instance = np.where(found, cost_of[position], -1)
    dtype = np.where(found, dtype_of[position], -1)
    table = list(costs)
    by_dtype = {}
    for event in np.flatnonzero((instance < 0) & (dtype >= 0)).tolist():
        key = int(dtype[event])
        if key not in by_dtype:
            by_dtype[key] = len(table)
            table.append(OpCost(None, None, VECTOR, dtypes[key], "the launching op's input type"))
        index[event] = by_dtype[key]
    costed = np.flatnonzero(instance >= 0)
    if len(costed):
        ids, inverse = np.unique(instance[costed], return_inverse=True)
        weights = duration[costed].astype(float)
        totals = np.bincount(inverse, weights=weights, minlength=len(ids))
        share = np.where(totals[inverse] > 0, weights / np.maximum(totals[inverse], 1e-300), 0.0)
        for slot, event in enumerate(costed.tolist()):
            cost = costs[int(instance[event])]
            index[event] = int(instance[event])
            flops[event] = np.nan if cost.flops is None else cost.flops * share[slot]
            nbytes[event] = np.nan if cost.bytes is None else cost.bytes * share[slot]
    if (index < 0).all():
        return None
    return EventWork(flops, nbytes, index, tuple(table))
