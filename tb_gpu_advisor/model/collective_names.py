"""The collective a host op or kernel name runs (`nccl:all_reduce`, `c10d::allreduce_`, `all_to_allv`,
`ncclKernel_AllReduce_...`), by plain string tests: lower case, separators dropped, then known words."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.model.trace import CollectiveCall


# Where a CollectiveCall's kind comes from (CollectiveCall.named_from), besides XPlane's "hlo" and "tf_op".
HOST_OP, KERNEL_NAME = "host_op", "kernel_name"
# Normalized word -> collective, tested in this order (`reducescatter` before `reduce`, `bcast` before `send`);
# TensorFlow's `CollectiveReduceV2` is its all-reduce, `CollectiveGather` its all-gather.
_WORDS = (
    ("allreduce", "allreduce"),
    ("reducescatter", "reducescatter"),
    ("allgather", "allgather"),
    ("alltoall", "alltoall"),
    ("collectivereduce", "allreduce"),
    ("collectivegather", "allgather"),
    ("collectivepermute", "sendrecv"),
    ("broadcast", "broadcast"),
    ("bcast", "broadcast"),
    ("sendrecv", "sendrecv"),
    ("send", "sendrecv"),
    ("recv", "sendrecv"),
    ("barrier", "barrier"),
    ("reduce", "reduce"),
    ("gather", "gather"),
    ("scatter", "scatter"),
)
# Host ops that issue a collective: PyTorch's backend annotations (`nccl:all_reduce`, ROCm's too), its c10d ops
# (`c10d::allreduce_`), and `record_param_comms`, whose `Collective name` argument says which.
HOST_PREFIXES = ("nccl:", "rccl:", "gloo:", "ucc:", "mpi:", "xccl:", "c10d::")
PARAM_COMMS = "record_param_comms"
# Backends whose collectives run on their own worker threads as annotated host spans (`gloo:all_reduce`), with
# no kernel: on a CPU-only run these spans are the collectives.
THREAD_BACKENDS = ("gloo:", "ucc:", "mpi:")
# How sure a name is, best first: the backend's own annotation, the c10d op, then the profiler's argument.
_PREFIX_RANK = {"c10d::": 1}


def normalized(text: str) -> str:
    return text.lower().replace("_", "").replace("-", "").replace(" ", "")


def collective_of(text: str) -> str | None:
    """ "allreduce", "alltoall", ... for a collective's name in any of PyTorch's, XLA's or NCCL's spellings;
    None when the text names none."""
    if not isinstance(text, str) or not text:
        return None
    plain = normalized(text)
    return next((kind for word, kind in _WORDS if word in plain), None)


def host_collective(name: str) -> tuple[str, int] | None:
    """(collective, rank) of a host op that issues a collective (rank 0: the backend's annotation, 1: the c10d
    op); None for other ops (`record_param_comms` is read from its argument instead)."""
    for prefix in HOST_PREFIXES:
        if name.startswith(prefix):
            kind = collective_of(name[len(prefix) :])
            return (kind, _PREFIX_RANK.get(prefix, 0)) if kind is not None else None
    return None


def is_collective_host_op(name: str) -> bool:
    return name == PARAM_COMMS or name.startswith(HOST_PREFIXES)


def runs_on_a_backend_thread(call: CollectiveCall) -> bool:
    """Whether a CollectiveCall is a CPU backend's worker-thread span (`gloo:all_reduce`): the communication itself
    and its wait for the peers, not an op that enqueues it."""
    return call.source == "host" and (call.issued_by or "").startswith(THREAD_BACKENDS)
