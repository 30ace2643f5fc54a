"""np.unique of a chunk's ids by a lookup table over their range instead of a sort (ids span a small range)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

# A table may be this many entries longer than the array (else np.unique sorts, as before).
_SLACK = 4096


def unique_ids(values: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(unique, first, inverse) exactly as np.unique(values, return_index=True, return_inverse=True) gives them,
    for a 1-D integer array."""
    values = np.asarray(values)
    count = len(values)
    if count == 0 or values.ndim != 1 or values.dtype.kind not in "iu":
        return np.unique(values, return_index=True, return_inverse=True)
    low, high = int(values.min()), int(values.max())
    if high - low + 1 > 4 * count + _SLACK:
        return np.unique(values, return_index=True, return_inverse=True)
    first, inverse = _from_table((values - values.dtype.type(low)).astype(np.intp), high - low + 1)
    return values[first], first, inverse


def unique_rows(keys: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(unique, first, inverse) exactly as np.unique(keys, axis=0, return_index=True, return_inverse=True) gives
    them, for a 2-D int64 array (rows in lexicographic order)."""
    keys = np.asarray(keys)
    count = len(keys)
    if count == 0 or keys.ndim != 2 or keys.dtype != np.int64 or keys.shape[1] == 0:
        return np.unique(keys, axis=0, return_index=True, return_inverse=True)
    lows, highs = keys.min(axis=0), keys.max(axis=0)
    spans = [int(h) - int(lo) + 1 for lo, h in zip(lows.tolist(), highs.tolist())]
    size = 1
    for span in spans:
        size *= span
    if size > 4 * count + _SLACK:
        return np.unique(keys, axis=0, return_index=True, return_inverse=True)
    code = np.zeros(count, dtype=np.intp)
    for column, (low, span) in enumerate(zip(lows.tolist(), spans)):
        code = code * span + (keys[:, column] - low).astype(np.intp)  # the first column most significant
    first, inverse = _from_table(code, size)
    return keys[first], first, inverse


def _from_table(shifted: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """(first, inverse) of non-negative ints below `size`, distinct values in increasing order."""
    count = len(shifted)
    first_at = np.full(size, count, dtype=np.intp)
    np.minimum.at(first_at, shifted, np.arange(count, dtype=np.intp))
    present = np.flatnonzero(first_at < count)
    lookup = np.empty(size, dtype=np.intp)
    lookup[present] = np.arange(len(present), dtype=np.intp)
    return first_at[present], lookup[shifted]
