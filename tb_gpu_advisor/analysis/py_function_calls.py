"""tf.data's Python-function calls (tf.py_function / tf.numpy_function) one by one: does a call take longer when
others run beside it? Calls that compute under Python's GIL take turns, so a call that overlaps k others lasts
about k+1 times one that runs alone; calls that wait (I/O, sleep) last the same either way."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.model import intervals

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.model.trace import Intervals


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
    # The step thread's Python between an input wait's end and the next tf.function call (the loop's own Python,
    # normally well under a millisecond): how many such sections were seen, and in how many a call ended.
    step_sections: int = 0
    step_sections_after_call: int = 0
    shortest_section_ms: float | None = None
    mean_ms: float | None = None  # of all calls

    @property
    def holds_gil(self) -> bool | None:
        """True: in most of the step thread's Python sections a call ended, so the step thread's Python waited
        for the calls to give the GIL back (a call that waits (I/O, sleep) releases it; then its own return waits
        for the step thread instead, and no call ends there); False: in at most half; None: no section seen, or
        the loop's own Python (its shortest section) lasts as long as a call, so calls end inside its sections
        whether or not they hold the GIL."""
        if not self.step_sections or self.shortest_section_ms is None or self.mean_ms is None:
            return None
        if self.shortest_section_ms >= self.mean_ms:
            return None
        return self.step_sections_after_call > self.step_sections / 2

    @property
    def slowdown(self) -> float | None:
        """Overlapped over lone mean duration; None without both kinds of call."""
        if not self.alone_ms or self.overlapped_ms is None:
            return None
        return self.overlapped_ms / self.alone_ms

    @property
    def gil_evidence(self) -> str:
        """What shows that the calls hold the GIL, in words (where `computes` is True)."""
        if self.serialized:
            return (
                f"a call lasts {self.alone_ms:.2f} ms alone, {self.overlapped_ms:.2f} ms with "
                f"{self.overlapped_in_flight:.2f} in flight"
            )
        return (
            f"the step thread's Python waited for a call to end in {self.step_sections_after_call} of its "
            f"{self.step_sections} sections between an input wait and the step's tf.function call"
        )

    @property
    def computes(self) -> bool | None:
        """The calls compute under the GIL: serialized where calls overlap, else holds_gil."""
        return self.serialized if self.serialized is not None else self.holds_gil

    @property
    def serialized(self) -> bool | None:
        """True: calls last longer in step with how many run at once (nearer full serialization, k calls in
        flight lasting k times as long, than no contention); False: they do not; None: the trace cannot tell
        (no lone or no overlapped calls)."""
        slowdown = self.slowdown
        if slowdown is None or not self.overlapped_in_flight:
            return None
        return slowdown >= (1.0 + self.overlapped_in_flight) / 2.0


def step_sections(calls_end_ps: np.ndarray, input_waits: Intervals, functions: Intervals | None) -> tuple:
    """(sections, sections in which a call ended, shortest section ms or None): a section runs from each input
    wait's end to the start of the next tf.function call (HostActivity.tagged["tf_function"]), the step thread's
    own Python in between."""
    if functions is None or not len(functions) or not len(input_waits):
        return 0, 0, None
    following = np.searchsorted(functions.start_ps, input_waits.end_ps, side="left")
    seen = following < len(functions)
    starts, ends = input_waits.end_ps[seen], functions.start_ps[following[seen]]
    ended = np.sort(calls_end_ps)
    inside = np.searchsorted(ended, ends, side="right") - np.searchsorted(ended, starts, side="right")
    if not len(starts):
        return 0, 0, None
    return int(seen.sum()), int((inside > 0).sum()), round(float((ends - starts).min()) / 1e9, 4)


def py_function_calls(
    calls: tuple[np.ndarray, np.ndarray], input_waits: Intervals | None = None, functions: Intervals | None = None
) -> PyFunctionCalls | None:
    """PyFunctionCalls of `calls` ((starts, ends) ps arrays sorted by start; HostActivity.py_function_calls), or
    None without calls; `input_waits` and `functions` (the step thread's tf.function calls) give step_sections.
    Linear after the sort: each call is compared with the calls that start before it ends."""
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
        **dict(
            zip(
                ("step_sections", "step_sections_after_call", "shortest_section_ms"),
                step_sections(ends, input_waits, functions) if input_waits is not None else (0, 0, None),
            )
        ),
        mean_ms=round(float(durations.mean()) / 1e9, 4),
    )


def gil_waits(prep, calls: PyFunctionCalls | None) -> Intervals:
    """The step thread waiting for the GIL: batch_prep's idle starts (`prep`, a BatchPrep) where tf.data's Python
    function calls hold the GIL (`calls.holds_gil`: a call ends in most of the step thread's Python sections between
    an input wait and the step's tf.function call) and no known preparation call fills them (certainty below
    "high"); else EMPTY. A wait on the calls, never the step thread's own work: the breakdown's `gil_wait`."""
    if prep is None or calls is None or prep.certainty == "high" or calls.holds_gil is not True:
        return intervals.EMPTY
    return prep.gaps
