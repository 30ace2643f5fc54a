"""Collective kernels per kind on the GPUs: calls per step, sizes, dtypes, group sizes and what named them; and
each GPU's collective time not overlapped with its own compute (exposed communication)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.model import intervals

from typing import TYPE_CHECKING
from tb_gpu_advisor.analysis.rounding import ms

if TYPE_CHECKING:
    from collections.abc import Callable
    from tb_gpu_advisor.model.trace import GpuDevice
    from typing import Any


# Kineto's dtype names and XPlane's HLO/TensorFlow ones -> the short names the report uses.
_DTYPES = {
    "Float": "f32",
    "Double": "f64",
    "Half": "f16",
    "BFloat16": "bf16",
    "Long": "s64",
    "Int": "s32",
    "Short": "s16",
    "Char": "s8",
    "Byte": "u8",
    "Bool": "pred",
    "Float8_e4m3fn": "f8e4m3fn",
    "Float8_e5m2": "f8e5m2",
}


@dataclass(frozen=True)
class CollectiveKind:
    """One collective kind's kernels on the GPU that runs most of them, inside the analysis windows."""

    collective: str
    calls: int
    calls_per_step: float | None  # None without steps
    total_ms: float
    median_ms: float
    sized_calls: int
    median_bytes: int | None
    total_bytes: int | None  # over the sized calls
    dtypes: tuple
    group_sizes: tuple
    named_from: tuple  # "host_op", "hlo", "tf_op", "op_name", "kernel_name": where the kind was read
    issued_by: tuple  # the host ops (or HLO/TF op names' kinds) that issued them, most calls first, at most 3


def short_dtype(dtype: str) -> str:
    return _DTYPES.get(dtype, dtype.lower() if isinstance(dtype, str) else None)


def _in_windows(starts, windows):
    if len(windows) == 0:
        return np.zeros(len(starts), dtype=bool)
    slot = np.searchsorted(windows.end_ps, starts, side="right")
    inside = slot < len(windows)
    inside[inside] = starts[inside] >= windows.start_ps[slot[inside]]
    return inside


def kernel_calls_in_windows(calls, windows_of):
    """The GPU-side calls (source "kernel") that start inside their device's windows (`windows_of(ordinal)`,
    None for a device left out)."""
    by_device = {}
    for call in calls:
        if call.source == "kernel":
            by_device.setdefault(call.device, []).append(call)
    kept = []
    for device, group in by_device.items():
        windows = windows_of(device)
        if windows is None:
            continue
        inside = _in_windows(np.array([call.start_ps for call in group], dtype=np.int64), windows)
        kept.extend(call for call, keep in zip(group, inside) if keep)
    return kept


def collective_kinds(calls, step_count):
    """CollectiveKind per kind, most time first, each from the device with the most time in that kind."""
    by_kind = {}
    for call in calls:
        by_kind.setdefault(call.collective, {}).setdefault(call.device, []).append(call)
    rows = []
    for kind, devices in by_kind.items():
        group = max(devices.values(), key=lambda found: (sum(c.duration_ps for c in found), -len(found)))
        sized = [size for call in group if (size := _bytes(call)) is not None]
        issuers = {}
        for call in group:
            if call.issued_by:
                issuers[call.issued_by] = issuers.get(call.issued_by, 0) + 1
        rows.append(
            CollectiveKind(
                collective=kind,
                calls=len(group),
                calls_per_step=round(len(group) / step_count, 2) if step_count else None,
                total_ms=ms(sum(c.duration_ps for c in group)),
                median_ms=ms(statistics.median(c.duration_ps for c in group)),
                sized_calls=len(sized),
                median_bytes=int(statistics.median(sized)) if sized else None,
                total_bytes=sum(sized) if sized else None,
                dtypes=tuple(sorted({short_dtype(c.dtype) for c in group if c.dtype})),
                group_sizes=tuple(sorted({c.group_size for c in group if c.group_size})),
                named_from=tuple(sorted({c.named_from for c in group if c.named_from})),
                issued_by=tuple(sorted(issuers, key=lambda name: (-issuers[name], name))[:3]),
            )
        )
    return tuple(sorted(rows, key=lambda row: (-row.total_ms, row.collective)))


def _bytes(call):
    return call.in_bytes if call.in_bytes is not None else call.out_bytes


@dataclass(frozen=True)
class ExposedCommunication:
    """Collective time per GPU inside its windows, and the part no compute kernel of the same GPU overlaps."""

    collective_ps: dict  # ordinal -> ps
    exposed_ps: dict  # ordinal -> ps

    @property
    def least_exposed_ps(self) -> int:
        """The least exposed collective time of a GPU: the others' extra is waiting for it (a straggler's
        excess, communication.gpu_imbalance), not communication."""
        return min(self.exposed_ps.values()) if self.exposed_ps else 0

    @property
    def mean_overlapped_ps(self) -> float:
        if not self.collective_ps:
            return 0.0
        return sum(self.collective_ps[o] - self.exposed_ps[o] for o in self.collective_ps) / len(self.collective_ps)

    @property
    def overlap_pct(self):
        """Share of the collective time that overlaps the same GPU's compute (HTA's comm/compute overlap)."""
        total = sum(self.collective_ps.values())
        return round(100.0 * (total - sum(self.exposed_ps.values())) / total, 2) if total else None


def exposed_communication(
    gpus: tuple[GpuDevice, ...],
    collective_mask: Callable[..., Any],
    compute_mask: Callable[..., Any],
    windows_of: Callable[..., Any],
) -> ExposedCommunication:
    """ExposedCommunication of `gpus`: each GPU's collective kernels (`collective_mask(gpu)`) against its own
    compute kernels (`compute_mask(gpu)`), covered inside `windows_of(gpu)`. A GPU's own compute is what hides
    its communication: another GPU computing meanwhile does not shorten this GPU's step."""
    collective, exposed = {}, {}
    for gpu in gpus:
        activity, windows = gpu.activity, windows_of(gpu)
        comm, comp = collective_mask(gpu), compute_mask(gpu)
        comm_spans = intervals.union(activity.start_ps[comm], activity.end_ps[comm])
        alone = intervals.subtract(comm_spans, intervals.union(activity.start_ps[comp], activity.end_ps[comp]))
        collective[gpu.ordinal] = _covered(comm_spans, windows)
        exposed[gpu.ordinal] = _covered(alone, windows)
    return ExposedCommunication(collective, exposed)


def _covered(spans, windows):
    if len(spans) == 0 or len(windows) == 0:
        return 0
    return int(intervals.covered_ps(spans, windows.start_ps, windows.end_ps).sum())
