"""The microsecond times of a batch of Kineto events, read from their JSON text at once (numpy) and exactly: each
as whole microseconds and picoseconds, for the plain decimals profilers write (an optional `-`, at most 15 digits,
then at most 6 after a point, no exponent). Anything else is left to the per-event path (kineto.values)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

_WHOLE = 15  # digits before the point: below 10**15 µs, far inside what a profiler records (values.MAX_US)
_FRACTION = 6  # digits after it: picoseconds
# Each number is laid out in a row with its point (or its end) at column _WHOLE + 1: a sign, the whole digits
# right-aligned before it, the fraction's digits left-aligned after it.
_COLUMNS = np.arange(-_WHOLE - 1, _FRACTION + 1)
_WHOLE_WEIGHTS = 10 ** np.arange(_WHOLE - 1, -1, -1, dtype=np.int64)
_FRACTION_WEIGHTS = 10 ** np.arange(_FRACTION - 1, -1, -1, dtype=np.int64)
_MINUS, _POINT, _ZERO, _EXPONENT = ord("-"), ord("."), ord("0"), ord("e")


def split_us(texts: Sequence[bytes | memoryview]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(whole µs, ps after the whole µs, plain) arrays for the JSON texts `texts` (bytes-like, each one valid
    JSON value: a number, or anything else, which is not plain); a negative number has both parts negative."""
    count = len(texts)
    lengths = np.array(list(map(len, texts)), dtype=np.int64)
    joined = np.frombuffer(b"".join(texts), dtype=np.uint8)
    if not count or not len(joined):
        return np.zeros(count, np.int64), np.zeros(count, np.int64), np.zeros(count, bool)
    starts = np.cumsum(lengths) - lengths
    ends = starts + lengths
    # A valid JSON value that starts with `-` or a digit is a number: at most one point, digits elsewhere.
    first = joined[starts]
    negative = first == _MINUS
    number = negative | ((first >= _ZERO) & (first <= _ZERO + 9))
    marks = np.flatnonzero((joined == _POINT) | (joined | 0x20 == _EXPONENT))
    mark_rows = np.searchsorted(starts, marks, side="right") - 1
    point = ends.copy()  # no point: the number ends where its whole part does
    point[mark_rows] = marks
    exponent = np.zeros(count, bool)
    exponent[mark_rows[joined[marks] != _POINT]] = True
    whole_digits = point - starts - negative
    plain = number & ~exponent & (whole_digits >= 1) & (whole_digits <= _WHOLE) & (ends - point - 1 <= _FRACTION)
    index = point[:, None] + _COLUMNS
    outside = (index < (starts + negative)[:, None]) | (index >= ends[:, None])
    digits = joined[np.clip(index, 0, len(joined) - 1)] - np.uint8(_ZERO)
    digits[outside | (digits > 9)] = 0  # other numbers' characters, this one's sign and point
    whole = digits[:, 1 : _WHOLE + 1].astype(np.int64) @ _WHOLE_WEIGHTS
    fraction = digits[:, _WHOLE + 2 :].astype(np.int64) @ _FRACTION_WEIGHTS
    sign = np.where(negative, -1, 1)
    return whole * sign, fraction * sign, plain
