"""Why every GPU idles at once: one cause per instant, taken from the per-GPU idle attribution.

Each GPU's attribution (analysis.idle_attribution) gives every instant of its own idle gaps one cause. Where
every GPU idles at once, the GPUs may disagree (one waits for a launch call, another on a peer), and the instant
takes one GPU's cause:

- A GPU held by the host (any cause but `device_wait`, in a gap that work ends: after its last work a GPU waits
  for nothing) outranks a GPU whose work is queued (`device_wait`) or that has no work left: while no GPU
  runs, queued work waits for something no GPU of the trace is doing, an event or a peer the host has not yet
  started or a device outside the trace, so where the host holds another GPU back, the host holds the machine.
  Only where no GPU is so held is the instant another cause (`device_wait` where work is queued).
- Among the GPUs so ranked, the one whose gap ends first: its work is what ends the idle time of the whole
  machine, so what held that work held the machine. Equal ends go to the GPU first in the attribution's order.

A GPU with no gap of its own at the instant (its device time left out of the caller's busy intervals) is never
chosen. With one GPU this is its attribution restricted to the idle instants.
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.analysis.idle_attribution import IDLE_CAUSES
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.trace import Intervals

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.analysis.idle_attribution import IdleAttribution

_FAR_PS = 2**60  # as far as idle_attribution's gaps reach
_NEVER = 2**62


def all_idle_causes(idle: IdleAttribution, busy: Intervals) -> dict[str, Intervals]:
    """{cause (IDLE_CAUSES): Intervals} of the instants outside `busy` (the device time of every GPU), each
    instant under one GPU's cause (module docstring). Empty without attributed GPUs."""
    if not idle.gpus:
        return dict.fromkeys(IDLE_CAUSES, intervals.EMPTY)
    everywhere = Intervals(np.array([-_FAR_PS], dtype=np.int64), np.array([_FAR_PS], dtype=np.int64))
    idle_now = intervals.subtract(everywhere, busy)
    gaps = [intervals.union_all(*gpu.spans.values()) for gpu in idle.gpus]
    held = [_held_by_host(gap, gpu.spans["device_wait"]) for gap, gpu in zip(gaps, idle.gpus, strict=True)]
    # Pieces of the idle time over which no GPU's gap or host-held time starts or ends.
    cuts = np.unique(
        np.concatenate([idle_now.start_ps, idle_now.end_ps, *(h.start_ps for h in held), *(h.end_ps for h in held)])
    )
    inside = np.asarray(_holding(idle_now, cuts[:-1]) >= 0, dtype=bool)
    start, end = cuts[:-1][inside], cuts[1:][inside]
    ends = np.stack([_gap_end_at(gap, start) for gap in gaps])
    by_host = np.stack([_holding(h, start) >= 0 for h in held])
    held_anywhere = np.asarray(by_host.any(axis=0), dtype=bool)
    ranked = np.where(held_anywhere[None, :] & ~by_host, _NEVER, ends)
    owner = np.argmin(ranked, axis=0)
    owned_by = [intervals.union(start[owner == index], end[owner == index]) for index in range(len(idle.gpus))]
    return {
        cause: intervals.union_all(
            *(intervals.intersect(gpu.spans[cause], owned) for gpu, owned in zip(idle.gpus, owned_by, strict=True))
        )
        for cause in IDLE_CAUSES
    }


def _held_by_host(gaps: Intervals, device_wait: Intervals) -> Intervals:
    """The instants of `gaps` the host held the GPU back: not `device_wait`, and in a gap that work ends (after
    its last work a GPU waits for nothing, whatever the host does then)."""
    ended = gaps.end_ps < _FAR_PS
    return intervals.subtract(Intervals(gaps.start_ps[ended], gaps.end_ps[ended]), device_wait)


def _holding(spans: Intervals, at: np.ndarray) -> np.ndarray:
    """Per instant of `at`: the index of the interval of `spans` holding it, or -1."""
    if not len(spans):
        return np.full(len(at), -1, dtype=np.int64)
    index = np.searchsorted(spans.end_ps, at, side="right")
    found = index < len(spans)
    index = np.minimum(index, len(spans) - 1)
    found &= spans.start_ps[index] <= at
    return np.where(found, index, -1)


def _gap_end_at(gaps: Intervals, at: np.ndarray) -> np.ndarray:
    """Per instant of `at`: the end of the gap of `gaps` holding it, or _NEVER where none does."""
    index = _holding(gaps, at)
    return np.where(index >= 0, gaps.end_ps[np.maximum(index, 0)] if len(gaps) else _NEVER, _NEVER)
