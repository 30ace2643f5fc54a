"""Allocator statistics of a profile: per allocator, the peak bytes in use and the allocator's limit."""

from dataclasses import dataclass


@dataclass(frozen=True)
class AllocatorStats:
    """One allocator over the profile. `limit_bytes` = bytes allocated + bytes available at an event: the most
    the allocator may hold (TensorFlow's per-GPU memory limit); `device` is the GPU ordinal of `GPU_<n>_bfc`."""

    name: str
    device: int | None
    peak_bytes_in_use: int
    limit_bytes: int | None
    events: int
