"""Why each GPU idles, gap by gap: the work that ends a gap, the host call that enqueued it, and what the host
did while the GPU waited.

A gap is an interval in which nothing runs on the GPU (no stream busy). The work that starts at its end is
paired with its host call by correlation id. Each instant of the gap gets one cause:

- `device_wait`: the call had returned before the gap began, so the work was queued and the GPU waited on
  something on the device side (another stream or GPU, an event, a peer in a collective, its own start latency);
- `launch`: the call that enqueued a kernel was still running, or started during the gap: from the call's start
  to the kernel's start the GPU waited for the launch (the call and its latency);
- `copy_call`: the same for a copy or memset call (a transfer, never a launch);
- `host_wait`: before that call started, the host was blocked on the device (analysis.host_wait_spans: a
  synchronize, a blocking copy, a launch blocked on a full queue, a JAX or TensorFlow wait): a host that waits for the GPU cannot queue work ahead of it. The part of the gap right
  after the GPU went idle, as long as the wait that was running then had lasted (what the host could have
  done ahead), is this cause, except where the host then waited for or built its input (that stays `input` or
  `input_prep`: the pipeline held it); the rest of the gap goes by what the host did at each instant (a wait
  first: a blocking copy or a blocked launch call is a wait, not a launch);
- `input`: the host waited for its input pipeline (tf.data, the DataLoader, the step thread's loaders);
- `input_prep`: the step thread prepared its batch itself (analysis.batch_prep: reading, decoding, augmenting on
  the thread that feeds the device): input work, not a wait;
- `host`: the host ran other traced work (framework ops, Python);
- `host_untraced`: no host event was recorded then (work the profiler does not trace, or an idle host);
- `unattributed`: the work has no host call in the trace (no host plane, device-side launches), or no work
  follows the gap, and no host event runs then either; where host events do run, the gap goes by what the host
  did at each instant (`launch`, `host_wait`, `input`, `input_prep`, `host`) as the host's part cannot be told from the call.

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
    "input",
    "input_prep",
    "host",
    "host_untraced",
    "unattributed",
)
# Causes of time the host, not the device, held the GPU back.
HOST_CAUSES = ("launch", "copy_call", "host_wait", "input", "input_prep", "host", "host_untraced")
# A wait that ended this long before the GPU went idle still held the host: clocks of host and device agree to
# about a microsecond in CUPTI traces.
WAIT_SLACK_PS = 5_000_000
_FAR_PS = 2**60


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
) -> IdleAttribution:
    """IdleAttribution of every GPU that ran a kernel or graph. `input_waits`: extra input-wait intervals (the step thread
    blocked on its loaders) beside the trace's own input waits; `waits`: the host's waits on the device
    (analysis.host_wait_spans; without queue-full launches when not given); `input_prep`: the step thread
    building its batch (analysis.batch_prep)."""
    host = model.host_activity
    waits = host_wait_spans(model) if waits is None else waits
    inputs = (intervals.union_all(host.input_waits, input_waits), input_prep)
    found = []
    for gpu in model.gpus:
        # A GPU that ran no kernel (a few copies at most) did no work to be late for: the host's launches and
        # input were for the others.
        if np.isin(gpu.activity.kind, (ActivityKind.KERNEL, ActivityKind.GRAPH)).any():
            found.append(_gpu_idle(gpu, host, waits, inputs))
    return IdleAttribution(gpus=tuple(found))


def _gpu_idle(gpu, host, waits, inputs):
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
    _host_reasons(gap_start[~paired], gap_end[~paired], host, waits, inputs, add, serial=False, rest="unattributed")
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
    _host_reasons(gap_start[behind], issue[behind], host, waits, inputs, add)
    result = {
        cause: intervals.union(np.concatenate(s) if s else [], np.concatenate(e) if e else [])
        for cause, (s, e) in spans.items()
    }
    work_spans = {
        kind: intervals.union(gap_start[queued][mask], gap_end[queued][mask]) for kind, mask in waited.items()
    }
    return GpuIdle(
        ordinal=gpu.ordinal, name=gpu.name, spans=result, gap_count=int(len(gap_start)), device_wait_work=work_spans
    )


def _work_kinds(activity, index):
    """{DEVICE_WAIT_WORK kind: mask over `index`} of the device events `index` points to."""
    kind = activity.kind[index]
    nccl = np.array([is_nccl(name) for name in activity.names] + [False], dtype=bool)[activity.name_id[index]]
    copy = np.isin(kind, (ActivityKind.MEMCPY, ActivityKind.MEMSET))
    return {"collective": nccl & ~copy, "copy": copy, "compute": ~nccl & ~copy}


def _host_reasons(start, end, host, waits, inputs, add, serial=True, rest="host_untraced"):
    """Splits the host-late intervals [start, end) by cause (module docstring); `inputs`: (input waits, batch
    preparation); `serial`: the wait running when the GPU went idle holds the host (False where the work's host
    call is unknown); `rest`: the cause of time without host events."""
    if not len(start):
        return
    # The wait that was running when the GPU went idle (ends at or after it, less the clocks' slack).
    index = np.searchsorted(waits.end_ps, start - WAIT_SLACK_PS, side="left")
    held = np.zeros(len(start), dtype=np.int64)
    if len(waits) and serial:
        valid = index < len(waits.start_ps)
        index = np.minimum(index, max(len(waits.start_ps) - 1, 0))
        began = waits.start_ps[index]
        valid &= began < start
        held[valid] = np.minimum(end[valid] - start[valid], start[valid] - began[valid])
    # The host's input (a wait on its pipeline, or building its batch) stays input: the pipeline is what held it.
    holding = intervals.subtract(
        intervals.union(start[held > 0], start[held > 0] + held[held > 0]), intervals.union_all(*inputs)
    )
    add("host_wait", holding.start_ps, holding.end_ps)
    left = intervals.subtract(intervals.union(start, end), holding)
    sources = (
        ("host_wait", waits),
        ("launch", host.launch_busy),
        ("input", inputs[0]),
        ("input_prep", inputs[1]),
        ("host", host.busy),
    )
    for cause, source in sources:
        part = intervals.intersect(left, source)
        add(cause, part.start_ps, part.end_ps)
        left = intervals.subtract(left, part)
    add(rest, left.start_ps, left.end_ps)
