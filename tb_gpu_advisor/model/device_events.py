"""What a device event is from its name: a kernel, a copy (and its direction), a memset, a graph, or no work."""

from __future__ import annotations

from tb_gpu_advisor.model.copies import spelled_copy_direction
from tb_gpu_advisor.model.trace import ActivityKind, CopyDirection

# Device events that are not GPU work: memory bookkeeping and profiler overhead.
_NOT_WORK_PREFIXES = (
    "MemoryResidency",
    "MemAlloc",
    "MemFree",
    "memalloc",
    "COMPILER",
    "BUFFER_FLUSH",
    "INSTRUMENTATION",
    "RESOURCE",
    "Overhead",
)
_COPY_NAMES = {
    "H2D": CopyDirection.H2D,
    "HTOD": CopyDirection.H2D,
    "D2H": CopyDirection.D2H,
    "DTOH": CopyDirection.D2H,
    "D2D": CopyDirection.D2D,
    "DTOD": CopyDirection.D2D,
    "P2P": CopyDirection.P2P,
    "PTOP": CopyDirection.P2P,
}


def classify_event_name(name: str) -> tuple[ActivityKind | None, CopyDirection]:
    """(ActivityKind or None for non-work, CopyDirection) from a device event name."""
    if name.startswith("Memcpy"):
        return ActivityKind.MEMCPY, _COPY_NAMES.get(
            name[6:].split()[0].upper() if name[6:] else "", CopyDirection.OTHER
        )
    spelled = spelled_copy_direction(name)
    if spelled is not None:
        return ActivityKind.MEMCPY, spelled
    if name.startswith("Memset"):
        return ActivityKind.MEMSET, CopyDirection.NONE
    if name.startswith("CudaGraphExec"):
        return ActivityKind.GRAPH, CopyDirection.NONE
    if name.startswith(_NOT_WORK_PREFIXES):
        return None, CopyDirection.NONE
    return ActivityKind.KERNEL, CopyDirection.NONE
