"""The host preparing the next batch while the device idles: the idle start of each step and what the host ran in it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.host import TF_DECODE_OPS, TF_FILE_READ_OPS, TF_FUNCTION_TAG, TF_PREP_TAG, XLA_CPU_TAG
from tb_gpu_advisor.model.trace import ActivityKind, CopyDirection
from tb_gpu_advisor.model.waits import feeder_waits

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.analysis.steps import StepSet
    from tb_gpu_advisor.model.trace import HostActivity
    from tb_gpu_advisor.model.trace import Intervals
    from tb_gpu_advisor.model.trace import TraceModel


# Python-tracer calls (and TensorFlow ops) that wait rather than compute: a background loader hides them even on
# the step's own cores.
WAITING_CALLS = frozenset({"sleep", "read", "readinto", "open", "load", "imread"}) | TF_FILE_READ_OPS
# Calls that read files, and calls that decode images: many small files read and decoded every step.
READ_CALLS = frozenset({"read", "readinto", "open", "load"}) | TF_FILE_READ_OPS
DECODE_CALLS = frozenset({"decode", "imread", "imdecode"}) | TF_DECODE_OPS
# The frameworks whose loops the analysis reads (input.host_batch_prep advises in their idioms).
FRAMEWORKS = ("jax", "tensorflow", "pytorch")
# How TensorFlow's preparation events are named among the calls (`TensorFlow DecodeJpeg`).
TF_CALL = "TensorFlow "
# The share of the idle starts that events must cover for the trace to show what the host did: most of it.
SEEN_MIN_SHARE = 0.5


@dataclass(frozen=True)
class PrepCall:
    """A Python-tracer call of a known batch-preparation function and its time inside the idle starts."""

    name: str
    ps: int
    waits: bool  # a wait (sleep, file read), not computation


@dataclass(frozen=True)
class BatchPrep:
    """Device-idle time from each step's start to the step's first dispatch (JAX's `PjitFunction`, a tf.function
    call, a launch call; without any, the first device activity), tf.data and DataLoader waits and the step
    thread's waits on other threads (model.waits) left out.

    `device` is "gpu" (any GPU event ends the gap), "xla_cpu" (a CPU-only JAX run: XLA's CPU executor
    threads are the device) or "tf_cpu" (a CPU-only TensorFlow run: its tf.function calls are the device).
    `recoverable_ps` is, per step, min(idle start, rest of the step): what a background loader running one batch
    ahead could hide at most. `between_steps_ps` is device-idle time between consecutive step markers (input
    prepared outside the marker), outside the analysis window.
    """

    device: str
    gaps: object  # model.intervals.Intervals
    per_step_ps: tuple
    total_ps: int
    recoverable_ps: int
    host_traced_ps: int  # of the gaps, time some host thread ran a traced event
    prep_call_ps: int  # of the gaps, time inside the known preparation calls and TensorFlow's (their union)
    calls: tuple  # PrepCall, most time first (nested calls each count their own time)
    between_steps_ps: int
    in_prep_calls: object = intervals.EMPTY  # Intervals: the gaps inside the known preparation calls
    # Intervals: the gaps of the steps that then send host data to the device (a host-to-device copy before the
    # step's first kernel): what the step thread did there built the batch it sent.
    fed_gaps: object = intervals.EMPTY

    def _share(self, ps):
        return ps / self.total_ps if self.total_ps else 0.0

    @property
    def traced_share(self) -> float:
        return self._share(self.host_traced_ps)

    @property
    def prep_call_share(self) -> float:
        return self._share(self.prep_call_ps)

    @property
    def waits(self) -> bool:
        """The named calls cover mostly waiting (sleep, file reads) rather than computing."""
        waiting = sum(call.ps for call in self.calls if call.waits)
        return waiting >= SEEN_MIN_SHARE * self.prep_call_ps > 0

    @property
    def read_ps(self) -> int:
        """Time of the named file-reading calls inside the idle starts."""
        return file_work_ps(self.calls)[0]

    @property
    def decode_ps(self) -> int:
        """Time of the named image-decoding calls inside the idle starts."""
        return file_work_ps(self.calls)[1]

    @property
    def certainty(self) -> str:
        """How sure the gap is batch preparation: "high" when known preparation calls fill most of it, "medium"
        when other traced host work does, "low" when the trace shows little there (an untraced stall)."""
        if self.prep_call_share >= SEEN_MIN_SHARE:
            return "high"
        return "medium" if self.traced_share >= SEEN_MIN_SHARE else "low"

    @property
    def input_spans(self):
        """The gaps that are batch preparation on evidence, which the step-time breakdown counts as input: all of
        them when known preparation calls fill most of them ("high"), else only the time inside those calls (a
        "medium" gap's other host work, or a "low" one's untraced stall, may be something else)."""
        return self.gaps if self.certainty == "high" else self.in_prep_calls


def device_busy(model: TraceModel) -> tuple:
    """(device kind, Intervals when the device works): every GPU event; without GPUs, XLA's CPU executor
    ("xla_cpu"), or TensorFlow running tf.function calls ("tf_cpu": a CPU-only custom loop)."""
    active = [gpu.activity for gpu in model.gpus if len(gpu.activity)]
    if active:
        return "gpu", intervals.union_all(*(intervals.union(a.start_ps, a.end_ps) for a in active))
    for kind, tag in (("xla_cpu", XLA_CPU_TAG), ("tf_cpu", TF_FUNCTION_TAG)):
        spans = model.host_activity.tagged.get(tag)
        if spans is not None and len(spans):
            return kind, spans
    return None, intervals.EMPTY


def _covered(spans, gaps):
    if len(spans) == 0 or len(gaps) == 0:
        return 0
    return int(intervals.covered_ps(spans, gaps.start_ps, gaps.end_ps).sum())


def _first_at_or_after(times, points):
    """For each point, the earliest of `times` (unsorted) at or after it, or None; without sorting `times`."""
    order = np.argsort(np.asarray(points, dtype=np.int64), kind="stable")
    sorted_points = np.asarray(points, dtype=np.int64)[order]
    # A time at or after the k smallest points (and before the others) is a candidate for those k.
    bucket = np.searchsorted(sorted_points, times, side="right")
    earliest = np.full(len(points) + 1, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(earliest, bucket, times)
    found = np.zeros(len(points) + 1, dtype=bool)
    found[bucket] = True
    # The earliest time at or after sorted point j is the minimum over buckets j+1 and above.
    suffix_min = np.minimum.accumulate(earliest[::-1])[::-1][1:]
    suffix_found = np.logical_or.accumulate(found[::-1])[::-1][1:]
    result = [None] * len(points)
    for rank, index in enumerate(order.tolist()):
        if suffix_found[rank]:
            result[index] = int(suffix_min[rank])
    return result


def batch_prep(model: TraceModel, step_set: StepSet) -> BatchPrep | None:
    """BatchPrep of a model with host steps and a device, else None."""
    kind, busy = device_busy(model)
    steps = step_set.steps
    if kind is None or step_set.source != "host" or not steps:
        return None
    host = model.host_activity
    dispatch = intervals.union_all(
        host.tagged.get("dispatch", intervals.EMPTY), host.tagged.get(TF_FUNCTION_TAG, intervals.EMPTY)
    )
    ready = np.concatenate([dispatch.start_ps, host.launch_start_ps])
    if not len(ready):
        ready = busy.start_ps
    # The step thread blocked on another thread (a queue, a lock) is analysis.feeder_waits' finding, not preparation.
    busy_or_waiting = intervals.union_all(busy, host.input_waits, feeder_waits(host.thread_waits))
    fed = _fed_steps(model, steps)
    starts, ends, per_step, recoverable, fed_starts, fed_ends = [], [], [], 0, [], []
    for index, (step, first_ready) in enumerate(zip(steps, _first_at_or_after(ready, [s.start_ps for s in steps]))):
        gap_end = min(first_ready, step.end_ps) if first_ready is not None else step.end_ps
        gap = (
            intervals.subtract(intervals.union([step.start_ps], [gap_end]), busy_or_waiting)
            if gap_end > step.start_ps
            else intervals.EMPTY
        )
        starts.extend(gap.start_ps.tolist())
        ends.extend(gap.end_ps.tolist())
        if fed[index]:
            fed_starts.extend(gap.start_ps.tolist())
            fed_ends.extend(gap.end_ps.tolist())
        length = gap.total_ps
        per_step.append(length)
        recoverable += min(length, step.duration_ps - length)
    gaps = intervals.union(starts, ends)
    between = intervals.union(
        [a.end_ps for a, b in zip(steps, steps[1:]) if b.start_ps > a.end_ps],
        [b.start_ps for a, b in zip(steps, steps[1:]) if b.start_ps > a.end_ps],
    )
    calls, in_calls = _prep_calls(host, gaps)
    return BatchPrep(
        device=kind,
        gaps=gaps,
        per_step_ps=tuple(per_step),
        total_ps=gaps.total_ps,
        recoverable_ps=int(recoverable),
        host_traced_ps=_covered(host.busy, gaps),
        prep_call_ps=in_calls.total_ps,
        calls=calls,
        between_steps_ps=intervals.subtract(between, busy).total_ps,
        in_prep_calls=in_calls,
        fed_gaps=intervals.union(fed_starts, fed_ends),
    )


def _fed_steps(model, steps):
    """Per step, whether a GPU copied host data to the device in it before the step's first kernel."""
    fed = np.zeros(len(steps), dtype=bool)
    step_starts = np.array([step.start_ps for step in steps], dtype=np.int64)
    step_ends = np.array([step.end_ps for step in steps], dtype=np.int64)
    for gpu in model.gpus:
        activity = gpu.activity
        kernel = np.isin(activity.kind, (ActivityKind.KERNEL, ActivityKind.GRAPH))
        h2d = (activity.kind == ActivityKind.MEMCPY) & (activity.copy_direction == CopyDirection.H2D)
        first_kernel = _first_at_or_after(activity.start_ps[kernel], step_starts.tolist())
        copy_starts = np.sort(activity.start_ps[h2d])
        for index, first in enumerate(first_kernel):
            end = min(first, step_ends[index]) if first is not None else step_ends[index]
            at = np.searchsorted(copy_starts, step_starts[index], side="left")
            fed[index] |= bool(at < len(copy_starts) and copy_starts[at] < end)
    return fed


def prep_calls(host: HostActivity, spans: Intervals) -> tuple[tuple, int]:
    """(PrepCall tuple, most time first; ps of `spans` inside any of them) of the known preparation calls (Python
    tracer, PyTorch's Python stack, TensorFlow's file ops and conversions) inside `spans`."""
    calls, inside = _prep_calls(host, spans)
    return calls, inside.total_ps


def _prep_calls(host, spans):
    """(PrepCall tuple, most time first; Intervals of `spans` inside any of them)."""
    calls, call_spans = [], []
    for tag, tagged in host.tagged.items():
        if tag.startswith("py:"):
            name = tag[3:].lstrip("$")
        elif tag.startswith(TF_PREP_TAG):
            name = TF_CALL + tag[len(TF_PREP_TAG) :]
        else:
            continue
        call_spans.append(tagged)
        covered = _covered(tagged, spans)
        if covered > 0:
            calls.append(PrepCall(name, covered, name.rpartition(" ")[2] in WAITING_CALLS))
    calls.sort(key=lambda call: (-call.ps, call.name))
    inside = intervals.intersect(intervals.union_all(*call_spans), spans) if len(spans) else intervals.EMPTY
    return tuple(calls), inside


def file_work_ps(calls: tuple[PrepCall, ...]) -> tuple[int, int]:
    """(read ps, decode ps) of PrepCalls: the file-reading and the image-decoding calls."""

    def total(functions: frozenset[str]) -> int:
        return sum(call.ps for call in calls if call.name.rpartition(" ")[2] in functions)

    return total(READ_CALLS), total(DECODE_CALLS)
