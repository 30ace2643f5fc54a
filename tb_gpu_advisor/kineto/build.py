"""Kineto trace -> TraceModel: device activity per GPU and stream, host launches, steps, waits and syncs.

Times become integer picoseconds from the earliest event, computed exactly from the file's decimal
microseconds (`decimal.Decimal`, never float), so sub-microsecond events keep their order and length.
"""

import re
from array import array
from decimal import Decimal, InvalidOperation

import numpy as np

from tb_gpu_advisor.constants import DEFAULT_MAX_FILE_BYTES
from tb_gpu_advisor.kineto.collectives import CollectiveCollector
from tb_gpu_advisor.kineto.devices import capabilities, device_events_name
from tb_gpu_advisor.kineto.files import worker_and_span
from tb_gpu_advisor.kineto.ops import launch_ops
from tb_gpu_advisor.kineto.python_calls import python_call_name
from tb_gpu_advisor.kineto.stream import stream_trace
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.allocators import AllocatorStats
from tb_gpu_advisor.model.details import CopyDetails, KernelConfig
from tb_gpu_advisor.model.device import classify_event_name
from tb_gpu_advisor.model.host import ALLOCATOR_TAG, DEVICE_WAIT_TAG, event_tag, outermost_markers
from tb_gpu_advisor.model.host_waits import is_allocator_call, is_device_wait
from tb_gpu_advisor.model.waits import call_role, thread_label, thread_waits
from tb_gpu_advisor.model.trace import (ActivityKind, CopyDirection, DeviceActivity, GpuDevice, HostActivity,
                                        StepMarker, TraceModel)

FORMAT = "kineto"
_PS_PER_US = 1_000_000
# Old Kineto spelled the categories differently (PyTorch 1.8-1.9).
_CATEGORY_ALIASES = {"Kernel": "kernel", "Memcpy": "gpu_memcpy", "Memset": "gpu_memset", "Runtime": "cuda_runtime",
                     "Operator": "cpu_op", "Driver": "cuda_driver"}
_DEVICE_CATEGORIES = {"kernel": ActivityKind.KERNEL, "gpu_memcpy": ActivityKind.MEMCPY,
                      "gpu_memset": ActivityKind.MEMSET}
_LAUNCH_CATEGORIES = {"cuda_runtime", "cuda_driver"}
# Categories on the device tracks that are not device work.
_DEVICE_SIDE = {"gpu_user_annotation", "cuda_sync", "ac2g", "Trace", "cuda_profiler_range"}
# PyTorch's profile_memory events: one per (de)allocation, with the allocator's total after it; c10's device type
# 1 is CUDA (ROCm builds report HIP as CUDA too).
_MEMORY_EVENT = "[memory]"
_CUDA_DEVICE_TYPE = 1
_STEP = re.compile(r"^ProfilerStep#(\d+)$")
_INPUT_WAIT_PREFIX = "enumerate(DataLoader)"
_ZERO_GRAD_PREFIX = "Optimizer.zero_grad"
_FILL_OPS = {"aten::zero_", "aten::fill_"}
# PyTorch's loss operators, whose input and target `Input Dims` hold the rows a step scores
# (analysis.examples_per_step); a composite loss (cross entropy) encloses the ones it calls.
LOSS_OPS = frozenset({
    "aten::cross_entropy_loss", "aten::nll_loss", "aten::nll_loss_nd", "aten::nll_loss2d", "aten::mse_loss",
    "aten::l1_loss", "aten::smooth_l1_loss", "aten::huber_loss", "aten::binary_cross_entropy",
    "aten::binary_cross_entropy_with_logits", "aten::kl_div", "aten::soft_margin_loss",
    "aten::multilabel_margin_loss", "aten::multi_margin_loss", "aten::hinge_embedding_loss",
    "aten::poisson_nll_loss", "aten::cosine_embedding_loss", "aten::margin_ranking_loss"})
# Host calls that block until the device is done (the runtime API and HIP spellings).
_SYNC_CALLS = re.compile(r"^(cuda|hip)(Device|Stream|Event|Ctx)Synchroni[sz]e$|"
                         r"^(cuda|hip)Memcpy$")
# One-time setup calls (context, streams, module loading, first allocations); a long one marks warm-up.
_INIT_CALLS = re.compile(r"^(cu|cuda|hip)(Free|Malloc\w*|HostAlloc|HostRegister|StreamCreate\w*|"
                         r"DeviceGetStreamPriorityRange|ModuleLoad\w*|LibraryLoad\w*|CtxCreate\w*|"
                         r"DevicePrimaryCtxRetain|SetDevice|GetDeviceProperties\w*|FuncGetAttributes|"
                         r"EventCreate\w*)$")
_INIT_MIN_PS = 1_000_000_000  # 1 ms: these calls take microseconds once the process is warm
_COPY_KINDS = {"pageable": "pageable", "pinned": "pinned", "device": "device", "array": "array",
               "managed": "managed"}


class _Device:
    """Growing columns of one GPU's events."""

    def __init__(self):
        self.start, self.duration = array("q"), array("q")
        self.kind, self.stream, self.correlation = array("b"), array("q"), array("q")
        self.name_id, self.config_id, self.copy_id, self.direction = (array("i"), array("i"), array("i"),
                                                                      array("b"))
        self.names, self.configs, self.copies = {}, {}, {}


def _intern(table, value):
    found = table.get(value)
    if found is None:
        found = table[value] = len(table)
    return found


def _int(value, default=-1):
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _dim3(value):
    if isinstance(value, list) and len(value) == 3 and all(_int(v) >= 0 for v in value):
        return tuple(value)
    return (1, 1, 1)


def kernel_config(args):
    """KernelConfig from a kernel's args. Kineto records one shared-memory total (static + dynamic), kept as
    static; its `est. achieved occupancy %` is an estimate of achieved occupancy, not CUPTI's theoretical
    occupancy, so occupancy stays None and the analyses compute the theoretical figure themselves."""
    return KernelConfig(registers_per_thread=max(0, _int(args.get("registers per thread"), 0)),
                        static_shared_bytes=max(0, _int(args.get("shared memory"), 0)), dynamic_shared_bytes=0,
                        grid=_dim3(args.get("grid")), block=_dim3(args.get("block")), occupancy_pct=None)


def copy_details(name, args):
    """CopyDetails from `Memcpy HtoD (Pageable -> Device)` and the `bytes` arg; kinds None when not named."""
    src = dst = None
    inside = name[name.find("(") + 1: name.rfind(")")] if "(" in name else ""
    if "->" in inside:
        left, _, right = inside.partition("->")
        src, dst = _COPY_KINDS.get(left.strip().lower()), _COPY_KINDS.get(right.strip().lower())
    return CopyDetails(size_bytes=max(0, _int(args.get("bytes"), 0)), src_kind=src, dst_kind=dst, is_async=None)


class _Collector:
    """Takes the events as they stream by and keeps only what the model needs, in compact columns."""

    def __init__(self):
        self.origin_us = None
        self.devices = {}
        self.launch_corr, self.launch_start, self.launch_dur, self.launch_tid = (array("q"), array("q"),
                                                                                  array("q"), array("q"))
        self.ops = {}  # thread -> (starts, ends, name ids) of cpu_op events, to name the launches' ops
        self.op_names = {}
        self.busy_start, self.busy_end = array("q"), array("q")
        self.wait_start, self.wait_end = array("q"), array("q")
        self.sync_start, self.sync_end = array("q"), array("q")
        self.zero_grad_start, self.zero_grad_end = array("q"), array("q")
        self.fill_start, self.fill_end = array("q"), array("q")
        self.tagged = {}
        self.markers = []
        self.op_totals = {}
        self.loss_calls = []  # (name, start ps, end ps, input dims or None) of LOSS_OPS events
        self.threads = {}  # (pid, tid) -> small int
        self.thread_roles = {}  # thread -> ({wait kind: (starts, ends)}, wake (starts, ends)) of model.waits calls
        self.python_spans = {}  # thread -> (starts, ends) of python_function events
        self.marker_threads = set()
        self.roles = {}  # Python call name -> model.waits.call_role (None: neither a wait nor a wake)
        self.collectives = CollectiveCollector()
        self.memory = {}  # device -> [peak Total Allocated, events] of `[memory]` events
        self.skipped = 0
        self.kind_cache = {}

    def _ps(self, ts):
        """Exact picoseconds of a microsecond `ts` from the origin; None when `ts` is not a number."""
        if isinstance(ts, bool) or not isinstance(ts, (int, Decimal)):
            return None
        if self.origin_us is None:
            self.origin_us = ts
        try:
            return int((ts - self.origin_us) * _PS_PER_US)
        except (InvalidOperation, OverflowError, ValueError):
            return None

    def add(self, event):
        if not isinstance(event, dict):
            return
        if event.get("ph") != "X":
            if event.get("ph") == "i" and event.get("name") == _MEMORY_EVENT:
                self._memory(event.get("args"))
            return
        cat = event.get("cat")
        cat = _CATEGORY_ALIASES.get(cat, cat)
        start = self._ps(event.get("ts"))
        duration = event.get("dur", 0)
        if start is None or isinstance(duration, bool) or not isinstance(duration, (int, Decimal)):
            self.skipped += 1
            return
        duration = int(duration * _PS_PER_US)
        if duration < 0 or not -2**62 < start < 2**62:
            self.skipped += 1
            return
        name = event.get("name")
        name = name if isinstance(name, str) else ""
        args = event.get("args")
        args = args if isinstance(args, dict) else {}
        kind = _DEVICE_CATEGORIES.get(cat)
        if kind is not None:
            self._device_event(kind, name, start, duration, event, args)
        elif cat == "cuda_sync":
            self._span(self.sync_start, self.sync_end, start, duration)
        elif cat not in _DEVICE_SIDE:
            self._host_event(cat, name, start, duration, event, args)

    def _memory(self, args):
        """A `[memory]` instant event (profile_memory=True): the device allocator's bytes after an (de)allocation."""
        if not isinstance(args, dict) or _int(args.get("Device Type")) != _CUDA_DEVICE_TYPE:
            return
        device, allocated = _int(args.get("Device Id")), _int(args.get("Total Allocated"))
        if device < 0 or allocated < 0:
            return
        entry = self.memory.setdefault(device, [0, 0])
        entry[0] = max(entry[0], allocated)
        entry[1] += 1

    def _python_call(self, thread, name, start, end):
        """Keeps a Python call's span for its thread's busy time, and its span as a wait or a wake."""
        spans = self.python_spans.get(thread)
        if spans is None:
            spans = self.python_spans[thread] = (array("q"), array("q"))
        spans[0].append(start)
        spans[1].append(end)
        role = self.roles.get(name, ())
        if role == ():
            role = self.roles[name] = call_role(name)
        if role is not None:
            waits, wakes = self.thread_roles.setdefault(thread, ({}, (array("q"), array("q"))))
            spans = waits.setdefault(role[1], (array("q"), array("q"))) if role[0] == "wait" else wakes
            spans[0].append(start)
            spans[1].append(end)

    def thread_waits(self):
        """ThreadWaits of the threads with waits or wakes, in order of their first event."""
        feeding = self.marker_threads | set(self.launch_tid)
        ids = {index: tid for (_, tid), index in self.threads.items()}
        found = []
        for thread in sorted(self.thread_roles):
            waits, wakes = self.thread_roles[thread]
            busy = [self.python_spans[thread]] + ([self.ops[thread][:2]] if thread in self.ops else [])
            found.append(thread_waits(
                thread_label("", ids[thread]), thread in feeding,
                {kind: tuple(_column(c, np.int64) for c in spans) for kind, spans in waits.items()},
                tuple(_column(c, np.int64) for c in wakes),
                tuple(np.concatenate([_column(spans[i], np.int64) for spans in busy]) for i in (0, 1))))
        return tuple(found)

    @staticmethod
    def _span(starts, ends, start, duration):
        if duration > 0:
            starts.append(start)
            ends.append(start + duration)

    def _device_event(self, kind, name, start, duration, event, args):
        if duration <= 0:
            return
        ordinal = _int(args.get("device"), _int(event.get("pid")))
        if ordinal < 0:
            self.skipped += 1
            return
        device = self.devices.get(ordinal)
        if device is None:
            device = self.devices[ordinal] = _Device()
        config_id = copy_id = -1
        direction = CopyDirection.NONE
        if kind == ActivityKind.KERNEL:
            config_id = _intern(device.configs, kernel_config(args))
            self.collectives.add_kernel(ordinal, name, start, duration, args)
        elif kind == ActivityKind.MEMCPY:
            cached = self.kind_cache.get(name)
            if cached is None:
                cached = self.kind_cache[name] = classify_event_name(name if name.startswith("Memcpy")
                                                                     else "Memcpy " + name)[1]
            direction = cached
            copy_id = _intern(device.copies, copy_details(name, args))
        device.start.append(start)
        device.duration.append(duration)
        device.kind.append(int(kind))
        device.stream.append(_int(args.get("stream"), _int(event.get("tid"), 0)))
        device.correlation.append(_int(args.get("correlation")))
        device.name_id.append(_intern(device.names, name))
        device.config_id.append(config_id)
        device.copy_id.append(copy_id)
        device.direction.append(int(direction))

    def _host_event(self, cat, name, start, duration, event, args):
        thread = (event.get("pid"), event.get("tid"))
        if not isinstance(thread[0], int):
            return  # the profiler's own spans ("Spans", "Traces")
        thread = self.threads.setdefault(thread, len(self.threads))
        step = _STEP.match(name)
        if step:
            if duration > 0:
                self.marker_threads.add(thread)
                self.markers.append(StepMarker(name=name, start_ps=start, end_ps=start + duration, source="host",
                                               step_num=int(step.group(1))))
            return
        entry = self.op_totals.get(name)
        if entry is None:
            self.op_totals[name] = [1, duration]
        else:
            entry[0] += 1
            entry[1] += duration
        if duration <= 0:
            return
        end = start + duration
        self.busy_start.append(start)
        self.busy_end.append(end)
        if cat == "python_function":
            self._python_call(thread, name, start, end)
        if cat in _LAUNCH_CATEGORIES:
            correlation = _int(args.get("correlation"))
            if correlation >= 0:
                self.launch_corr.append(correlation)
                self.launch_start.append(start)
                self.launch_dur.append(duration)
                self.launch_tid.append(thread)
            if is_device_wait(name):
                spans = self.tagged.setdefault(DEVICE_WAIT_TAG, (array("q"), array("q")))
                self._span(spans[0], spans[1], start, duration)
            if is_allocator_call(name):
                spans = self.tagged.setdefault(ALLOCATOR_TAG, (array("q"), array("q")))
                self._span(spans[0], spans[1], start, duration)
            if _SYNC_CALLS.match(name):
                self._span(self.sync_start, self.sync_end, start, duration)
            elif duration >= _INIT_MIN_PS and _INIT_CALLS.match(name):
                spans = self.tagged.setdefault("init", (array("q"), array("q")))
                self._span(spans[0], spans[1], start, duration)
            return
        if name.startswith(_INPUT_WAIT_PREFIX):
            self._span(self.wait_start, self.wait_end, start, duration)
        elif name.startswith(_ZERO_GRAD_PREFIX):
            self._span(self.zero_grad_start, self.zero_grad_end, start, duration)
        elif name in _FILL_OPS:
            self._span(self.fill_start, self.fill_end, start, duration)
        if cat == "cpu_op":
            columns = self.ops.get(thread)
            if columns is None:
                columns = self.ops[thread] = (array("q"), array("q"), array("i"))
            columns[0].append(start)
            columns[1].append(end)
            columns[2].append(_intern(self.op_names, name))
            if name == "record_param_comms":
                self.collectives.add_param_comms(start, duration, args)
            elif name in LOSS_OPS:
                self.loss_calls.append((name, start, end, _input_dims(args.get("Input Dims"))))
        call = python_call_name(name) if cat == "python_function" else None
        tag = event_tag(call if call is not None else name)
        if tag is not None:
            spans = self.tagged.setdefault(tag, (array("q"), array("q")))
            self._span(spans[0], spans[1], start, duration)


def _input_dims(value):
    """An operator's `Input Dims` as a tuple of tuples of ints, or None when not recorded or malformed."""
    if not isinstance(value, list):
        return None
    found = []
    for dims in value:
        if not isinstance(dims, list) or not all(isinstance(d, int) and not isinstance(d, bool) for d in dims):
            return None
        found.append(tuple(dims))
    return tuple(found)


def _column(values, dtype):
    return np.frombuffer(values, dtype=dtype).copy() if len(values) else np.zeros(0, dtype)


def _activity(device, op_of_correlation, op_table):
    start = _column(device.start, np.int64)
    order = np.argsort(start, kind="stable")
    correlation = _column(device.correlation, np.int64)[order]
    op_id = np.full(len(correlation), -1, dtype=np.int32)
    if len(op_of_correlation[0]):
        position = np.minimum(np.searchsorted(op_of_correlation[0], correlation), len(op_of_correlation[0]) - 1)
        found = (op_of_correlation[0][position] == correlation) & (correlation >= 0)
        names = op_of_correlation[1][position[found]]
        op_id[found] = np.array([op_table.setdefault(int(n), len(op_table)) for n in names], dtype=np.int32) \
            if len(names) else np.zeros(0, np.int32)
    return DeviceActivity(
        start_ps=start[order], duration_ps=_column(device.duration, np.int64)[order],
        kind=_column(device.kind, np.int8)[order], stream_id=_column(device.stream, np.int64)[order],
        correlation_id=correlation, name_id=_column(device.name_id, np.int32)[order],
        config_id=_column(device.config_id, np.int32)[order], op_id=op_id,
        copy_direction=_column(device.direction, np.int8)[order], copy_id=_column(device.copy_id, np.int32)[order],
        names=tuple(device.names), configs=tuple(device.configs), op_names=(), copies=tuple(device.copies))


def load_kineto_model(path, max_bytes=DEFAULT_MAX_FILE_BYTES, progress=None):
    """Reads and models one `.pt.trace.json[.gz]` file; raises ProfileError for bad input."""
    collector = _Collector()
    metadata = stream_trace(path, collector.add, max_bytes=max_bytes)
    return _model(str(path), collector, metadata)


def _model(path, c, metadata):
    shift = _shift(c)
    for device in c.devices.values():
        _shift_array(device.start, shift)
    for columns in (c.launch_start, c.busy_start, c.busy_end, c.wait_start, c.wait_end, c.sync_start, c.sync_end,
                    c.zero_grad_start, c.zero_grad_end, c.fill_start, c.fill_end):
        _shift_array(columns, shift)
    for starts, ends, _ in c.ops.values():
        _shift_array(starts, shift)
        _shift_array(ends, shift)
    for starts, ends in c.tagged.values():
        _shift_array(starts, shift)
        _shift_array(ends, shift)
    c.loss_calls = [(name, start - shift, end - shift, dims) for name, start, end, dims in c.loss_calls]
    markers = [StepMarker(name=m.name, start_ps=m.start_ps - shift, end_ps=m.end_ps - shift, source="host",
                          step_num=m.step_num) for m in c.markers]
    host = _host_activity(c, _device_correlations(c))
    op_of_correlation = launch_ops(host, _column(c.launch_tid, np.int64)[np.argsort(
        _column(c.launch_corr, np.int64), kind="stable")] if len(c.launch_corr) else np.zeros(0, np.int64),
        {thread: (_column(s, np.int64), _column(e, np.int64), _column(n, np.int32))
         for thread, (s, e, n) in c.ops.items()})
    op_names = list(c.op_names)
    gpus = []
    properties = metadata.get("deviceProperties")
    for ordinal in sorted(c.devices):
        op_table = {}
        activity = _activity(c.devices[ordinal], op_of_correlation, op_table)
        activity = _with_op_names(activity, [op_names[index] for index in op_table])
        gpus.append(GpuDevice(ordinal=ordinal, name=device_events_name(ordinal),
                              capabilities=capabilities(properties, ordinal), activity=activity))
    warnings = (f"{c.skipped:,} events without a usable ts/dur were left out",) if c.skipped else ()
    return TraceModel(
        path=path,
        host=worker_and_span(path)[0],
        gpus=tuple(gpus),
        host_activity=host,
        host_step_markers=outermost_markers(markers),
        profile_span_ps=_span(gpus, host),
        trace_warnings=warnings,
        environment=_environment(metadata),
        format=FORMAT,
        has_host_plane=bool(c.threads),
        collectives=c.collectives.result(shift),
        allocators=tuple(AllocatorStats(f"cuda:{device}", device, peak, None, count)
                         for device, (peak, count) in sorted(c.memory.items())),
    )


def _with_op_names(activity, names):
    from dataclasses import replace
    return replace(activity, op_names=tuple(names))


def _shift(c):
    """Picoseconds to subtract so the earliest event starts at 0."""
    firsts = [min(device.start) for device in c.devices.values() if len(device.start)]
    firsts += [min(columns) for columns in (c.busy_start, c.sync_start) if len(columns)]
    firsts += [m.start_ps for m in c.markers]
    return min(firsts) if firsts else 0


def _shift_array(values, shift):
    if shift and len(values):
        shifted = np.frombuffer(values, dtype=np.int64)
        shifted -= shift


def _device_correlations(c):
    """Sorted correlation ids of all device events."""
    ids = [_column(device.correlation, np.int64) for device in c.devices.values()]
    return np.unique(np.concatenate(ids)) if ids else np.zeros(0, np.int64)


def _host_activity(c, device_correlations):
    """HostActivity; `launch_busy` covers only the runtime calls that put work on a device (a 30 s first
    call that initializes CUDA is host time, not launch time)."""
    corr = _column(c.launch_corr, np.int64)
    start = _column(c.launch_start, np.int64)
    duration = _column(c.launch_dur, np.int64)
    order = np.argsort(corr, kind="stable")
    corr, start, duration = corr[order], start[order], duration[order]
    launched = np.isin(corr, device_correlations)
    tagged = {tag: intervals.union(_column(s, np.int64), _column(e, np.int64)) for tag, (s, e) in c.tagged.items()}
    if len(c.sync_start):
        tagged["sync"] = intervals.union(_column(c.sync_start, np.int64), _column(c.sync_end, np.int64))
    fills = intervals.intersect(intervals.union(_column(c.fill_start, np.int64), _column(c.fill_end, np.int64)),
                                intervals.union(_column(c.zero_grad_start, np.int64),
                                                _column(c.zero_grad_end, np.int64)))
    if len(fills):
        tagged["zero_grad_fill"] = fills
    return HostActivity(
        launch_correlation_id=corr,
        launch_start_ps=start,
        launch_duration_ps=duration,
        launch_device_id=np.full(len(corr), -1, dtype=np.int64),
        input_waits=intervals.union(_column(c.wait_start, np.int64), _column(c.wait_end, np.int64)),
        busy=intervals.union(_column(c.busy_start, np.int64), _column(c.busy_end, np.int64)),
        launch_busy=intervals.union(start[launched], start[launched] + duration[launched]),
        op_totals={name: tuple(value) for name, value in c.op_totals.items()},
        thread_count=len(c.threads),
        tagged=tagged,
        thread_busy={},
        loss_calls=tuple(sorted(c.loss_calls, key=lambda call: (call[1], -call[2]))),
        thread_waits=c.thread_waits(),
    )


def _span(gpus, host):
    starts, ends = [], []
    for gpu in gpus:
        if len(gpu.activity):
            starts.append(int(gpu.activity.start_ps[0]))
            ends.append(int(gpu.activity.end_ps.max()))
    if len(host.busy):
        starts.append(int(host.busy.start_ps[0]))
        ends.append(int(host.busy.end_ps[-1]))
    return (min(starts), max(ends)) if starts else (0, 0)


def _environment(metadata):
    """The trace's distributedInfo (rank, world size, backend, NCCL version) as environment keys."""
    environment = {"framework": "pytorch"}
    info = metadata.get("distributedInfo")
    if isinstance(info, dict):
        for source, key in (("rank", "rank"), ("world_size", "world_size"), ("backend", "distributed_backend"),
                            ("nccl_version", "nccl_version")):
            value = info.get(source)
            if isinstance(value, (str, int)) and not isinstance(value, bool):
                environment[key] = value
    schema = metadata.get("schemaVersion")
    if isinstance(schema, int) and not isinstance(schema, bool):
        environment["kineto_schema_version"] = schema
    return environment
