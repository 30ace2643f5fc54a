"""Collective calls of an XPlane trace: each NCCL/RCCL kernel, sized from the HLO instruction it runs (XLA,
JAX) or from the input shapes of the TensorFlow collective op that launched it, where the trace records them."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.analysis.kernel_names import collective_dtype, collective_kind, is_nccl
from tb_gpu_advisor.analysis.tf_op_cost import parse_shapes
from tb_gpu_advisor.readers.hlo.collectives import collective_shapes
from tb_gpu_advisor.model.collective_names import KERNEL_NAME, collective_of
from tb_gpu_advisor.model.trace import ActivityKind, CollectiveCall

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.model.trace import TraceModel


HLO, TF_OP = "hlo", "tf_op"
HLO_NAME = "op_name"  # the kind from the op's (HLO instruction's or TensorFlow op's) name, without its shapes
# TensorFlow's collective op types -> NCCL-tests' collective; their first input is the tensor sent.
TF_COLLECTIVE_OPS = {
    "NcclAllReduce": "allreduce",
    "NcclReduce": "reduce",
    "NcclBroadcast": "broadcast",
    "CollectiveReduce": "allreduce",
    "CollectiveReduceV2": "allreduce",
    "CollectiveReduceV3": "allreduce",
    "CollectiveGather": "allgather",
    "CollectiveGatherV2": "allgather",
    "CollectiveAllToAllV2": "alltoall",
    "CollectiveAllToAllV3": "alltoall",
    "CollectiveReduceScatterV2": "reducescatter",
    "CollectiveBcastSend": "broadcast",
    "CollectiveBcastSendV2": "broadcast",
}
# Bytes per element of the TF dtype names in a kernel's `shape` stat.
_TF_WIDTH = {
    "half": 2,
    "float": 4,
    "double": 8,
    "bfloat16": 2,
    "int8": 1,
    "uint8": 1,
    "int16": 2,
    "int32": 4,
    "int64": 8,
    "bool": 1,
}
_TF_DTYPE = {
    "half": "f16",
    "float": "f32",
    "double": "f64",
    "bfloat16": "bf16",
    "int8": "s8",
    "uint8": "u8",
    "int16": "s16",
    "int32": "s32",
    "int64": "s64",
    "bool": "pred",
}


def xplane_collectives(model: TraceModel) -> tuple[CollectiveCall, ...]:
    """CollectiveCall per collective kernel of the GPUs (source "kernel"), by start; `size_source` "hlo" or
    "tf_op" where the call is sized, None where neither the HLO nor the op's shapes say."""
    found = []  # (ordinal, activity, kernel indices, distinct (name, op, program, signature) rows, row of each)
    for gpu in model.gpus:
        activity = gpu.activity
        if not len(activity):
            continue
        collective_names = np.array([is_nccl(name) for name in activity.names], dtype=bool)
        index = np.flatnonzero((activity.kind == ActivityKind.KERNEL) & collective_names[activity.name_id])
        if len(index):
            found.append((gpu.ordinal, activity, index, *_distinct(activity, index)))
    if not found:
        return ()
    pairs = {_hlo_key(activity, i) for _, activity, index, firsts, _ in found for i in index[firsts]} - {None}
    shapes = collective_shapes(model.hlo_protos, pairs) if pairs and model.hlo_protos else {}
    calls = []
    for ordinal, activity, index, firsts, rows in found:
        # A call's kind and sizes depend only on its row: work them out once per distinct row.
        described = [_described(activity, int(i), shapes) for i in index[firsts]]
        # The dtype the call records (HLO, TF op shapes), else its kernel's name's (ncclDevKernel_..._f32_...): the
        # source the all-reduce finding reads too, so the table and the finding name one dtype (issue 31 K4).
        named_dtypes = [_name_dtype(activity, int(i)) for i in index[firsts]]
        starts, durations = activity.start_ps[index].tolist(), activity.duration_ps[index].tolist()
        for row, start, duration in zip(rows.tolist(), starts, durations):
            kind, named_from, issued_by, sized = described[row]
            calls.append(
                CollectiveCall(
                    source="kernel",
                    device=ordinal,
                    collective=kind,
                    start_ps=start,
                    duration_ps=duration,
                    in_bytes=sized.in_bytes if sized is not None else None,
                    out_bytes=sized.out_bytes if sized is not None else None,
                    dtype=(sized.dtype if sized is not None else None) or named_dtypes[row],
                    group_size=sized.group_size if sized is not None else None,
                    size_source=sized.source if sized is not None and sized.in_bytes is not None else None,
                    named_from=named_from,
                    issued_by=issued_by,
                    group_size_source=sized.source if sized is not None and sized.group_size is not None else None,
                )
            )
    # By start, then device; a stable sort keeps kernel order among equal keys.
    starts = np.concatenate([activity.start_ps[index] for _, activity, index, _, _ in found])
    devices = np.concatenate([np.full(len(index), ordinal, np.int64) for ordinal, _, index, _, _ in found])
    return tuple(calls[i] for i in np.lexsort((devices, starts)).tolist())


def _distinct(activity, index):
    """(the first kernel of each distinct (name, op, program, TF signature), which of them each kernel has)."""
    absent = np.full(len(index), -1, np.int64)
    columns = [
        activity.name_id[index],
        activity.op_id[index],
        absent if activity.program_id is None else activity.program_id[index],
        absent if activity.tf_signature_id is None else activity.tf_signature_id[index],
    ]
    _, firsts, rows = np.unique(
        np.stack(columns, axis=1).astype(np.int64), axis=0, return_index=True, return_inverse=True
    )
    return firsts, rows.reshape(-1)


def _described(activity, i, shapes):
    """(collective, named_from, issued_by, _Sized or None) of kernel `i`."""
    name = activity.names[activity.name_id[i]]
    op_name = activity.op_names[activity.op_id[i]] if activity.op_id[i] >= 0 else None
    sized = _from_hlo(shapes.get(_hlo_key(activity, i))) or _tf_collective(activity, i)
    return (*_named(name, op_name, sized), sized)


def _name_dtype(activity, i):
    """The dtype kernel `i`'s name (else its op's) carries, None when neither says."""
    op_name = activity.op_names[activity.op_id[i]] if activity.op_id[i] >= 0 else None
    return collective_dtype(activity.names[activity.name_id[i]], op_name)


def _named(kernel_name, op_name, sized):
    """(collective, where its name comes from, the op that names it): the HLO instruction or TensorFlow op that
    issued the kernel first, the kernel's own name only when neither tells."""
    if sized is not None:
        return sized.collective, sized.source, op_name
    by_op = collective_of(op_name)
    if by_op is not None:
        return by_op, HLO_NAME, op_name
    by_kernel = collective_kind(kernel_name)
    return (by_kernel, KERNEL_NAME, None) if by_kernel is not None else (kernel_name, None, None)


def _hlo_key(activity, i):
    if activity.program_id is None or activity.program_id[i] < 0 or activity.op_id[i] < 0:
        return None
    return int(activity.program_id[i]), activity.op_names[activity.op_id[i]]


@dataclass(frozen=True)
class _Sized:
    """The sizes of one call and where they come from."""

    collective: str
    in_bytes: int | None
    out_bytes: int | None
    dtype: str | None
    group_size: int | None
    source: str


def _tf_collective(activity, i):
    """Sizes of a TensorFlow collective op's kernel from its first input's shape; the output only for
    all-reduce (the same shape), the group size not at all (an input value, not a shape)."""
    if activity.tf_signature_id is None or activity.tf_signature_id[i] < 0:
        return None
    op_type, shape_text = activity.tf_signatures[activity.tf_signature_id[i]]
    collective = TF_COLLECTIVE_OPS.get(op_type)
    inputs = parse_shapes(shape_text) if collective else None
    if not inputs:
        return None
    dtype, dims = inputs[0]
    size = _TF_WIDTH[dtype] * math.prod(dims)
    return _Sized(collective, size, size if collective == "allreduce" else None, _TF_DTYPE[dtype], None, TF_OP)


def _from_hlo(found):
    return (
        None
        if found is None
        else _Sized(found.collective, found.in_bytes, found.out_bytes, found.dtype, found.group_size, HLO)
    )
