"""Parses CUPTI's `kernel_details` and `memcpy_details` strings, in both the current and the old format."""

from __future__ import annotations

import math
from dataclasses import dataclass

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class KernelConfig:
    """Launch configuration of one kernel; occupancy is None when the trace does not record it. Theoretical
    occupancy (CUPTI, XPlane) and Kineto's estimate of achieved occupancy are different numbers, kept apart."""

    registers_per_thread: int
    static_shared_bytes: int
    dynamic_shared_bytes: int
    grid: tuple
    block: tuple
    occupancy_pct: float | None
    achieved_occupancy_pct: float | None = None  # Kineto's `est. achieved occupancy %`

    @property
    def shared_memory_bytes(self) -> int:
        return self.static_shared_bytes + self.dynamic_shared_bytes

    @property
    def threads_per_block(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def blocks(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]


@dataclass(frozen=True)
class CopyDetails:
    """One memcpy's size and memory kinds; kinds are None in the old format, which does not record them."""

    size_bytes: int
    src_kind: str | None
    dst_kind: str | None
    is_async: bool | None

    @property
    def has_pageable_side(self) -> bool | None:
        if self.src_kind is None and self.dst_kind is None:
            return None
        return "pageable" in (self.src_kind, self.dst_kind)


_U32_MAX = 2**32 - 1
# One copy larger than this (1 TiB, several times any GPU's memory) is a corrupt size: recorded as 0, unknown.
MAX_COPY_BYTES = 2**40


def _fields(text):
    out = {}
    for token in text.split():
        key, sep, value = token.partition(":")
        if sep:
            out[key] = value
    return out


def _u32(value, default):
    try:
        number = int(value)
    except (TypeError, ValueError):
        return default
    return number if 0 <= number <= _U32_MAX else default


def _dim3(value):
    parts = (value or "").split(",")
    if len(parts) != 3:
        return (1, 1, 1)
    dims = tuple(_u32(part, None) for part in parts)
    return (1, 1, 1) if None in dims else dims


def parse_kernel_details(text: str) -> KernelConfig:
    """KernelConfig from `regs:.. static_shared:.. dynamic_shared:.. grid:x,y,z block:x,y,z occ_pct:..`.

    The old format (`regs:.. shm:.. grid:.. block:..`) has no occupancy; like XProf, its `shm` is not read
    as shared memory. Values that do not fit 32 bits keep their defaults, as in XProf.
    """
    fields = _fields(text)
    occupancy = None
    if "occ_pct" in fields:
        try:
            occupancy = float(fields["occ_pct"])
        except ValueError:
            occupancy = None
        if occupancy is not None and not math.isfinite(occupancy):
            occupancy = None  # not a number: unknown (out-of-range shares are nulled with a note by plausibility)
    return KernelConfig(
        registers_per_thread=_u32(fields.get("regs"), 0),
        static_shared_bytes=_u32(fields.get("static_shared"), 0),
        dynamic_shared_bytes=_u32(fields.get("dynamic_shared"), 0),
        grid=_dim3(fields.get("grid")),
        block=_dim3(fields.get("block")),
        occupancy_pct=occupancy,
    )


def parse_copy_details(text: str) -> CopyDetails:
    """CopyDetails from `kind_src:.. kind_dst:.. size:.. dest:.. async:..` or the old `size:.. dest:.. async:..`."""
    fields = _fields(text)
    try:
        size = max(0, int(fields.get("size", fields.get("num_bytes", "0"))))
    except ValueError:
        size = 0
    if size > MAX_COPY_BYTES:
        size = 0
    is_async = {"0": False, "1": True}.get(fields.get("async"))
    src = fields.get("kind_src")
    dst = fields.get("kind_dst")
    return CopyDetails(size_bytes=size, src_kind=src, dst_kind=dst, is_async=is_async)


def byte_total(sizes: np.ndarray) -> int:
    """The exact sum of an array of byte counts, as a Python int: summed in int64 only when it cannot wrap."""
    if not len(sizes):
        return 0
    if int(sizes.max()) * len(sizes) < 2**63 and int(sizes.min()) >= 0:
        return int(sizes.sum())
    return sum(sizes.tolist())
