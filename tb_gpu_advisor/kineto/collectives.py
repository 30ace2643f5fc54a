"""Collective calls of a Kineto trace: NCCL/RCCL kernels and `record_param_comms` host ops, with sizes."""

import re

from tb_gpu_advisor.kineto.values import clean_text, integer
from tb_gpu_advisor.model.details import MAX_COPY_BYTES
from tb_gpu_advisor.model.trace import CollectiveCall

# Bytes per element of the dtype names PyTorch writes in `dtype`.
DTYPE_BYTES = {"Float": 4, "Double": 8, "Half": 2, "BFloat16": 2, "Long": 8, "Int": 4, "Short": 2, "Char": 1,
               "Byte": 1, "Bool": 1, "ComplexFloat": 8, "ComplexDouble": 16, "Float8_e4m3fn": 1,
               "Float8_e5m2": 1}
# ncclKernel_AllReduce_RING_LL_Sum_float / ncclDevKernel_AllGather_RING_LL / ncclKernel_SendRecv_...
_KERNEL_OP = re.compile(r"^nccl(?:Dev)?Kernel_([A-Za-z]+)")


def is_collective_kernel(name):
    """NCCL (and RCCL, which keeps NCCL's names) kernels."""
    return name[:4].lower() == "nccl"


def collective_from_kernel_name(name):
    """`allreduce` from `ncclKernel_AllReduce_RING_LL_Sum_float(...)`; None when the name does not tell."""
    match = _KERNEL_OP.match(name)
    return match.group(1).lower() if match else None


def _count(value):
    """A count of elements or ranks, None when not recorded or above MAX_COPY_BYTES (a corrupt value)."""
    return integer(value, None, 0, MAX_COPY_BYTES)


def _sizes(args):
    """(collective, in bytes, out bytes, dtype, group size) from the comms args newer PyTorch records."""
    dtype = clean_text(args.get("dtype")) if isinstance(args.get("dtype"), str) else None
    width = DTYPE_BYTES.get(dtype)
    nelems_in, nelems_out = _count(args.get("In msg nelems")), _count(args.get("Out msg nelems"))
    collective = args.get("Collective name")
    return (clean_text(collective) if isinstance(collective, str) and collective else None,
            nelems_in * width if width and nelems_in is not None else None,
            nelems_out * width if width and nelems_out is not None else None,
            dtype, _count(args.get("Group size")))


class CollectiveCollector:
    """Keeps one CollectiveCall per NCCL kernel and per `record_param_comms` op."""

    def __init__(self):
        self.calls = []

    def add_kernel(self, device, name, start, duration, args):
        if not is_collective_kernel(name):
            return
        collective, size_in, size_out, dtype, group = _sizes(args)
        self.calls.append(("kernel", device, collective or collective_from_kernel_name(name) or name, start,
                           duration, size_in, size_out, dtype, group))

    def add_param_comms(self, start, duration, args):
        collective, size_in, size_out, dtype, group = _sizes(args)
        self.calls.append(("host", -1, collective or "unknown", start, duration, size_in, size_out, dtype, group))

    def result(self, shift):
        return tuple(CollectiveCall(source=source, device=device, collective=collective, start_ps=start - shift,
                                    duration_ps=duration, in_bytes=size_in, out_bytes=size_out, dtype=dtype,
                                    group_size=group)
                     for source, device, collective, start, duration, size_in, size_out, dtype, group
                     in sorted(self.calls, key=lambda call: call[3]))
