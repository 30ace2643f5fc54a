"""Python garbage-collection pauses, from the events the profilers write for them (never from bare stalls)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.model import intervals


@dataclass(frozen=True)
class GcPauses:
    """The collections the trace records: `source` "python_gc_events" (PyTorch's `Python GC` events, one per
    collection) or "jax_gc_callbacks" (JAX's gc callback, recorded by the Python tracer when a collection starts
    and when it ends; a pause spans a start and the next end)."""

    source: str
    pauses: object  # model.intervals.Intervals, one per collection

    @property
    def count(self):
        return len(self.pauses)

    @property
    def lengths_ps(self):
        return self.pauses.end_ps - self.pauses.start_ps


def gc_pauses(host):
    """GcPauses of a HostActivity, or None when the trace records no collection."""
    events = host.tagged.get("gc")
    if events is not None and len(events):
        return GcPauses("python_gc_events", events)
    callbacks = host.tagged.get("gc_callback")
    if callbacks is None or len(callbacks) < 2:
        return None
    return GcPauses("jax_gc_callbacks", _paired(callbacks))


def _paired(callbacks):
    """Collections from start/end callbacks in time order. A profile can begin inside a collection, so of the
    two ways to pair neighbours the one with less time between partners is taken: collections are short beside
    the time between them."""
    starts, ends = callbacks.start_ps, callbacks.end_ps
    options = []
    for first in (0, 1):
        count = (len(starts) - first) // 2
        if count:
            pair_starts = starts[first : first + 2 * count : 2]
            pair_ends = ends[first + 1 : first + 2 * count : 2]
            options.append((int((pair_ends - pair_starts).sum()) / count, pair_starts, pair_ends))
    _, pair_starts, pair_ends = min(options, key=lambda option: option[0])
    return intervals.union(np.asarray(pair_starts, np.int64), np.asarray(pair_ends, np.int64))
