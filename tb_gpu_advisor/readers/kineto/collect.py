"""Collects a Kineto trace's events as they stream by into compact columns: device work per GPU, host launches,
ops, steps, waits, syncs, tagged spans, collectives and memory, each event's values checked (kineto.values)
before it is kept."""

import re
from array import array

import numpy as np

from tb_gpu_advisor.constants import MAX_PLANES
from tb_gpu_advisor.readers.kineto.capture_options import OptionCounter
from tb_gpu_advisor.readers.kineto.collectives import CollectiveCollector
from tb_gpu_advisor.readers.kineto.op_work import input_dtype, op_cost
from tb_gpu_advisor.readers.kineto.python_calls import python_call_name
from tb_gpu_advisor.readers.kineto.values import (PS_PER_US, WINDOW_PS, LeftOut, clean_text, copy_details, input_dims,
                                          integer, is_number, kernel_config, plausible_us)
from tb_gpu_advisor.model.collective_names import is_collective_host_op
from tb_gpu_advisor.model.device_events import classify_event_name
from tb_gpu_advisor.model.host import ALLOCATOR_TAG, DEVICE_WAIT_TAG, event_tag
from tb_gpu_advisor.model.host_waits import is_allocator_call, is_device_wait
from tb_gpu_advisor.model.waits import call_role, thread_label, thread_waits
from tb_gpu_advisor.model.trace import ActivityKind, CopyDirection, StepMarker
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
_OPTIMIZER_STEP_PREFIX = "Optimizer.step#"  # analysis.optimizer_loop
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


class Collector:
    """Takes the events as they stream by and keeps only what the model needs, in compact columns."""

    def __init__(self, origin_us=None):
        self.origin_us = origin_us  # the microsecond time of picosecond 0: the first plausible event's
        self.devices = {}
        self.launch_corr, self.launch_start, self.launch_dur, self.launch_tid = (array("q"), array("q"),
                                                                                  array("q"), array("q"))
        self.ops = {}  # thread -> (starts, ends, name ids, cost ids, dtype ids) of cpu_op events (kineto.op_work)
        self.op_costs = []  # OpCost of each costed op instance, by cost id
        self.op_dtypes = {}  # input element type -> dtype id
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
        self.thread_spans = {}  # thread -> (starts, ends) of its host events: the step threads' busy time
        self.roles = {}  # Python call name -> model.waits.call_role (None: neither a wait nor a wake)
        self.collectives = CollectiveCollector()
        self.memory = {}  # device -> [peak Total Allocated, events] of `[memory]` events
        self.memory_events = 0
        self.options = OptionCounter()  # what the profiler's recording options put on the operator events
        self.python_calls = 0
        self.left_out = LeftOut()
        self.kept = 0  # complete events within the window
        self.profiler_ranges = 0  # CUPTI range-profiler events: kernels' counters, without kernel times
        self.kind_cache = {}

    def _times(self, event):
        """(start ps from the origin, duration ps) of a complete event, or None after counting why it is left
        out: a ts/dur that is not a number, one no profiler records, or a time outside the window."""
        ts, dur = event.get("ts"), event.get("dur", 0)
        if not (is_number(ts) and is_number(dur)):
            self.left_out.unusable += 1
            return None
        ts_us, dur_us = plausible_us(ts), plausible_us(dur)
        if ts_us is None or dur_us is None or dur_us < 0:
            self.left_out.implausible(ts, dur)
            return None
        if self.origin_us is None:
            self.origin_us = ts_us
        start = int((ts_us - self.origin_us) * PS_PER_US)
        duration = int(dur_us * PS_PER_US)
        if not -WINDOW_PS < start <= start + duration < WINDOW_PS:
            self.left_out.far(ts_us)
            return None
        self.kept += 1
        return start, duration

    def add(self, event):
        if not isinstance(event, dict):
            return
        if event.get("ph") != "X":
            if event.get("ph") == "i" and event.get("name") == _MEMORY_EVENT:
                self.memory_events += 1
                self._memory(event.get("args"))
            return
        cat = event.get("cat")
        cat = _CATEGORY_ALIASES.get(cat, cat)
        times = self._times(event)
        if times is None:
            return
        start, duration = times
        name = event.get("name")
        name = clean_text(name) if isinstance(name, str) else ""
        args = event.get("args")
        args = args if isinstance(args, dict) else {}
        kind = _DEVICE_CATEGORIES.get(cat)
        if kind is not None:
            self._device_event(kind, name, start, duration, event, args)
        elif cat == "cuda_sync":
            self._span(self.sync_start, self.sync_end, start, duration)
        elif cat == "cuda_profiler_range":
            self.profiler_ranges += 1
        elif cat not in _DEVICE_SIDE:
            self._host_event(cat, name, start, duration, event, args)

    def _memory(self, args):
        """A `[memory]` instant event (profile_memory=True): the device allocator's bytes after an (de)allocation."""
        if not isinstance(args, dict) or integer(args.get("Device Type")) != _CUDA_DEVICE_TYPE:
            return
        device, allocated = integer(args.get("Device Id")), integer(args.get("Total Allocated"))
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
                {kind: tuple(column(c, np.int64) for c in spans) for kind, spans in waits.items()},
                tuple(column(c, np.int64) for c in wakes),
                tuple(np.concatenate([column(spans[i], np.int64) for spans in busy]) for i in (0, 1))))
        return tuple(found)

    @staticmethod
    def _span(starts, ends, start, duration):
        if duration > 0:
            starts.append(start)
            ends.append(start + duration)

    def _device_event(self, kind, name, start, duration, event, args):
        if duration <= 0:
            return
        ordinal = integer(args.get("device"), integer(event.get("pid"), -1, 0, MAX_PLANES), 0, MAX_PLANES)
        if ordinal < 0:
            self.left_out.no_device += 1
            return
        device = self.devices.get(ordinal)
        if device is None:
            device = self.devices[ordinal] = _Device()
        config_id = copy_id = -1
        direction = CopyDirection.NONE
        if kind == ActivityKind.KERNEL:
            config_id = _intern(device.configs, kernel_config(args))
            self.collectives.add_kernel(ordinal, name, start, duration, args, integer(args.get("correlation")))
        elif kind == ActivityKind.MEMCPY:
            cached = self.kind_cache.get(name)
            if cached is None:
                cached = self.kind_cache[name] = classify_event_name(name if name.startswith("Memcpy")
                                                                     else "Memcpy " + name)[1]
            direction = cached
            details, implausible = copy_details(name, args)
            self.left_out.copy_sizes += implausible
            copy_id = _intern(device.copies, details)
        device.start.append(start)
        device.duration.append(duration)
        device.kind.append(int(kind))
        device.stream.append(integer(args.get("stream"), integer(event.get("tid"), 0)))
        device.correlation.append(integer(args.get("correlation")))
        device.name_id.append(_intern(device.names, name))
        device.config_id.append(config_id)
        device.copy_id.append(copy_id)
        device.direction.append(int(direction))

    def _host_event(self, cat, name, start, duration, event, args):
        tid = event.get("tid")
        thread = (event.get("pid"), tid if isinstance(tid, (int, float, str)) or tid is None else repr(tid)[:64])
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
        spans = self.thread_spans.get(thread)
        if spans is None:
            spans = self.thread_spans[thread] = (array("q"), array("q"))
        spans[0].append(start)
        spans[1].append(end)
        if cat == "python_function":
            self.python_calls += 1
            self._python_call(thread, name, start, end)
        if cat in _LAUNCH_CATEGORIES:
            correlation = integer(args.get("correlation"))
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
        elif name.startswith(_OPTIMIZER_STEP_PREFIX):
            spans = self.tagged.setdefault("optimizer_step", (array("q"), array("q")))
            self._span(spans[0], spans[1], start, duration)
        elif name in _FILL_OPS:
            self._span(self.fill_start, self.fill_end, start, duration)
        if is_collective_host_op(name):
            self.collectives.add_host_op(thread, name, start, duration, args)
        if cat == "cpu_op":
            self.options.add_op(args)
            columns = self.ops.get(thread)
            if columns is None:
                columns = self.ops[thread] = (array("q"), array("q"), array("i"), array("q"), array("i"))
            columns[0].append(start)
            columns[1].append(end)
            columns[2].append(_intern(self.op_names, name))
            cost = op_cost(name, args)
            if cost is not None:
                self.op_costs.append(cost)
            columns[3].append(len(self.op_costs) - 1 if cost is not None else -1)
            dtype = cost.dtype if cost is not None else input_dtype(args)
            columns[4].append(_intern(self.op_dtypes, dtype) if dtype else -1)
            if name in LOSS_OPS:
                self.loss_calls.append((name, start, end, input_dims(args.get("Input Dims"))))
        call = python_call_name(name) if cat == "python_function" else None
        tag = event_tag(call if call is not None else name)
        if tag is not None:
            spans = self.tagged.setdefault(tag, (array("q"), array("q")))
            self._span(spans[0], spans[1], start, duration)


def column(values, dtype):
    return np.frombuffer(values, dtype=dtype).copy() if len(values) else np.zeros(0, dtype)
