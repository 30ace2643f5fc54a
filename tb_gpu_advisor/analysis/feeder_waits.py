"""The threads that feed the device blocked on other threads (queues, locks, conditions, futures) while every
device idles, and what the other threads did meanwhile."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.analysis.batch_prep import WAITING_CALLS, device_busy
from tb_gpu_advisor.analysis.gc_pauses import gc_pauses
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.waits import PRODUCER_KINDS, outermost


@dataclass(frozen=True)
class OtherThread:
    """A traced thread other than the feeders, seen during their blocked time."""

    thread: str
    busy_ps: int  # its busy time inside the blocked time
    waiting_ps: int  # of that, time inside known waiting calls (sleep, file reads: batch_prep.WAITING_CALLS)
    wakes: int  # its wake calls (queue put, notify, lock release) that start inside the feeders' blocked waits


@dataclass(frozen=True)
class OtherCall:
    """A Python-tracer call of a known batch-preparation function (model.host.PREP_FUNCTIONS) that another thread
    ran inside the blocked time (the feeders were waiting, so the call ran elsewhere)."""

    name: str
    ps: int
    waits: bool  # a wait (sleep, file read: batch_prep.WAITING_CALLS), not computation


@dataclass(frozen=True)
class FeederWaits:
    """The feeders' waits on other threads during which every device idles, inside the analysis window; tf.data
    and DataLoader input waits and Python GC pauses left out (their own findings).

    `device` is "gpu" or "xla_cpu" (a CPU-only JAX run: XLA's CPU executor threads are the device). `kinds` is
    ((wait kind, ps), ...) by the outermost call waiting (model.waits.WAIT_KINDS), most time first;
    `per_step_ps` is the blocked time inside each step (empty without steps). `input_blocked` is the part of
    `blocked` whose outermost wait is on a producer (model.waits.PRODUCER_KINDS: a queue, a future, a condition):
    the step thread waiting for its next batch, which the step-time breakdown counts as input wait; a lock's wait is
    contention, not input.
    """

    device: str
    feeders: tuple  # names of the threads that feed the device and wait
    blocked: object  # model.intervals.Intervals
    kinds: tuple
    wait_count: int  # the feeders' outermost waits that overlap the blocked time
    per_step_ps: tuple
    others: tuple  # OtherThread, most wakes then most busy first
    other_calls: tuple  # OtherCall, most time first
    input_blocked: object = intervals.EMPTY  # model.intervals.Intervals

    @property
    def total_ps(self):
        return self.blocked.total_ps

    @property
    def main_kind(self):
        return self.kinds[0][0] if self.kinds else None


def feeder_blocking(model, step_set, window):
    """FeederWaits of a model with a device and feeder threads that wait, else None."""
    host = model.host_activity
    feeders = [thread for thread in host.thread_waits if thread.feeds_device and thread.waits]
    kind, busy = device_busy(model)
    if kind is None or not feeders or len(window) == 0:
        return None
    pauses = gc_pauses(host)
    excluded = intervals.union_all(busy, host.input_waits, pauses.pauses if pauses is not None else intervals.EMPTY)
    by_kind, waits, producer_waits = {}, [], []
    for thread in feeders:
        for wait_kind, spans in outermost(thread.waits).items():
            blocked = intervals.intersect(intervals.subtract(spans, excluded), window)
            if len(blocked):
                by_kind[wait_kind] = by_kind.get(wait_kind, 0) + blocked.total_ps
                waits.append(blocked)
                if wait_kind in PRODUCER_KINDS:
                    producer_waits.append(blocked)
    blocked = intervals.union_all(*waits)
    if len(blocked) == 0:
        return None
    outer = intervals.union_all(*(spans for thread in feeders for spans in thread.waits.values()))
    hit = intervals.covered_ps(blocked, outer.start_ps, outer.end_ps) > 0
    touching = intervals.Intervals(outer.start_ps[hit], outer.end_ps[hit])
    # The Python tracer's calls are not kept per thread: a thread's waiting time is its busy time inside any
    # thread's waiting calls (exact with one other thread; with several, a bound on it).
    sleeping = intervals.intersect(
        blocked,
        intervals.union_all(
            *(
                spans
                for tag, spans in host.tagged.items()
                if tag.startswith("py:") and tag.rpartition(" ")[2] in WAITING_CALLS
            )
        ),
    )
    others, other_threads = [], [thread for thread in host.thread_waits if not any(thread is f for f in feeders)]
    for thread in other_threads:
        busy_ps = _covered(thread.busy, blocked)
        wakes = _starts_inside(thread.wakes.start_ps, touching)
        if busy_ps or wakes:
            others.append(OtherThread(thread.thread, busy_ps, _covered(thread.busy, sleeping), wakes))
    others.sort(key=lambda other: (-other.wakes, -other.busy_ps, other.thread))
    other_busy = intervals.intersect(blocked, intervals.union_all(*(thread.busy for thread in other_threads)))
    calls = [
        OtherCall(tag[3:].lstrip("$"), covered, tag.rpartition(" ")[2] in WAITING_CALLS)
        for tag, spans in host.tagged.items()
        if tag.startswith("py:") and (covered := _covered(spans, other_busy)) > 0
    ]
    calls.sort(key=lambda call: (-call.ps, call.name))
    return FeederWaits(
        device=kind,
        feeders=tuple(sorted({thread.thread for thread in feeders})),
        blocked=blocked,
        kinds=tuple(sorted(by_kind.items(), key=lambda item: (-item[1], item[0]))),
        wait_count=len(touching),
        per_step_ps=tuple(
            int(ps)
            for ps in intervals.covered_ps(
                blocked, [s.start_ps for s in step_set.steps], [s.end_ps for s in step_set.steps]
            )
        ),
        others=tuple(others),
        other_calls=tuple(calls),
        input_blocked=intervals.union_all(*producer_waits),
    )


def _covered(spans, within):
    if len(spans) == 0 or len(within) == 0:
        return 0
    return int(intervals.covered_ps(spans, within.start_ps, within.end_ps).sum())


def _starts_inside(starts, spans):
    """How many of `starts` fall inside one of `spans`."""
    if len(starts) == 0 or len(spans) == 0:
        return 0
    index = np.searchsorted(spans.start_ps, starts, side="right") - 1
    inside = index >= 0
    inside[inside] = starts[inside] < spans.end_ps[index[inside]]
    return int(inside.sum())
