"""Theoretical occupancy of a launch configuration and what limits it, from per-architecture SM limits."""

from __future__ import annotations

import math

REGISTERS_PER_SM = 65536
REGISTER_GRANULARITY = 256  # registers are allocated per warp in units of 256
WARP = 32
# compute capability -> (max threads per SM, max blocks per SM, max shared memory per SM in bytes)
SM_LIMITS = {
    (6, 0): (2048, 32, 64 * 1024),
    (6, 1): (2048, 32, 96 * 1024),
    (7, 0): (2048, 32, 96 * 1024),
    (7, 2): (2048, 32, 96 * 1024),
    (7, 5): (1024, 16, 64 * 1024),
    (8, 0): (2048, 32, 164 * 1024),
    (8, 6): (1536, 16, 100 * 1024),
    (8, 7): (1536, 16, 164 * 1024),
    (8, 9): (1536, 24, 100 * 1024),
    (9, 0): (2048, 32, 228 * 1024),
    (10, 0): (2048, 32, 228 * 1024),
    (12, 0): (1536, 32, 100 * 1024),
}


def sm_limits(cc: tuple[int, int]) -> tuple[int, int, int] | None:
    """Limits of the closest known architecture at or below `cc` (None below the oldest)."""
    known = [key for key in SM_LIMITS if key <= tuple(cc)]
    return SM_LIMITS[max(known)] if known else None


def theoretical_occupancy(cc, threads_per_block, registers_per_thread, shared_bytes):
    """(occupancy %, limiter) where limiter is "registers", "shared memory", "block size" or "threads"."""
    limits = sm_limits(cc)
    if limits is None or threads_per_block <= 0:
        return None, None
    max_threads, max_blocks, max_shared = limits
    warps = math.ceil(threads_per_block / WARP)
    bounds = {"threads": max_threads // (warps * WARP), "block size": max_blocks}
    if registers_per_thread > 0:
        per_warp = math.ceil(registers_per_thread * WARP / REGISTER_GRANULARITY) * REGISTER_GRANULARITY
        bounds["registers"] = REGISTERS_PER_SM // (per_warp * warps)
    if shared_bytes > 0:
        bounds["shared memory"] = max_shared // shared_bytes
    limiter = min(bounds, key=lambda key: (bounds[key], key != "threads"))
    blocks = bounds[limiter]
    return round(100.0 * min(blocks * warps * WARP, max_threads) / max_threads, 2), limiter
