"""Why each GPU idles, gap by gap: the work that ends a gap, the host call that enqueued it, and what the host
did while the GPU waited.

A gap is an interval in which nothing runs on the GPU (no stream busy). The work that starts at its end is
paired with its host call by correlation id. Each instant of the gap gets one cause:

- `device_wait`: the call had returned before the gap began, so the work was queued and the GPU waited on
  something on the device side (another stream or GPU, an event, a peer in a collective, its own start latency);
- `launch`: the call that enqueued a kernel was still running, or started during the gap: from the call's start
  to the kernel's start the GPU waited for the launch (the call and its latency); before the call, the launch
  path's own host work (XLA updating and executing a command buffer around its graph launch) too;
- `copy_call`: the same for a copy or memset call (a transfer, never a launch); before the call, the host staging
  the copy's data (PJRT's host part of a host-to-device transfer): the host doing the copy;
- `host_wait`: before that call started, the host was blocked on the device (analysis.host_wait_spans: a
  synchronize, a blocking copy, a launch blocked on a full queue, a JAX or TensorFlow wait), only while the wait
  runs: what the host did after it returned is that work's cause (a wait is never evidence that the host is slow,
  nor that what follows it is a wait);
- `host_stall`: the step thread stalled inside an operator call, its wall time untraced and far above its usual
  (readers.kineto.op_stalls): a wait on something the trace does not name (a lock, the GIL, another thread), not
  host work;
- `gil_wait`: the step thread waited for Python's GIL that tf.data's Python-function calls hold
  (analysis.py_function_calls.gil_waits): a wait on other threads' Python, not the step thread's own work;
- `input`: the host waited for its input pipeline (tf.data, the DataLoader, the step thread's loaders);
- `input_prep`: the step thread prepared its batch itself (analysis.batch_prep: reading, decoding, augmenting on
  the thread that feeds the device, from the step's start to its first dispatch): input work, not a wait; where
  other traced host work runs then, it is that work's (`host`) unless known preparation calls fill the gaps, and
  untraced time counts only in a step that then copies host data to the device (the batch it built);
- `host`: the host ran other traced work (framework ops, Python);
- `host_untraced`: no host event was recorded then (work the profiler does not trace, or an idle host);
- `unattributed`: the work has no host call in the trace (no host plane, device-side launches), or no work
  follows the gap, and no host event runs then either; where host events do run, the gap goes by what the host
  did at each instant as the host's part cannot be told from the call.

Where host events overlap (threads), an instant takes the first cause in that order: a wait or a stall, then the
launch path, the copy's staging, input, other host work, and the untraced start of a step that sends host
data to the device, before its first dispatch (input_prep: the batch it sends being built).

Only the first three causes exist when the host queued the work in time; `launch` is time the GPU waited for a
launch call itself, never a call blocked on a full queue before the gap (the GPU was busy then).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.analysis.host_wait_spans import host_wait_spans
from tb_gpu_advisor.analysis.kernel_names import is_nccl
from tb_gpu_advisor.analysis.launch import pair_launches
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.host import HOST_STAGING_TAG, LAUNCH_WORK_TAG, OP_STALL_PREFIX
from tb_gpu_advisor.model.trace import ActivityKind

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.model.trace import Intervals
    from tb_gpu_advisor.model.trace import TraceModel


IDLE_CAUSES = (
    "device_wait",
    "launch",
    "copy_call",
    "host_wait",
    "host_stall",
    "gil_wait",
    "input",
    "input_prep",
    "host",
    "host_untraced",
    "unattributed",
)
# Causes of time the host, not the device, held the GPU back.
HOST_CAUSES = (
    "launch",
    "copy_call",
    "host_wait",
    "host_stall",
    "gil_wait",
    "input",
    "input_prep",
    "host",
    "host_untraced",
)
_FAR_PS = 2**60
# A wait that ended this long before the GPU went idle still held the host: clocks of host and device agree to
# about a microsecond in CUPTI traces.
WAIT_SLACK_PS = 5_000_000


# What the queued work that ended a device-wait gap was: what the GPU waited to run.
DEVICE_WAIT_WORK = ("collective", "copy", "compute")


@dataclass(frozen=True)
class GpuIdle:
    """One GPU's idle instants by cause (IDLE_CAUSES -> Intervals), how many gaps they come from, and the
    `device_wait` instants by the work that ended them (DEVICE_WAIT_WORK -> Intervals: an NCCL/RCCL kernel, whose
    stream waited for its peers' or its inputs' events; a copy or memset; another kernel)."""

    ordinal: int
    name: str
    spans: dict
    gap_count: int
    device_wait_work: dict | None = None
    # Intervals: the host-late idle right after a wait that ran when the GPU went idle, as long as that wait had
    # run before (what a host that had not waited could have done ahead), whatever each instant's cause: the
    # serialization a read each step imposes, which a compiled step keeps (host.eager_execution's model).
    after_wait: object = intervals.EMPTY

    def cause_ps(self, starts: list[int] | np.ndarray, ends: list[int] | np.ndarray) -> dict[str, np.ndarray]:
        """{cause: np.ndarray of ps per window [starts[i], ends[i])}."""
        return {cause: intervals.covered_ps(self.spans[cause], starts, ends) for cause in IDLE_CAUSES}


@dataclass(frozen=True)
class IdleAttribution:
    """GpuIdle per GPU that ran a kernel or graph, in model.gpus order."""

    gpus: tuple

    def by_ordinal(self, ordinal):
        return next((gpu for gpu in self.gpus if gpu.ordinal == ordinal), None)


def attribute_idle(
    model: TraceModel,
    input_waits: Intervals = intervals.EMPTY,
    waits: Intervals | None = None,
    input_prep: Intervals = intervals.EMPTY,
    prep_gaps: Intervals = intervals.EMPTY,
    gil_waits: Intervals = intervals.EMPTY,
) -> IdleAttribution:
    """IdleAttribution of every GPU that ran a kernel or graph. `input_waits`: extra input-wait intervals (the step thread
    blocked on its loaders) beside the trace's own input waits; `waits`: the host's waits on the device
    (analysis.host_wait_spans; without queue-full launches when not given); `input_prep`: the step thread
    building its batch on evidence (analysis.batch_prep's input spans); `prep_gaps`: batch_prep's gaps of the steps
    that send host data to the device, whose time no host event explains (the step thread untraced before its
    first dispatch, building the batch it sends) is input_prep too; `gil_waits`: the step thread waiting for the
    GIL (analysis.py_function_calls.gil_waits)."""
    host = model.host_activity
    waits = host_wait_spans(model) if waits is None else waits
    sources = _host_sources(
        host, waits, intervals.union_all(host.input_waits, input_waits), input_prep, prep_gaps, gil_waits
    )
    inputs = intervals.union_all(host.input_waits, input_waits, input_prep, prep_gaps)
    found = []
    for gpu in model.gpus:
        # A GPU that ran no kernel (a few copies at most) did no work to be late for: the host's launches and
        # input were for the others.
        if np.isin(gpu.activity.kind, (ActivityKind.KERNEL, ActivityKind.GRAPH)).any():
            found.append(_gpu_idle(gpu, host, sources, waits, inputs))
    return IdleAttribution(gpus=tuple(found))


def _gpu_idle(gpu, host, sources, waits, inputs):
    activity = gpu.activity
    busy = intervals.union(activity.start_ps, activity.end_ps)
    # Before the first work and after the last the GPU idles too, as far as any window reaches.
    gap_start = np.concatenate([[-_FAR_PS], busy.end_ps])
    gap_end = np.concatenate([busy.start_ps, [_FAR_PS]])
    keep = gap_end > gap_start
    ending = np.concatenate([np.arange(len(busy)), [-1]])[keep]  # busy block that ends each gap; -1: none
    gap_start, gap_end = gap_start[keep], gap_end[keep]
    spans = {cause: ([], []) for cause in IDLE_CAUSES}

    def add(cause: str, starts: np.ndarray, ends: np.ndarray) -> None:
        spans[cause][0].append(starts)
        spans[cause][1].append(ends)

    work = np.full(len(ending), -1, dtype=np.int64)
    has_work = ending >= 0
    work[has_work] = np.searchsorted(activity.start_ps, busy.start_ps[ending[has_work]], side="left")
    launch = np.full(len(ending), -1, dtype=np.int64)
    launch[has_work] = pair_launches(host, activity)[work[has_work]]
    paired = launch >= 0
    # Without the host call, what the host did at each instant is all there is to tell.
    _host_reasons(gap_start[~paired], gap_end[~paired], sources, add, rest="unattributed")
    call_start = np.zeros(len(launch), dtype=np.int64)
    call_start[paired] = host.launch_start_ps[launch[paired]]
    call_end = call_start.copy()
    call_end[paired] += host.launch_duration_ps[launch[paired]]
    queued = paired & (call_end <= gap_start)
    add("device_wait", gap_start[queued], gap_end[queued])
    waited = _work_kinds(activity, work[queued])
    late = paired & ~queued
    issue = np.clip(call_start, gap_start, gap_end)  # the call's start inside the gap
    kernel = np.zeros(len(launch), dtype=bool)
    kernel[has_work] = np.isin(activity.kind[work[has_work]], (ActivityKind.KERNEL, ActivityKind.GRAPH))
    add("launch", issue[late & kernel], gap_end[late & kernel])
    add("copy_call", issue[late & ~kernel], gap_end[late & ~kernel])
    behind = late & (issue > gap_start)
    _host_reasons(gap_start[behind], issue[behind], sources, add)
    result = {
        cause: intervals.union(np.concatenate(s) if s else [], np.concatenate(e) if e else [])
        for cause, (s, e) in spans.items()
    }
    work_spans = {
        kind: intervals.union(gap_start[queued][mask], gap_end[queued][mask]) for kind, mask in waited.items()
    }
    return GpuIdle(
        ordinal=gpu.ordinal,
        name=gpu.name,
        spans=result,
        gap_count=int(len(gap_start)),
        device_wait_work=work_spans,
        after_wait=_after_wait(gap_start[behind], issue[behind], waits, inputs),
    )


def _after_wait(start, end, waits, inputs):
    """GpuIdle.after_wait of the host-late intervals [start, end): from each start, as long as the wait running
    then (ending at or after it, less the clocks' slack) had run before it; the host's input time left out (the
    pipeline held it, not the wait)."""
    if not len(start) or not len(waits):
        return intervals.EMPTY
    index = np.searchsorted(waits.end_ps, start - WAIT_SLACK_PS, side="left")
    valid = index < len(waits)
    index = np.minimum(index, len(waits) - 1)
    began = waits.start_ps[index]
    valid &= began < start
    held = np.where(valid, np.minimum(end - start, start - began), 0)
    return intervals.subtract(intervals.union(start[held > 0], start[held > 0] + held[held > 0]), inputs)


def _work_kinds(activity, index):
    """{DEVICE_WAIT_WORK kind: mask over `index`} of the device events `index` points to."""
    kind = activity.kind[index]
    nccl = np.array([is_nccl(name) for name in activity.names] + [False], dtype=bool)[activity.name_id[index]]
    copy = np.isin(kind, (ActivityKind.MEMCPY, ActivityKind.MEMSET))
    return {"collective": nccl & ~copy, "copy": copy, "compute": ~nccl & ~copy}


def _host_sources(host, waits, input_waits, input_prep, prep_gaps, gil_waits=intervals.EMPTY):
    """((cause, Intervals), ...) of what the host did, in the order an instant takes them (module docstring)."""
    stalls = intervals.union_all(*(spans for tag, spans in host.tagged.items() if tag.startswith(OP_STALL_PREFIX)))
    return (
        ("host_wait", waits),
        ("host_stall", stalls),
        ("gil_wait", gil_waits),
        ("launch", intervals.union_all(host.launch_busy, host.tagged.get(LAUNCH_WORK_TAG, intervals.EMPTY))),
        ("copy_call", host.tagged.get(HOST_STAGING_TAG, intervals.EMPTY)),
        ("input", input_waits),
        ("input_prep", input_prep),
        ("host", host.busy),
        ("input_prep", prep_gaps),
    )


def _host_reasons(start, end, sources, add, rest="host_untraced"):
    """Splits the host-late intervals [start, end) by what the host did at each instant (`sources`, in order);
    `rest`: the cause of time without host events."""
    if not len(start):
        return
    left = intervals.union(start, end)
    for cause, source in sources:
        part = intervals.intersect(left, source)
        add(cause, part.start_ps, part.end_ps)
        left = intervals.subtract(left, part)
    add(rest, left.start_ps, left.end_ps)
