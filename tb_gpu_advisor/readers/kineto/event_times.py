"""Which microsecond times a profiler can record, and a trace origin's whole microseconds and picoseconds."""

from __future__ import annotations

from typing import Any

from decimal import Decimal

from tb_gpu_advisor.readers.kineto.values import MAX_US, PS_PER_US

_MAX_US_WHOLE = int(MAX_US)  # the largest whole number of microseconds below MAX_US (not itself whole)
PLAIN_US = 9 * 10**12  # batch times within this many µs of the origin: their ps fit int64 (kineto.times)


def origin_parts(origin: int | Decimal) -> tuple[int, int] | bool:
    """(whole µs, ps) of the origin when it is a plain decimal (kineto.times), else False."""
    if not -PLAIN_US < origin < PLAIN_US:
        return False
    scaled = origin * PS_PER_US
    if scaled != int(scaled):
        return False
    whole = int(origin)
    return whole, int(scaled) - whole * PS_PER_US


def plausible_us(value: Any, kind: type) -> bool:
    """A finite microsecond number a profiler can record (|value| < 2**63 ns); `kind` is int or Decimal."""
    if kind is int:
        return -_MAX_US_WHOLE <= value <= _MAX_US_WHOLE
    return value.is_finite() and -MAX_US < value < MAX_US
