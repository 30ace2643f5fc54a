"""Collective calls of a Kineto trace: NCCL/RCCL kernels named from the host op that issued them, and
`record_param_comms` host ops, with sizes.

A kernel's collective is read from the host ops around its launch, best first: the backend's annotation
(`nccl:all_to_all`), `record_param_comms`' `Collective name`, the c10d op (`c10d::allreduce_`); the kernel's own
name only when none says (NCCL runs all-to-all and send/recv as `ncclKernel_SendRecv`, so the name misleads).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import bisect
import math
import re

from tb_gpu_advisor.readers.kineto.values import clean_text, integer
from tb_gpu_advisor.model.collective_names import (
    HOST_OP,
    KERNEL_NAME,
    PARAM_COMMS,
    THREAD_BACKENDS,
    collective_of,
    host_collective,
)
from tb_gpu_advisor.model.details import MAX_COPY_BYTES
from tb_gpu_advisor.model.trace import CollectiveCall

# Bytes per element of the dtype names PyTorch writes in `dtype`.
DTYPE_BYTES = {
    "Float": 4,
    "Double": 8,
    "Half": 2,
    "BFloat16": 2,
    "Long": 8,
    "Int": 4,
    "Short": 2,
    "Char": 1,
    "Byte": 1,
    "Bool": 1,
    "ComplexFloat": 8,
    "ComplexDouble": 16,
    "Float8_e4m3fn": 1,
    "Float8_e5m2": 1,
}
# The C++ type names of an op's `Input type` -> PyTorch's dtype names above.
_INPUT_TYPES = {
    "float": "Float",
    "double": "Double",
    "c10::Half": "Half",
    "c10::BFloat16": "BFloat16",
    "long int": "Long",
    "int64_t": "Long",
    "int": "Int",
    "short int": "Short",
    "signed char": "Char",
    "unsigned char": "Byte",
    "bool": "Bool",
    "c10::complex<float>": "ComplexFloat",
    "c10::complex<double>": "ComplexDouble",
}
# ncclKernel_AllReduce_RING_LL_Sum_float / ncclDevKernel_AllGather_RING_LL / ncclKernel_SendRecv_...
_KERNEL_OP = re.compile(r"^nccl(?:Dev)?Kernel_([A-Za-z]+)")
# Host spans looked at before a launch, innermost first: the chain c10d op > record_param_comms > nccl: is 3 deep.
_ENCLOSING_LOOKBACK = 8
_MAX_RANK = 16  # dimensions of one tensor shape read from `Input Dims`


def is_collective_kernel(name: str) -> bool:
    """NCCL (and RCCL, which keeps NCCL's names) kernels."""
    return name[:4].lower() in ("nccl", "rccl")


def collective_from_kernel_name(name: str) -> str | None:
    """`allreduce` from `ncclKernel_AllReduce_RING_LL_Sum_float(...)`; None when the name does not tell."""
    match = _KERNEL_OP.match(name)
    return collective_of(match.group(1)) if match else None


def _count(value):
    """A count of elements or ranks, None when not recorded or above MAX_COPY_BYTES (a corrupt value)."""
    return integer(value, None, 0, MAX_COPY_BYTES)


def _sizes(args):
    """(collective, in bytes, out bytes, dtype, group size) from the comms args newer PyTorch records."""
    dtype = clean_text(args.get("dtype")) if isinstance(args.get("dtype"), str) else None
    width = DTYPE_BYTES.get(dtype)
    nelems_in, nelems_out = _count(args.get("In msg nelems")), _count(args.get("Out msg nelems"))
    collective = args.get("Collective name")
    return (
        (collective_of(collective) or clean_text(collective)) if isinstance(collective, str) and collective else None,
        nelems_in * width if width and nelems_in is not None else None,
        nelems_out * width if width and nelems_out is not None else None,
        dtype,
        _count(args.get("Group size")),
    )


def _input_sizes(args):
    """(in bytes, dtype) of an annotation's `Input Dims` and `Input type` (one tensor each); (None, None) when
    not recorded or not one dtype."""
    dims, types = args.get("Input Dims"), args.get("Input type")
    if not isinstance(dims, list) or not isinstance(types, list) or len(dims) != len(types) or not dims:
        return None, None
    names = {_INPUT_TYPES.get(t) for t in types if isinstance(t, str)}
    if len(names) != 1 or None in names:
        return None, None
    dtype = names.pop()
    total = 0
    for shape in dims:
        if (
            not isinstance(shape, list)
            or not shape
            or len(shape) > _MAX_RANK
            or not all(integer(d, None, 0, MAX_COPY_BYTES) is not None for d in shape)
        ):
            return None, None
        total += math.prod(shape)
    size = total * DTYPE_BYTES[dtype]
    return (size, dtype) if size <= MAX_COPY_BYTES else (None, None)  # larger: a corrupt value


class _HostOp:
    """One host op that issued a collective: its span, the collective it names (with the rank of that name) and
    the sizes it records."""

    __slots__ = ("start", "end", "name", "collective", "rank", "sizes")

    def __init__(self, start, end, name, collective, rank, sizes):
        self.start, self.end, self.name, self.collective, self.rank, self.sizes = (
            start,
            end,
            name,
            collective,
            rank,
            sizes,
        )


class CollectiveCollector:
    """Keeps one CollectiveCall per NCCL kernel and per `record_param_comms` op, and the host ops that name
    them."""

    def __init__(self):
        self.kernels = []  # (device, name, start, duration, correlation, args sizes)
        self.params = []  # (thread, start, duration, args sizes)
        self.host_ops = {}  # thread -> [_HostOp]

    def add_kernel(self, device: int, name: str, start: int, duration: int, args: Any, correlation: int = -1) -> None:
        if not is_collective_kernel(name):
            return
        self.kernels.append((device, name, start, duration, correlation, _sizes(args)))

    def add_host_op(self, thread: int, name: str, start: int, duration: int, args: Any) -> None:
        """A host op on `thread`: kept when it issues a collective (collective_names.is_collective_host_op)."""
        if name == PARAM_COMMS:
            sizes = _sizes(args)
            self.params.append((thread, start, duration, sizes))
            op = _HostOp(start, start + duration, name, sizes[0], 2, sizes)
        else:
            named = host_collective(name)
            if named is None:
                return
            in_bytes, dtype = _input_sizes(args)
            op = _HostOp(
                start,
                start + duration,
                name,
                named[0],
                named[1],
                (named[0], in_bytes, None, dtype, None, HOST_OP) if in_bytes is not None else None,
            )
        self.host_ops.setdefault(thread, []).append(op)

    def kernel_correlations(self) -> set[int]:
        return {kernel[4] for kernel in self.kernels if kernel[4] >= 0}

    def add_param_comms(self, start: int, duration: int, args: Any, thread: int = -1) -> None:
        self.add_host_op(thread, PARAM_COMMS, start, duration, args)

    def result(self, shift: int, launches: Mapping[int, tuple[int, int]] | None = None) -> tuple[CollectiveCall, ...]:
        """CollectiveCalls by start; `launches` {correlation: (thread, start)} of the kernels' launch calls."""
        by_thread = {thread: sorted(ops, key=lambda op: op.start) for thread, ops in self.host_ops.items()}
        starts = {thread: [op.start for op in ops] for thread, ops in by_thread.items()}
        calls = []
        for device, name, start, duration, correlation, sizes in self.kernels:
            launch = (launches or {}).get(correlation)
            around = _enclosing(by_thread, starts, *launch) if launch is not None else []
            calls.append(_kernel_call(device, name, start - shift, duration, sizes, around))
        if not self.kernels and not self.params:
            calls.extend(_backend_calls(by_thread, shift))
        for thread, start, duration, sizes in self.params:
            inside = _inside(by_thread.get(thread, ()), starts.get(thread, ()), start, start + duration)
            named = _best(
                inside
                + [
                    op
                    for op in _enclosing(by_thread, starts, thread, start)
                    if op.name != PARAM_COMMS and op.end >= start + duration
                ]
            )
            collective = sizes[0] or (named.collective if named is not None else None)
            calls.append(
                CollectiveCall(
                    source="host",
                    device=-1,
                    collective=collective or "unknown",
                    start_ps=start - shift,
                    duration_ps=duration,
                    in_bytes=sizes[1],
                    out_bytes=sizes[2],
                    dtype=sizes[3],
                    group_size=sizes[4],
                    named_from=HOST_OP if collective else None,
                    issued_by=PARAM_COMMS if sizes[0] else (named.name if named is not None else None),
                )
            )
        return tuple(sorted(calls, key=lambda call: (call.start_ps, call.device)))


def _backend_calls(by_thread, shift):
    """CollectiveCalls of a CPU backend's worker-thread spans (`gloo:all_reduce`), sized from their own `Input Dims`
    or else from the c10d ops that enqueued them (`c10d::allreduce_`): the k-th of a kind pairs with the k-th c10d
    op of that kind, since a process group runs its collectives in the order they were issued."""
    spans, issued = [], {}
    for ops in by_thread.values():
        for op in ops:
            if op.collective is None:
                continue
            if op.name.startswith(THREAD_BACKENDS):
                spans.append(op)
            elif op.name.startswith("c10d::"):
                issued.setdefault(op.collective, []).append(op)
    for ops in issued.values():
        ops.sort(key=lambda op: op.start)
    seen = {}
    calls = []
    for op in sorted(spans, key=lambda op: op.start):
        index = seen[op.collective] = seen.get(op.collective, -1) + 1
        source = issued.get(op.collective, ())
        sizes = op.sizes or (source[index].sizes if index < len(source) else None)
        calls.append(
            CollectiveCall(
                source="host",
                device=-1,
                collective=op.collective,
                start_ps=op.start - shift,
                duration_ps=op.end - op.start,
                in_bytes=sizes[1] if sizes else None,
                dtype=sizes[3] if sizes else None,
                named_from=HOST_OP,
                issued_by=op.name,
            )
        )
    return calls


def _kernel_call(device, name, start, duration, sizes, around):
    """The CollectiveCall of one kernel from its own args' `sizes` and the host ops `around` its launch."""
    named = _best(around)
    by_name = collective_from_kernel_name(name)
    if named is not None:
        collective, named_from, issued_by = named.collective, HOST_OP, named.name
    elif sizes[0] is not None:
        collective, named_from, issued_by = sizes[0], HOST_OP, PARAM_COMMS
    else:
        collective, named_from, issued_by = by_name or name, KERNEL_NAME if by_name else None, None
    if sizes[1] is None and sizes[2] is None:
        sized = next(
            (
                op.sizes
                for op in sorted(around, key=lambda op: op.rank)
                if op.sizes is not None and op.sizes[1] is not None
            ),
            None,
        )
        sizes = sized if sized is not None else sizes
    return CollectiveCall(
        source="kernel",
        device=device,
        collective=collective,
        start_ps=start,
        duration_ps=duration,
        in_bytes=sizes[1],
        out_bytes=sizes[2],
        dtype=sizes[3],
        group_size=sizes[4],
        size_source=sizes[5] if len(sizes) > 5 else None,
        named_from=named_from,
        issued_by=issued_by,
    )


def _best(ops):
    """The op whose name of the collective is surest (collective_names' rank), None when none names one."""
    named = [op for op in ops if op.collective is not None]
    return min(named, key=lambda op: op.rank) if named else None


def _enclosing(by_thread, starts, thread, time):
    """The collective host ops on `thread` whose span holds `time`, innermost first (a bounded look back)."""
    ops = by_thread.get(thread)
    if not ops:
        return []
    index = bisect.bisect_right(starts[thread], time)
    found = []
    for op in reversed(ops[max(0, index - _ENCLOSING_LOOKBACK) : index]):
        if op.end >= time:
            found.append(op)
    return found


def _inside(ops, starts, start, end):
    """The collective host ops that start inside [start, end] (bounded: the first few)."""
    index = bisect.bisect_left(starts, start)
    found = []
    for op in ops[index : index + _ENCLOSING_LOOKBACK]:
        if op.start > end:
            break
        if op.end <= end and op.name != PARAM_COMMS:
            found.append(op)
    return found
