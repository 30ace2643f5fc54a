"""Host-to-device, device-to-host and device-to-device copies: bytes, time, bandwidth, pageable, sync."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.model.details import byte_total
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.trace import COPY_DIRECTION_KEYS, ActivityKind, CopyDirection

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.model.trace import Intervals

# Copies under this size are latency-bound: better batched into fewer, larger copies.
SMALL_COPY_BYTES = 64 * 1024


@dataclass(frozen=True)
class TransferStats:
    """One direction. pageable_count / sync_count are None when the trace does not record them."""

    count: int
    bytes: int
    time_ps: int
    pageable_count: int | None
    sync_count: int | None
    small_count: int

    @property
    def gbps(self) -> float | None:
        """Achieved bandwidth; None without time or without sizes (a trace that records no copy bytes)."""
        return self.bytes / (self.time_ps / 1e12) / 1e9 if self.time_ps > 0 and self.bytes > 0 else None


def _tri_state(value):
    return -1 if value is None else int(value)


def transfer_stats(gpus, staging: Intervals = intervals.EMPTY):
    """{"h2d"|"d2h"|"d2d"|"p2p"|"other": TransferStats} over all GPUs; directions with no copies included.
    `staging`: PJRT's host staging of host buffers (model.host.HOST_STAGING_TAG): the first host-to-device copy
    to start after each staging began copies that staged pageable buffer (its DMA reads PJRT's pinned bounce
    buffer, so the copy's own memory kinds say pinned) and counts as pageable."""
    parts: dict[str, list] = {key: [] for key in COPY_DIRECTION_KEYS.values()}
    for gpu in gpus:
        activity = gpu.activity
        copies = activity.kind == ActivityKind.MEMCPY
        if not copies.any():
            continue
        table = activity.copies
        size = np.array([c.size_bytes for c in table] + [0], dtype=np.int64)
        pageable = np.array([_tri_state(c.has_pageable_side) for c in table] + [-1], dtype=np.int8)
        is_async = np.array([_tri_state(c.is_async) for c in table] + [-1], dtype=np.int8)
        copy_id = activity.copy_id[copies]  # -1 picks the trailing "unknown" entry
        direction = activity.copy_direction[copies]
        staged = _staged(activity.start_ps[copies], direction, staging)
        for code, key in COPY_DIRECTION_KEYS.items():
            chosen = direction == int(code)
            if chosen.any():
                ids = copy_id[chosen]
                flags = np.where(staged[chosen], np.int8(1), pageable[ids])
                parts[key].append((activity.duration_ps[copies][chosen], size[ids], flags, is_async[ids]))
    result = {}
    for key, chunks in parts.items():
        if not chunks:
            result[key] = TransferStats(0, 0, 0, 0, 0, 0)
            continue
        durations, sizes, pageable, is_async = (np.concatenate(column) for column in zip(*chunks))
        result[key] = TransferStats(
            count=int(len(durations)),
            bytes=byte_total(sizes),
            time_ps=int(durations.sum()),
            pageable_count=int((pageable == 1).sum()) if (pageable >= 0).any() else None,
            sync_count=int((is_async == 0).sum()) if (is_async >= 0).any() else None,
            small_count=int((sizes < SMALL_COPY_BYTES).sum()),
        )
    return result


def _staged(starts: np.ndarray, direction: np.ndarray, staging: Intervals) -> np.ndarray:
    """Mask over the copies: the first host-to-device copy to start after each staging span began."""
    staged = np.zeros(len(starts), dtype=bool)
    h2d = np.flatnonzero(direction == int(CopyDirection.H2D))
    if not len(staging) or not len(h2d):
        return staged
    h2d = h2d[np.argsort(starts[h2d], kind="stable")]
    after = np.searchsorted(starts[h2d], staging.start_ps, side="left")
    staged[h2d[np.unique(after[after < len(h2d)])]] = True
    return staged
