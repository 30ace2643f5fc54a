"""Splits step time into exclusive categories: what the GPUs computed, copied or waited for at each instant.

Each instant of a step counts once, so the categories add up to the step time. Device categories come first
(DEVICE_CATEGORIES, in order), over all GPUs: an instant counts as compute if any GPU computes, so transfers and
collectives count only where they are exposed (no compute overlaps them). A CPU backend's collectives
(`gloo:all_reduce` on its worker thread) are collectives where the step's threads do no work, never host compute.

Where every GPU idles, the instant takes its cause in the idle attribution (analysis.idle_attribution, one
cause per instant across GPUs by analysis.all_idle), through CAUSE_CATEGORY: `device_wait` (work queued, the GPU
waiting on the device side), `launch` and `copy_call` (the GPU waiting for the call that enqueues its next
kernel, or copy), `host_wait` (the host blocked on the device held it), `host_stall` (the step thread stalled
inside an op call: a wait on something the trace does not name), `gil_wait` (the step thread waiting for the
GIL tf.data's Python-function calls hold), `input_wait` (cause `input`),
`input_prep`, `host`, and `idle` (causes `host_untraced` and `unattributed`: no host event says why). So the
Time line, the Idle line and the findings read one attribution. Where no GPU ran a kernel there is no
attribution, and the host categories say what the host did at each instant, in HOST_CATEGORIES order:

Input is what the step waits for or builds its batch with while the device idles: `input_wait` is a tf.data or
DataLoader wait, or the step thread blocked on its loader threads (analysis.feeder_waits); `input_prep` is the
step thread preparing its batch (analysis.batch_prep) where the trace shows it.

Host time is work or wait: `host_wait` is a host thread blocked on the device (analysis.host_wait_spans:
synchronize calls, blocking copies, launches blocked on a full queue, JAX, PjRt and TensorFlow waits), `gil_wait`
the step thread waiting for the GIL that tf.data's Python-function calls hold (analysis.py_function_calls.gil_waits),
`launch`
the launch calls that are not waits, `host` the host's other traced work. A wait says what was waited on, never
that the host is slow: rules that read the host's share read `host` and `launch`, never `host_wait` or `gil_wait`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.analysis.all_idle import all_idle_causes
from tb_gpu_advisor.analysis.host_wait_spans import host_wait_spans
from tb_gpu_advisor.analysis.idle_attribution import IDLE_CAUSES, attribute_idle
from tb_gpu_advisor.analysis.kernel_names import is_nccl, is_runtime_copy, kernel_precision
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.collective_names import runs_on_a_backend_thread
from tb_gpu_advisor.model.host import XLA_CPU_TAG
from tb_gpu_advisor.model.trace import ActivityKind, CopyDirection

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.analysis.idle_attribution import IdleAttribution
    from tb_gpu_advisor.model.trace import DeviceActivity
    from tb_gpu_advisor.model.trace import Intervals
    from tb_gpu_advisor.model.trace import TraceModel


BREAKDOWN_CATEGORIES = (
    "compute_16bit",
    "compute_32bit",
    "compute_unknown",
    "collectives",
    "d2h",
    "d2d",
    "h2d",
    "device_wait",
    "input_wait",
    "input_prep",
    "copy_call",
    "launch",
    "host_wait",
    "host_stall",
    "gil_wait",
    "host",
    "idle",
)
COMPUTE_CATEGORIES = ("compute_16bit", "compute_32bit", "compute_unknown")
# Categories of what the devices did: each instant counts for the first of these active then.
DEVICE_CATEGORIES = BREAKDOWN_CATEGORIES[: BREAKDOWN_CATEGORIES.index("h2d") + 1]
# Categories of instants every GPU idles, in the order the host's activity fills them where no cause is known.
HOST_CATEGORIES = BREAKDOWN_CATEGORIES[BREAKDOWN_CATEGORIES.index("h2d") + 1 : -1]
# The breakdown category of each idle cause (analysis.idle_attribution.IDLE_CAUSES).
CAUSE_CATEGORY = {
    "device_wait": "device_wait",
    "launch": "launch",
    "copy_call": "copy_call",
    "host_wait": "host_wait",
    "host_stall": "host_stall",
    "gil_wait": "gil_wait",
    "input": "input_wait",
    "input_prep": "input_prep",
    "host": "host",
    "host_untraced": "idle",
    "unattributed": "idle",
}


@dataclass(frozen=True)
class Breakdown:
    """Exclusive time per category (ps) for each window, in BREAKDOWN_CATEGORIES order."""

    window_ps: np.ndarray  # one per window
    category_ps: dict  # category -> np.ndarray, one per window
    gpu_busy_ps: np.ndarray  # one per window: time at least one GPU is busy
    loader_wait_ps: np.ndarray | None = None  # one per window: the part of input_wait spent blocked on loader threads

    @property
    def pipeline_wait_ps(self) -> np.ndarray:
        """Per window, input_wait without the loader-thread waits: tf.data's IteratorGetNext or the DataLoader."""
        loader = self.loader_wait_ps if self.loader_wait_ps is not None else 0
        return self.category_ps["input_wait"] - loader


def compute_mask(activity: DeviceActivity) -> np.ndarray:
    """Boolean mask over a GPU's activity: compute, i.e. kernels and CUDA graphs other than NCCL collectives."""
    nccl = np.array([is_nccl(n) for n in activity.names] + [False], dtype=bool)[activity.name_id]
    return np.isin(activity.kind, (ActivityKind.KERNEL, ActivityKind.GRAPH)) & ~nccl


def compute_busy(model: TraceModel) -> Intervals:
    """Intervals when any GPU computes (compute_mask)."""
    parts = [
        intervals.union(gpu.activity.start_ps[mask], gpu.activity.end_ps[mask])
        for gpu in model.gpus
        for mask in [compute_mask(gpu.activity)]
    ]
    return intervals.union_all(*parts)


def computing_gpus(model: TraceModel, window: Intervals) -> tuple[str, ...]:
    """Names of the GPUs that compute (compute_mask) inside `window`: whose compute the breakdown's `compute`
    counts. A GPU whose kernels all lie outside the window (another step of a partial capture) is not one."""
    found = []
    for gpu in model.gpus:
        mask = compute_mask(gpu.activity)
        spans = intervals.union(gpu.activity.start_ps[mask], gpu.activity.end_ps[mask])
        if intervals.covered_ps(spans, window.start_ps, window.end_ps).sum() > 0:
            found.append(gpu.name)
    return tuple(found)


def backend_collectives(model: TraceModel) -> Intervals:
    """Intervals a CPU backend's worker thread ran a collective (`gloo:all_reduce`: the communication and its wait
    for the peers) while the step's own threads did no work: the collective time they did not hide."""
    calls = [call for call in model.collectives if runs_on_a_backend_thread(call)]
    if not calls:
        return intervals.EMPTY
    starts = np.array([call.start_ps for call in calls], dtype=np.int64)
    spans = intervals.union(starts, starts + np.array([call.duration_ps for call in calls], dtype=np.int64))
    step_work = model.host_activity.step_thread_busy
    return spans if step_work is None else intervals.subtract(spans, step_work)


def _category_intervals(model, dtype_by_name, waits, gil_waits=intervals.EMPTY):
    """{category: Intervals} of the raw activity behind each category (host ones not yet exclusive)."""
    spans = {name: ([], []) for name in DEVICE_CATEGORIES}
    for gpu in model.gpus:
        activity = gpu.activity
        if not len(activity):
            continue
        precision = [kernel_precision(n, dtype_by_name.get(n)) for n in activity.names]
        low = np.array([p == "16bit" for p in precision], dtype=bool)[activity.name_id]
        high = np.array([p == "32bit" for p in precision], dtype=bool)[activity.name_id]
        nccl = np.array([is_nccl(n) for n in activity.names], dtype=bool)[activity.name_id]
        runtime_copy = (activity.kind == ActivityKind.KERNEL) & np.array(
            [is_runtime_copy(n) for n in activity.names], dtype=bool
        )[activity.name_id]
        compute = compute_mask(activity) & ~runtime_copy
        direction = activity.copy_direction
        masks = {
            "compute_16bit": compute & low,
            "compute_32bit": compute & high,
            "compute_unknown": compute & ~low & ~high,
            "collectives": (activity.kind == ActivityKind.KERNEL) & nccl,
            "d2h": direction == CopyDirection.D2H,
            "d2d": (
                (activity.kind == ActivityKind.MEMCPY)
                & np.isin(direction, (CopyDirection.D2D, CopyDirection.P2P, CopyDirection.OTHER))
            )
            | (activity.kind == ActivityKind.MEMSET)
            | runtime_copy,
            "h2d": direction == CopyDirection.H2D,
        }
        for name, mask in masks.items():
            spans[name][0].append(activity.start_ps[mask])
            spans[name][1].append(activity.end_ps[mask])
    result = {
        name: intervals.union(np.concatenate(s) if s else [], np.concatenate(e) if e else [])
        for name, (s, e) in spans.items()
    }
    host = model.host_activity
    result["input_wait"] = host.input_waits
    result["launch"] = intervals.subtract(host.launch_busy, waits)
    # XLA's CPU executor threads run the program a CPU-only JAX step waits for: their time is work, the wait's
    # thread's is not.
    result["host_wait"] = intervals.subtract(waits, host.tagged.get(XLA_CPU_TAG, intervals.EMPTY))
    result["gil_wait"] = gil_waits
    result["host"] = host.busy
    return result


def breakdown(
    model: TraceModel,
    window_start_ps: list[int] | np.ndarray,
    window_end_ps: list[int] | np.ndarray,
    dtype_by_name: dict[str, str] | None = None,
    loader_waits: Intervals = intervals.EMPTY,
    input_prep: Intervals = intervals.EMPTY,
    waits: Intervals | None = None,
    idle: IdleAttribution | None = None,
    gil_waits: Intervals = intervals.EMPTY,
) -> Breakdown:
    """Breakdown of each window [start, end) (category_spans, then split_windows)."""
    spans = category_spans(model, dtype_by_name, loader_waits, input_prep, waits, idle, gil_waits)
    return split_windows(spans, window_start_ps, window_end_ps)


@dataclass(frozen=True)
class CategorySpans:
    """The instants of each category over the whole trace, exclusive (BREAKDOWN_CATEGORIES -> Intervals; `idle`
    left out: what no category covers), the instants a GPU is busy, the loader-thread part of `input_wait`, and
    the idle attribution's one cause of each instant every GPU idles (analysis.all_idle: IDLE_CAUSES ->
    Intervals), which the host-side categories are made of."""

    spans: dict
    device_busy: Intervals
    loader_wait: Intervals
    causes: dict


def category_spans(
    model: TraceModel,
    dtype_by_name: dict[str, str] | None = None,
    loader_waits: Intervals = intervals.EMPTY,
    input_prep: Intervals = intervals.EMPTY,
    waits: Intervals | None = None,
    idle: IdleAttribution | None = None,
    gil_waits: Intervals = intervals.EMPTY,
) -> CategorySpans:
    """Each category's instants (module docstring). `dtype_by_name`: {kernel name: its op's element type} where
    the kernel table costed it, for the precision of kernels whose names say none (kernel_precision).
    `loader_waits`: the step thread blocked on its loader threads (FeederWaits.input_blocked), input wait;
    `input_prep`: its batch preparation (BatchPrep.input_spans); `waits`: the host's waits on the device
    (analysis.host_wait_spans; without queue-full launches when not given); `idle`: the model's idle
    attribution with the same inputs (computed when not given); `gil_waits`: the step thread waiting for the GIL
    (analysis.py_function_calls.gil_waits), a wait, never host compute."""
    waits = host_wait_spans(model) if waits is None else waits
    if idle is None:
        idle = attribute_idle(model, loader_waits, waits, input_prep, gil_waits=gil_waits)
    raw = _category_intervals(model, dtype_by_name or {}, waits, gil_waits)
    device_busy = intervals.union_all(*(raw[name] for name in DEVICE_CATEGORIES))
    raw["collectives"] = intervals.union_all(raw["collectives"], backend_collectives(model))
    raw["input_wait"] = intervals.union_all(raw["input_wait"], loader_waits)
    raw["input_prep"] = input_prep
    spans = {}
    covered = intervals.EMPTY
    for name in DEVICE_CATEGORIES:
        spans[name] = intervals.subtract(raw[name], covered)
        covered = intervals.union_all(covered, raw[name])
    # Where every GPU idles, the idle attribution's cause; where it has none (no GPU ran a kernel), the host's
    # activity, in category order.
    causes = all_idle_causes(idle, device_busy)
    for name in HOST_CATEGORIES:
        spans[name] = intervals.subtract(
            intervals.union_all(*(causes[cause] for cause in IDLE_CAUSES if CAUSE_CATEGORY[cause] == name)), covered
        )
    covered = intervals.union_all(covered, *spans.values())
    for name in HOST_CATEGORIES:
        if name in raw:
            part = intervals.subtract(raw[name], covered)
            spans[name] = intervals.union_all(spans[name], part)
            covered = intervals.union_all(covered, part)
    loader = intervals.intersect(loader_waits, spans["input_wait"]) if len(loader_waits) else intervals.EMPTY
    return CategorySpans(spans=spans, device_busy=device_busy, loader_wait=loader, causes=causes)


def split_windows(
    spans: CategorySpans, window_start_ps: list[int] | np.ndarray, window_end_ps: list[int] | np.ndarray
) -> Breakdown:
    """The Breakdown of each window [start, end) of `spans`; `idle` is the rest of each window."""
    starts = np.asarray(window_start_ps, dtype=np.int64)
    ends = np.asarray(window_end_ps, dtype=np.int64)
    window = ends - starts
    category_ps = {name: intervals.covered_ps(spans.spans[name], starts, ends) for name in BREAKDOWN_CATEGORIES[:-1]}
    category_ps["idle"] = window - sum(category_ps.values())
    return Breakdown(
        window_ps=window,
        category_ps=category_ps,
        gpu_busy_ps=intervals.covered_ps(spans.device_busy, starts, ends),
        loader_wait_ps=intervals.covered_ps(spans.loader_wait, starts, ends),
    )
