"""Frozen containers of the trace model: devices with columnar activity, host timelines, step markers.

All times are integer picoseconds relative to the model's origin (the earliest line base of the file).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np


class ActivityKind(IntEnum):
    """What a device event is."""

    KERNEL = 0
    MEMCPY = 1
    MEMSET = 2
    GRAPH = 3  # a CUDA graph launch recorded as one event


class CopyDirection(IntEnum):
    """Direction of a memcpy; NONE for events that are not copies."""

    NONE = -1
    H2D = 0
    D2H = 1
    D2D = 2
    P2P = 3
    OTHER = 4


COPY_DIRECTION_KEYS = {
    CopyDirection.H2D: "h2d",
    CopyDirection.D2H: "d2h",
    CopyDirection.D2D: "d2d",
    CopyDirection.P2P: "p2p",
    CopyDirection.OTHER: "other",
}


@dataclass(frozen=True, eq=False)
class DeviceActivity:
    """Every activity of one GPU, one array element per event, sorted by start.

    `name_id` indexes `names`, `config_id` indexes `configs` (KernelConfig, -1 = none), `op_id` indexes
    `op_names` (-1 = none), `copy_id` indexes `copies` (CopyDetails, -1 = none), `program_id` is the XLA
    program (HLO module) id of the event (-1 = none), `tf_signature_id` indexes `tf_signatures` ((TF op type,
    input `shape` text) of a kernel run by a TensorFlow op outside XLA, -1 = none). Tri-state flags use -1 for
    unknown.
    """

    start_ps: np.ndarray
    duration_ps: np.ndarray
    kind: np.ndarray
    stream_id: np.ndarray
    correlation_id: np.ndarray
    name_id: np.ndarray
    config_id: np.ndarray
    op_id: np.ndarray
    copy_direction: np.ndarray
    copy_id: np.ndarray
    names: tuple
    configs: tuple
    op_names: tuple
    copies: tuple
    program_id: np.ndarray | None = None
    tf_signature_id: np.ndarray | None = None
    tf_signatures: tuple = ()
    work: object = None  # model.work.EventWork where the reader costed the events (PyTorch op shapes), else None

    def __len__(self):
        return len(self.start_ps)

    @property
    def end_ps(self) -> np.ndarray:
        return self.start_ps + self.duration_ps

    def mask(self, kind: ActivityKind) -> np.ndarray:
        return self.kind == int(kind)


@dataclass(frozen=True)
class DeviceCapabilities:
    """What the trace says about a GPU; any field may be None when the trace omits it.

    `vendor` is "NVIDIA", "AMD" (model.vendor) or the trace's own spelling of another; `arch` is `sm_XY` on
    NVIDIA and the gfx name on AMD; `compute_capability` is a CUDA compute capability, so NVIDIA only.
    """

    model_name: str | None = None
    vendor: str | None = None
    sm_count: int | None = None
    clock_mhz: float | None = None
    memory_bandwidth_bytes_per_s: int | None = None
    memory_bytes: int | None = None
    compute_capability: tuple | None = None
    arch: str | None = None


@dataclass(frozen=True)
class StepMarker:
    """One step as marked in the trace: by a host annotation or by a pre-grouped device `Steps` line."""

    name: str
    start_ps: int
    end_ps: int
    source: str  # "host" or "device"
    step_num: int | None = None
    group_id: int | None = None

    @property
    def duration_ps(self) -> int:
        return self.end_ps - self.start_ps


@dataclass(frozen=True)
class GpuDevice:
    """One `/device:GPU:N` plane."""

    ordinal: int
    name: str
    capabilities: DeviceCapabilities
    activity: DeviceActivity
    step_markers: tuple = ()  # from the plane's pre-grouped `Steps` line, if any


@dataclass(frozen=True, eq=False)
class Intervals:
    """Sorted, non-overlapping [start, end) intervals."""

    start_ps: np.ndarray
    end_ps: np.ndarray

    def __len__(self):
        return len(self.start_ps)

    @property
    def total_ps(self) -> int:
        return int((self.end_ps - self.start_ps).sum())


@dataclass(frozen=True, eq=False)
class HostActivity:
    """What the host threads did that the analyses need, not every host event.

    - launches: host events carrying a `correlation_id` (driver API calls: kernel launches, memcpy calls),
      sorted by correlation id;
    - input_waits: the union of `IteratorGetNext*` events;
    - busy: the union of all host events other than step markers;
    - op_totals: per host event name, (count, total duration ps);
    - op_self_ps: Kineto traces: per cpu_op name, its summed self time ps (its wall time less its direct children's
      on its thread), so nested operators add up; empty elsewhere;
    - op_shortest_ps: per host event name, the shortest duration of its events (ps);
    - executor_op_totals: per event name on XLA's CPU executor threads (host.XLA_CPU_EXECUTOR_THREADS: the thunks
      of the computations JAX runs on the CPU, named after their HLO instructions), (count, total duration ps);
    - tagged: per tag of model.host.event_tag ("checkpoint", "summary", "compile", "gc": PyTorch's Python GC events,
      "gc_callback": JAX's gc callback at the start and end of each collection), the union of those events;
      "device_wait": calls that block their thread on the device (model.host_waits: synchronize calls, blocking
      copies, JAX's and TensorFlow's waits for a result); "allocator": the device allocator's calls (cudaMalloc,
      cudaFree, hipFree...); "host_staging": PJRT's host part of a transfer from a host buffer (`H2D Dispatch`:
      JAX staging a NumPy batch for the device); "launch_work": XLA's command-buffer update and execution around a graph
      launch (the launch path's host work); Kineto traces add "sync" (the host blocked on the
      device: cuda_sync events and *Synchronize calls), "queue_full" (CUPTI's `Command Buffer Full` overhead
      records: a launch call blocked on a full launch queue), "copy_op" (aten::copy_, the op a host-device copy runs
      in) and "zero_grad_fill" (tensors zeroed inside optimizer.zero_grad, i.e. set_to_none=False) and "init" (runtime
      setup calls of 1 ms or more: context and stream creation, module loading, first allocations);
    - thread_busy: per thread kind (name without its `/<id>`), (thread count, summed busy ps of its threads);
    - thread_waits: ThreadWaits of each thread with Python-tracer waits or wakes (model.waits), in thread order;
    - batch_stages: per tf.data iterator event that records its dataset's `batch_size` (`Iterator::Root::...::
      BatchV2`), ((batch size, events), ...);
    - loss_calls: Kineto traces' PyTorch loss operators (kineto.collect.LOSS_OPS) by start, ((name, start_ps,
      end_ps, `Input Dims` as tuples or None when not recorded), ...);
    - step_thread_busy: Kineto traces: the union of the host events on the threads that hold the step markers
      (the training loop's own work, without backend threads such as gloo's), None elsewhere.
    """

    launch_correlation_id: np.ndarray
    launch_start_ps: np.ndarray
    launch_duration_ps: np.ndarray
    launch_device_id: np.ndarray
    input_waits: Intervals
    busy: Intervals
    launch_busy: Intervals
    op_totals: dict = field(default_factory=dict)
    op_self_ps: dict = field(default_factory=dict)
    op_shortest_ps: dict = field(default_factory=dict)
    executor_op_totals: dict = field(default_factory=dict)
    thread_count: int = 0
    tagged: dict = field(default_factory=dict)
    thread_busy: dict = field(default_factory=dict)
    thread_waits: tuple = ()
    batch_stages: dict = field(default_factory=dict)
    loss_calls: tuple = ()
    step_thread_busy: Intervals | None = None
    py_function_calls: tuple = ()  # XPlane: (starts, ends) ps of each Python-function call on tf.data's threads
    map_ops_in_flight: float | None = None  # XPlane: TF ops on tf.data's threads running at once while any runs


@dataclass(frozen=True)
class ThreadWaits:
    """One host thread's blocking waits (Python-tracer calls on queues, locks, conditions, futures; model.waits)
    and its calls that wake another thread's wait (a queue put, notify, a lock release).

    `thread` is the thread's name (XPlane line name; `thread <id>` when unnamed or in Kineto); `feeds_device` says
    the thread dispatched device work (launches, JAX's PjitFunction) or marked steps; `waits` maps each wait kind
    seen (model.waits.WAIT_KINDS order) to the union of its calls; `busy` is the union of the thread's events.
    """

    thread: str
    feeds_device: bool
    waits: dict
    wakes: Intervals
    busy: Intervals


@dataclass(frozen=True)
class CollectiveCall:
    """One collective: an NCCL kernel on a GPU (source "kernel") or the host op that issued it ("host").

    Sizes and dtype are None when the trace does not record them (Kineto before PyTorch 2.1, XPlane kernels
    without an HLO instruction or TensorFlow op shapes); `size_source` says where XPlane sizes come from ("hlo":
    the instruction's shapes, "tf_op": the op's input shapes), None for Kineto's own args.
    """

    source: str
    device: int  # GPU ordinal; -1 for host ops
    collective: str  # e.g. "allreduce", "allgather", "sendrecv"
    start_ps: int
    duration_ps: int
    in_bytes: int | None = None
    out_bytes: int | None = None
    dtype: str | None = None
    group_size: int | None = None
    size_source: str | None = None
    named_from: str | None = None  # where `collective` comes from: "host_op", "hlo", "tf_op", "kernel_name"
    issued_by: str | None = None  # the host op (or HLO/TF op type) that names it, e.g. "nccl:all_reduce"
    # Where `group_size` comes from: "profiler" (the call's own args), "process_groups" or "world_size" (the
    # Kineto trace's distributedInfo, kineto.process_groups), "hlo"; None when unknown.
    group_size_source: str | None = None


@dataclass(frozen=True)
class TraceModel:
    """One host's profile: the GPUs, the host activity and the steps."""

    path: str
    host: str
    gpus: tuple
    host_activity: HostActivity
    host_step_markers: tuple
    profile_span_ps: tuple  # (start, end) over all decoded events, or (0, 0)
    trace_errors: tuple = ()
    trace_warnings: tuple = ()
    environment: dict = field(default_factory=dict)  # e.g. cuda_version, jax_version from /host:metadata
    format: str = "current"  # "current" (ungrouped CUPTI), "pre-grouped" (old TF with group_id/Steps), "kineto"
    has_host_plane: bool = False
    tpu_count: int = 0  # `/device:TPU:N` planes: a TPU profile, which XProf's TPU tools analyze
    hlo_protos: dict = field(default_factory=dict)  # XLA program id -> serialized HloProto (/host:metadata)
    collectives: tuple = ()  # CollectiveCall, by start; filled by the Kineto reader (XPlane's: analysis)
    gpu_metric_ranges: int = 0  # Kineto `cuda_profiler_range` events: a CUPTI range-profiler capture on a GPU
    allocators: tuple = ()  # model.allocators.AllocatorStats from TensorFlow's memory profile events, by name
    profiler_options: tuple = ()  # Kineto: recording options on ("record_shapes", "with_stack", "profile_memory",
    #   "with_flops"; kineto.capture_options)
    profiled_ops: int = 0  # Kineto: operator (cpu_op) events recorded
    # The absolute time (ps, on the trace's own clock) of the model's time 0, where the reader knows it (Kineto):
    # what puts several ranks' traces on one timeline.
    time_origin_ps: int | None = None
    machine: str | None = None  # the machine the trace names (Kineto's host_name), beside `host` (the file's worker)
