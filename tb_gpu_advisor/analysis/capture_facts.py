"""What a capture holds that bounds what it can tell: warm-up, dropped events, steps without GPU work, one-pass kernels."""

from __future__ import annotations

import re

import numpy as np

from tb_gpu_advisor.analysis.allocator_churn import slow_recurring_calls
from tb_gpu_advisor.analysis.kernel_names import is_nccl
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.trace import ActivityKind
from tb_gpu_advisor.text_match import in_order

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.model.trace import GpuDevice
    from tb_gpu_advisor.model.trace import Intervals
    from tb_gpu_advisor.model.trace import StepMarker
    from tb_gpu_advisor.model.trace import TraceModel


# Warm-up: a launch call this long while the GPU has nothing to run is loading the kernel's module or creating
# the context (a warm launch takes microseconds; a full launch queue blocks only while the GPU is busy).
WARMUP_LAUNCH_MIN_PS = 1_000_000_000
WARMUP_GPU_BUSY_MAX = 0.1  # share of such a launch call the GPU may be busy
# A repeating workload interleaves its main kernels (each step runs them all); a capture whose main kernels
# each ran in one stretch of their own holds one pass of work (a sweep, setup), not repeated steps.
MAIN_KERNEL_TIME_SHARE = 0.8
MAIN_KERNEL_MAX = 10
INTERLEAVED_PAIRS_MIN = 1 / 3
_DROPPED = re.compile(r"drop|lost|overflow|exceed|truncat|missing events", re.IGNORECASE)  # or "buffer ... full"


def recurs_in_steps(spans: Intervals, steps: tuple) -> bool:
    """The spans recur as the steps go on: at least half of the steps after the first have one start in them (a
    call that stalls every step is the program's own cost, e.g. allocator churn, not warm-up; one long call
    across steps is not recurring); needs 3 steps or more."""
    if len(steps) < 3 or not len(spans):
        return False
    starts = np.asarray(spans.start_ps)
    later = [bool(((starts >= s.start_ps) & (starts < s.end_ps)).any()) for s in steps[1:]]
    return 2 * sum(later) >= len(later)


def dropped_events(model: TraceModel) -> list:
    """The profiler's errors, and its warnings about lost or dropped events."""
    dropped = [
        text
        for text in (*model.trace_errors, *model.trace_warnings)
        if _DROPPED.search(text) or in_order(text.lower(), "buffer", "full")
    ]
    seen = set(dropped)
    return dropped + [text for text in model.trace_errors if text not in seen]


def warmup_spans(model: TraceModel) -> Intervals:
    """Intervals of first-use setup: the trace's "init" calls, and launch calls of WARMUP_LAUNCH_MIN_PS or more
    while no GPU was busy (module loading on a kernel's first launch)."""
    host = model.host_activity
    init = host.tagged.get("init", intervals.EMPTY)
    long = np.flatnonzero(host.launch_duration_ps >= WARMUP_LAUNCH_MIN_PS)
    if len(long):
        starts = host.launch_start_ps[long]
        ends = starts + host.launch_duration_ps[long]
        busy = _gpu_busy(model)
        covered = intervals.covered_ps(busy, starts, ends)
        idle = covered <= WARMUP_GPU_BUSY_MAX * (ends - starts)
        init = intervals.union(np.concatenate([init.start_ps, starts[idle]]), np.concatenate([init.end_ps, ends[idle]]))
    # Slow allocator calls that recur step after step are allocator churn (memory.allocator_churn), not setup.
    return intervals.subtract(init, slow_recurring_calls(host, model.host_step_markers))


def _gpu_busy(model):
    active = [gpu.activity for gpu in model.gpus if len(gpu.activity)]
    if not active:
        return intervals.EMPTY
    return intervals.union(np.concatenate([a.start_ps for a in active]), np.concatenate([a.end_ps for a in active]))


def covered_in(spans: Intervals, start: int, end: int) -> int:
    return int(intervals.covered_ps(spans, [start], [end])[0]) if len(spans) else 0


def activity_span(model: TraceModel) -> tuple[int, int]:
    active = [gpu.activity for gpu in model.gpus if len(gpu.activity)]
    if not active:
        return model.profile_span_ps
    return min(int(a.start_ps[0]) for a in active), max(int(a.end_ps.max()) for a in active)


def world_size(model: TraceModel) -> int:
    world = model.environment.get("world_size")
    return world if isinstance(world, int) and not isinstance(world, bool) else 0


def steps_without_gpu_work(model, steps, cut=()):
    """The steps, other than the capture's cut stubs, in which no GPU has any event while GPUs work in others."""
    active = [gpu.activity for gpu in model.gpus if len(gpu.activity)]
    if len(steps) < 2 or not active:
        return ()
    starts = np.array([step.start_ps for step in steps], dtype=np.int64)
    ends = np.array([step.end_ps for step in steps], dtype=np.int64)
    worked = np.zeros(len(steps), dtype=bool)
    for activity in active:
        busy = intervals.union(activity.start_ps, activity.end_ps)
        worked |= intervals.covered_ps(busy, starts, ends) > 0
    stubs = {id(step) for step in cut}
    return tuple(step for step, did in zip(steps, worked) if not did and id(step) not in stubs) if worked.any() else ()


def one_pass_kernels(kernel_gpus):
    """(count, "name xN, ...") when the main kernels of every GPU each ran in a stretch of their own; None when
    they interleave (a repeating step) or there are fewer than two."""
    found = None
    for gpu in kernel_gpus:
        activity = gpu.activity
        index = np.flatnonzero(
            (activity.kind == ActivityKind.KERNEL)
            & ~np.array([is_nccl(name) for name in activity.names], dtype=bool)[activity.name_id]
        )
        if not len(index):
            continue
        name_id = activity.name_id[index]
        total = np.bincount(
            name_id, weights=activity.duration_ps[index].astype(np.float64), minlength=len(activity.names)
        )
        count = np.bincount(name_id, minlength=len(activity.names))
        first = np.full(len(activity.names), np.iinfo(np.int64).max)
        last = np.zeros(len(activity.names), np.int64)
        np.minimum.at(first, name_id, activity.start_ps[index])
        np.maximum.at(last, name_id, activity.end_ps[index])
        main, covered = [], 0.0
        for key in np.argsort(-total, kind="stable"):
            if covered >= MAIN_KERNEL_TIME_SHARE * total.sum() or len(main) >= MAIN_KERNEL_MAX or total[key] <= 0:
                break
            main.append(int(key))
            covered += total[key]
        pairs = [(a, b) for i, a in enumerate(main) for b in main[i + 1 :]]
        if not pairs:
            return None
        interleaved = sum(1 for a, b in pairs if first[a] < last[b] and first[b] < last[a])
        if interleaved >= INTERLEAVED_PAIRS_MIN * len(pairs):
            return None
        found = (
            len(main),
            ", ".join(f"{_short(activity.names[key])} x{count[key]}" for key in main[:3])
            + (", ..." if len(main) > 3 else ""),
        )
    return found


def _short(name):
    return name if len(name) <= 40 else name[:37] + "..."


def input_fetches(model: TraceModel) -> int:
    """Calls to tf.data's iterator (`IteratorGetNext*`): one per training step in TensorFlow loops."""
    return sum(
        count for name, (count, _) in model.host_activity.op_totals.items() if name[:15].lower() == "iteratorgetnext"
    )


def has_kernels(gpu: GpuDevice) -> bool:
    return bool(len(gpu.activity)) and bool((gpu.activity.kind == ActivityKind.KERNEL).any())


def all_warmup(model: TraceModel, steps: tuple, init: Intervals) -> bool:
    """Every step is the run's first (step 0) or has compilation/tracing or first-use setup inside it."""
    compile_spans = model.host_activity.tagged.get("compile", intervals.EMPTY)

    def warm(step: StepMarker) -> bool:
        if step.step_num == 0:
            return True
        return (
            covered_in(compile_spans, step.start_ps, step.end_ps) > 0
            or covered_in(init, step.start_ps, step.end_ps) > 0
        )

    return all(warm(step) for step in steps)
