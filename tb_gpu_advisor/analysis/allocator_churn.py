"""Device allocator calls (cudaMalloc/cudaFree, hipMalloc/hipFree) that recur step after step: allocator churn,
not warm-up."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.host import ALLOCATOR_TAG
from tb_gpu_advisor.model.host_waits import is_allocator_call

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.model.trace import HostActivity
    from tb_gpu_advisor.model.trace import Intervals


# Calls of this length or more are what a warm process does not pay; the same threshold as first-use setup.
SLOW_CALL_PS = 1_000_000_000


@dataclass(frozen=True)
class AllocatorChurn:
    """Allocator calls inside the steps: `spans` (their union), in `steps_with` of `steps` steps; `calls`
    ((name, count, total ps), ...) most time first, over the whole trace."""

    spans: object
    steps_with: int
    steps: int
    calls: tuple


def recurring(spans: Intervals, steps: tuple) -> tuple[int, np.ndarray]:
    """The steps (of `steps`, StepMarkers) with any of `spans` inside: (count, per-step ps)."""
    if not len(spans) or not steps:
        return 0, np.zeros(len(steps), dtype=np.int64)
    per_step = intervals.covered_ps(spans, [s.start_ps for s in steps], [s.end_ps for s in steps])
    return int((per_step > 0).sum()), per_step


def recurs(count: int, steps: tuple) -> bool:
    """Allocator calls in at least two steps and at least half of them: the run's own pattern, not warm-up."""
    return count >= 2 and 2 * count >= len(steps)


def allocator_churn(host: HostActivity, steps: tuple) -> AllocatorChurn | None:
    """AllocatorChurn of a HostActivity over its steps (StepMarkers), or None when the calls do not recur."""
    spans = host.tagged.get(ALLOCATOR_TAG, intervals.EMPTY)
    count, _ = recurring(spans, steps)
    if not recurs(count, steps):
        return None
    inside = intervals.intersect(spans, intervals.union([s.start_ps for s in steps], [s.end_ps for s in steps]))
    calls = sorted(
        ((name, count, total) for name, (count, total, *_) in host.op_totals.items() if is_allocator_call(name)),
        key=lambda row: -row[2],
    )
    return AllocatorChurn(spans=inside, steps_with=count, steps=len(steps), calls=tuple(calls))


def slow_recurring_calls(host: HostActivity, steps: tuple) -> Intervals:
    """The allocator calls of SLOW_CALL_PS or more when such calls recur (recurs) in the steps, else EMPTY:
    what first-use setup must leave out."""
    spans = host.tagged.get(ALLOCATOR_TAG, intervals.EMPTY)
    if not len(spans):
        return intervals.EMPTY
    slow = (spans.end_ps - spans.start_ps) >= SLOW_CALL_PS
    slow_spans = intervals.union(spans.start_ps[slow], spans.end_ps[slow])
    count, _ = recurring(slow_spans, steps)
    return slow_spans if recurs(count, steps) else intervals.EMPTY
