"""tf.data's Python-function calls (tf.py_function / tf.numpy_function) one by one: does a call take longer when
others run beside it? Calls that compute under Python's GIL take turns, so a call that overlaps k others lasts
about k+1 times one that runs alone; calls that wait (I/O, sleep) last the same either way."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


# Calls compared with each call on either side: bounds the work on a trace of many overlapping calls (a pool has
# far fewer threads than this, so real overlaps are all counted).
_NEIGHBOURS = 256


@dataclass(frozen=True)
class PyFunctionCalls:
    """Counts and mean durations (ms) of the calls that ran alone and of those that overlapped another, and the
    mean number of calls in flight during an overlapped one (itself included)."""

    calls: int
    alone: int
    alone_ms: float | None
    overlapped_ms: float | None
    overlapped_in_flight: float | None

    @property
    def slowdown(self) -> float | None:
        """Overlapped over lone mean duration; None without both kinds of call."""
        if not self.alone_ms or self.overlapped_ms is None:
            return None
        return self.overlapped_ms / self.alone_ms

    @property
    def serialized(self) -> bool | None:
        """True: calls last longer in step with how many run at once (nearer full serialization, k calls in
        flight lasting k times as long, than no contention); False: they do not; None: the trace cannot tell
        (no lone or no overlapped calls)."""
        slowdown = self.slowdown
        if slowdown is None or not self.overlapped_in_flight:
            return None
        return slowdown >= (1.0 + self.overlapped_in_flight) / 2.0


def py_function_calls(calls: tuple[np.ndarray, np.ndarray]) -> PyFunctionCalls | None:
    """PyFunctionCalls of `calls` ((starts, ends) ps arrays sorted by start; HostActivity.py_function_calls), or
    None without calls. Linear after the sort: each call is compared with the calls that start before it ends."""
    if not calls or not len(calls[0]):
        return None
    starts, ends = calls
    count = len(starts)
    durations = (ends - starts).astype(np.float64)
    # Another call overlaps call i when it starts before i ends and ends after i starts.
    running_end = np.maximum.accumulate(ends)
    earlier_end = np.concatenate(([np.iinfo(np.int64).min], running_end[:-1]))
    overlapped = earlier_end > starts
    following = np.searchsorted(starts, ends, side="left")  # calls [i+1, following) start before i ends
    overlapped |= following > np.arange(count) + 1
    overlap_ps = np.zeros(count)
    for i in np.flatnonzero(overlapped).tolist():
        low = max(0, int(np.searchsorted(running_end, starts[i], side="right")))
        others = np.arange(max(low, i - _NEIGHBOURS), min(int(following[i]), i + _NEIGHBOURS + 1))
        others = others[others != i]
        if len(others):
            shared = np.minimum(ends[others], ends[i]) - np.maximum(starts[others], starts[i])
            overlap_ps[i] = float(np.clip(shared, 0, None).sum())
    alone = ~overlapped
    in_flight = 1.0 + overlap_ps[overlapped] / np.maximum(durations[overlapped], 1.0)
    return PyFunctionCalls(
        calls=count,
        alone=int(alone.sum()),
        alone_ms=round(float(durations[alone].mean()) / 1e9, 4) if alone.any() else None,
        overlapped_ms=round(float(durations[overlapped].mean()) / 1e9, 4) if overlapped.any() else None,
        overlapped_in_flight=round(float(in_flight.mean()), 3) if overlapped.any() else None,
    )
