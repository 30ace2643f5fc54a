"""Allocator statistics (model.allocators.AllocatorStats) from TensorFlow's memory profile events
(`MemoryAllocation`/`MemoryDeallocation` on the host threads): per allocator, the peak bytes in use and the
allocator's limit."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from tb_gpu_advisor.model.allocators import AllocatorStats
from tb_gpu_advisor.readers.xplane.plane_scan import ABSENT, PlaneScan, event_chunks, python_value
from tb_gpu_advisor.readers.xplane.stats import ids_named, is_derived_line, stat_names, stat_value

MEMORY_EVENTS = frozenset({"MemoryAllocation", "MemoryDeallocation"})
_STATS = {"allocator_name", "peak_bytes_in_use", "bytes_allocated", "bytes_available"}
_GPU_ALLOCATOR = re.compile(r"^GPU_(\d+)_bfc$")


class AllocatorCollector:
    """Accumulates allocator statistics over host planes."""

    def __init__(self):
        self._found = {}  # name -> [peak, limit, events]

    def _add(self, values):
        name = values.get("allocator_name")
        peak = values.get("peak_bytes_in_use")
        if not isinstance(name, str) or not name or not _is_count(peak):
            return
        entry = self._found.setdefault(name, [0, None, 0])
        entry[0] = max(entry[0], peak)
        allocated, available = values.get("bytes_allocated"), values.get("bytes_available")
        if _is_count(allocated) and _is_count(available):
            entry[1] = max(entry[1] or 0, allocated + available)
        entry[2] += 1

    def add_scan(self, scan: PlaneScan) -> None:
        """The memory events of a scanned host plane (plane_scan.PlaneScan)."""
        meta_ids = {key for key, meta in scan.meta.event_metadata.items() if meta.name in MEMORY_EVENTS}
        if not meta_ids:
            return
        names = stat_names(scan.meta)
        wanted = ids_named(names, _STATS)
        memory = np.array(sorted(meta_ids), dtype=np.int64)
        for chunk in event_chunks(scan, wanted):
            for row in np.flatnonzero(np.isin(chunk.metadata_id, memory)).tolist():
                if not _is_thread(scan.lines[chunk.line[row]].id):
                    continue
                self._add(
                    {
                        key: python_value(column, row, scan.data, names)
                        for key, column in chunk.stats.items()
                        if column.kind[row] != ABSENT
                    }
                )

    def add_plane(self, plane: Any) -> None:
        """The memory events of a decoded host plane (the reference path)."""
        meta_ids = {key for key, meta in plane.event_metadata.items() if meta.name in MEMORY_EVENTS}
        if not meta_ids:
            return
        names = stat_names(plane)
        wanted = ids_named(names, _STATS)
        for line in plane.lines:
            if not _is_thread(line.id):
                continue
            for event in line.events:
                if event.metadata_id in meta_ids:
                    self._add(
                        {
                            wanted[stat.metadata_id]: stat_value(stat, names)
                            for stat in event.stats
                            if stat.metadata_id in wanted
                        }
                    )

    def merge(self, other: AllocatorCollector) -> None:
        """Adds another collector's allocators (one plane's, read on the fast path)."""
        for name, (peak, limit, events) in other._found.items():
            entry = self._found.setdefault(name, [0, None, 0])
            entry[0] = max(entry[0], peak)
            entry[1] = limit if entry[1] is None else max(entry[1], limit or 0)
            entry[2] += events

    def result(self) -> tuple[AllocatorStats, ...]:
        return tuple(
            AllocatorStats(name, _device(name), peak, limit, events)
            for name, (peak, limit, events) in sorted(self._found.items())
        )


def _device(name):
    match = _GPU_ALLOCATOR.match(name)
    return int(match.group(1)) if match else None


def _is_thread(line_id):
    return not is_derived_line(line_id)


def _is_count(value):
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
