"""Collects a Kineto trace's events as they stream by into compact columns: device work per GPU, host launches,
ops, steps, waits, syncs, tagged spans, collectives and memory, each event's values checked (kineto.values)
before it is kept."""

from __future__ import annotations

from typing import Any

from array import array
from decimal import Decimal

import numpy as np

from tb_gpu_advisor.constants import MAX_PLANES
from tb_gpu_advisor.readers.kineto.capture_options import OptionCounter
from tb_gpu_advisor.readers.kineto.collect_threads import ThreadCalls
from tb_gpu_advisor.readers.kineto.collectives import CollectiveCollector, is_collective_kernel
from tb_gpu_advisor.readers.kineto.host_names import host_name
from tb_gpu_advisor.readers.kineto.op_work import input_dtype, op_cost
from tb_gpu_advisor.readers.kineto.times import split_us
from tb_gpu_advisor.readers.kineto.records import EMPTY_ARGS, UNCACHED, UNSET, Raw, args_dict, decoded, raw_key
from tb_gpu_advisor.readers.kineto.values import (
    PS_PER_US,
    WINDOW_PS,
    LeftOut,
    clean_text,
    copy_details,
    input_dims,
    integer,
)
from tb_gpu_advisor.model.device_events import classify_event_name
from tb_gpu_advisor.model.host import ALLOCATOR_TAG, DEVICE_WAIT_TAG, QUEUE_FULL_TAG
from tb_gpu_advisor.model.trace import ActivityKind, CopyDirection, StepMarker
from tb_gpu_advisor.readers.kineto.device_columns import CACHED_NAMES, DeviceColumns, intern
from tb_gpu_advisor.readers.kineto.event_times import PLAIN_US, origin_parts, plausible_us

# Old Kineto spelled the categories differently (PyTorch 1.8-1.9).
_CATEGORY_ALIASES = {
    "Kernel": "kernel",
    "Memcpy": "gpu_memcpy",
    "Memset": "gpu_memset",
    "Runtime": "cuda_runtime",
    "Operator": "cpu_op",
    "Driver": "cuda_driver",
}
_DEVICE_CATEGORIES = {
    "kernel": ActivityKind.KERNEL,
    "gpu_memcpy": ActivityKind.MEMCPY,
    "gpu_memset": ActivityKind.MEMSET,
}
# Categories on the device tracks that are not device work.
_QUEUE_FULL_OVERHEAD = "Command Buffer Full"
_DEVICE_SIDE = {"gpu_user_annotation", "cuda_sync", "ac2g", "Trace", "cuda_profiler_range"}
# PyTorch's profile_memory events: one per (de)allocation, with the allocator's total after it; c10's device type
# 1 is CUDA (ROCm builds report HIP as CUDA too).
_MEMORY_EVENT = "[memory]"
_CUDA_DEVICE_TYPE = 1
_INIT_MIN_PS = 1_000_000_000  # 1 ms: these calls take microseconds once the process is warm
_PS_PER_US = Decimal(PS_PER_US)  # the same products as with the int, without converting it each time


class Collector(ThreadCalls):
    """Takes the events as they stream by and keeps only what the model needs, in compact columns."""

    def __init__(self, origin_us=None):
        self.origin_us = origin_us  # the microsecond time of picosecond 0: the first plausible event's
        self.devices = {}
        self.launch_corr, self.launch_start, self.launch_dur, self.launch_tid = (
            array("q"),
            array("q"),
            array("q"),
            array("q"),
        )
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
        self.clean_names = {}  # name -> the name without lone surrogates
        self.host_names = {}  # (category, name) -> kineto.host_names.HostName
        self.dtypes_of = {}  # raw `Input type` -> input element type
        self.durations = {}  # a decimal duration in µs -> ps
        self.origin_parts = None  # the origin as (whole µs, ps) for batches; False when it is not plain

    def _times(self, ts, dur):
        """(start ps from the origin, duration ps) of a complete event, or None after counting why it is left
        out: a ts/dur that is not a number, one no profiler records, or a time outside the window."""
        ts_type, dur_type = type(ts), type(dur)
        if (ts_type is not int and ts_type is not Decimal) or (dur_type is not int and dur_type is not Decimal):
            self.left_out.unusable += 1  # not a number (a bool is not one either)
            return None
        if not (plausible_us(ts, ts_type) and plausible_us(dur, dur_type)) or dur < 0:
            self.left_out.implausible(ts, dur)
            return None
        if self.origin_us is None:
            self.origin_us = ts
        delta = ts - self.origin_us
        start = delta * PS_PER_US if type(delta) is int else int(delta * _PS_PER_US)
        if dur_type is int:
            duration = dur * PS_PER_US
        else:
            duration = self.durations.get(dur)
            if duration is None:
                duration = int(dur * _PS_PER_US)
                if len(self.durations) < CACHED_NAMES:
                    self.durations[dur] = duration
        if not -WINDOW_PS < start <= start + duration < WINDOW_PS:
            self.left_out.far(ts)
            return None
        self.kept += 1
        return start, duration

    def add(self, event: Any) -> None:
        """Takes one event (a kineto.records.Event)."""
        ph = event.ph
        if ph != "X":
            if ph == "i" and event.name == _MEMORY_EVENT:
                self.memory_events += 1
                self._memory(event.args)
            return
        cat = event.cat
        cat = _CATEGORY_ALIASES.get(cat, cat)
        times = self._times(event.ts, event.dur)
        if times is not None:
            self._timed(event, cat, times[0], times[1])

    def add_batch(self, events: list[Any]) -> None:
        """Takes a batch of events whose times are still JSON text (kineto.records.BatchEvent): the plain ones
        are read at once (kineto.times), the others one at a time as `add` reads them."""
        for event in events:
            if event.ph == "i" and event.name == _MEMORY_EVENT:
                self.add(event)
        timed = [event for event in events if event.ph == "X"]
        if self.origin_parts is None and self.origin_us is not None:
            self.origin_parts = origin_parts(self.origin_us)
        if not self.origin_parts:  # the origin is not known yet (or not a plain decimal): one at a time
            for event in timed:
                cat = event.cat
                cat = _CATEGORY_ALIASES.get(cat, cat)
                times = self._times(decoded(event.ts), decoded(event.dur))
                if times is not None:
                    self._timed(event, cat, times[0], times[1])
            return
        ts_whole, ts_ps, ts_plain = split_us([event.ts for event in timed])
        dur_whole, dur_ps, dur_plain = split_us([event.dur for event in timed])
        origin_whole, origin_ps = self.origin_parts
        delta = ts_whole - origin_whole
        # Both parts plain, a duration >= 0, and products that fit int64; the rest goes one at a time.
        plain = (
            ts_plain
            & dur_plain
            & (dur_whole >= 0)
            & (dur_ps >= 0)
            & (np.abs(delta) < PLAIN_US)
            & (dur_whole < PLAIN_US)
        )
        starts = (np.where(plain, delta, 0) * PS_PER_US + (ts_ps - origin_ps)).tolist()
        durations = (np.where(plain, dur_whole, 0) * PS_PER_US + dur_ps).tolist()
        for event, is_plain, start, duration in zip(timed, plain.tolist(), starts, durations):
            cat = event.cat
            cat = _CATEGORY_ALIASES.get(cat, cat)
            if not is_plain:
                times = self._times(decoded(event.ts), decoded(event.dur))
                if times is None:
                    continue
                start, duration = times
            elif -WINDOW_PS < start <= start + duration < WINDOW_PS:
                self.kept += 1
            else:
                self.left_out.far(decoded(event.ts))
                continue
            self._timed(event, cat, start, duration)

    def _timed(self, event, cat, start, duration):
        """A complete event kept, at `start` for `duration` ps."""
        name = event.name
        if isinstance(name, str):
            clean = self.clean_names.get(name)
            if clean is None:
                clean = clean_text(name)
                if len(self.clean_names) < CACHED_NAMES:
                    self.clean_names[name] = clean
            name = clean
        else:
            name = ""
        args = event.args
        if args is None:
            args = EMPTY_ARGS
        kind = _DEVICE_CATEGORIES.get(cat)
        if kind is not None:
            self._device_event(kind, name, start, duration, event, args)
        elif cat == "cuda_sync":
            self._span(self.sync_start, self.sync_end, start, duration)
        elif cat == "cuda_profiler_range":
            self.profiler_ranges += 1
        elif cat == "overhead" and name == _QUEUE_FULL_OVERHEAD:
            self._tagged(QUEUE_FULL_TAG, start, duration)  # CUPTI's record of a launch blocked on a full queue
        elif cat not in _DEVICE_SIDE:
            self._host_event(cat, name, start, duration, event, args)

    def _memory(self, args):
        """A `[memory]` instant event (profile_memory=True): the device allocator's bytes after an (de)allocation."""
        if args is None or integer(args.device_type) != _CUDA_DEVICE_TYPE:
            return
        device, allocated = integer(args.device_id), integer(args.allocated)
        if device < 0 or allocated < 0:
            return
        entry = self.memory.setdefault(device, [0, 0])
        entry[0] = max(entry[0], allocated)
        entry[1] += 1

    @staticmethod
    def _span(starts, ends, start, duration):
        if duration > 0:
            starts.append(start)
            ends.append(start + duration)

    def _device_event(self, kind, name, start, duration, event, args):
        if duration <= 0:
            return
        ordinal = integer(args.device, integer(event.pid, -1, 0, MAX_PLANES), 0, MAX_PLANES)
        if ordinal < 0:
            self.left_out.no_device += 1
            return
        device = self.devices.get(ordinal)
        if device is None:
            device = self.devices[ordinal] = DeviceColumns()
        config_id = copy_id = -1
        direction = CopyDirection.NONE
        if kind == ActivityKind.KERNEL:
            config_id = device.config_id_of(args)
            if is_collective_kernel(name):
                self.collectives.add_kernel(ordinal, name, start, duration, args_dict(args), integer(args.correlation))
        elif kind == ActivityKind.MEMCPY:
            cached = self.kind_cache.get(name)
            if cached is None:
                cached = self.kind_cache[name] = classify_event_name(
                    name if name.startswith("Memcpy") else "Memcpy " + name
                )[1]
            direction = cached
            details, implausible = copy_details(name, args_dict(args))
            self.left_out.copy_sizes += implausible
            copy_id = intern(device.copies, details)
        device.start.append(start)
        device.duration.append(duration)
        device.kind.append(int(kind))
        device.stream.append(integer(args.stream, integer(event.tid, 0)))
        device.correlation.append(integer(args.correlation))
        device.name_id.append(intern(device.names, name))
        device.config_id.append(config_id)
        device.copy_id.append(copy_id)
        device.direction.append(int(direction))

    def _host_name(self, cat, name):
        found = self.host_names.get((cat, name))
        if found is None:
            found = host_name(cat, name)
            if len(self.host_names) < CACHED_NAMES:
                self.host_names[(cat, name)] = found
        return found

    def _host_event(self, cat, name, start, duration, event, args):
        tid = event.tid
        thread = (event.pid, tid if isinstance(tid, (int, float, str)) or tid is None else repr(tid)[:64])
        if not isinstance(thread[0], int):
            return  # the profiler's own spans ("Spans", "Traces")
        thread = self.threads.setdefault(thread, len(self.threads))
        kind = self.host_names.get((cat, name)) or self._host_name(cat, name)
        if kind.step is not None:
            if duration > 0:
                self.marker_threads.add(thread)
                self.markers.append(
                    StepMarker(
                        name=name, start_ps=start, end_ps=start + duration, source="host", step_num=int(kind.step)
                    )
                )
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
        if kind.python:
            self.python_calls += 1
            self._python_call(thread, name, start, end)
        if kind.launch:
            correlation = integer(args.correlation)
            if correlation >= 0:
                self.launch_corr.append(correlation)
                self.launch_start.append(start)
                self.launch_dur.append(duration)
                self.launch_tid.append(thread)
            if kind.device_wait:
                self._tagged(DEVICE_WAIT_TAG, start, duration)
            if kind.allocator:
                self._tagged(ALLOCATOR_TAG, start, duration)
            if kind.sync:
                self._span(self.sync_start, self.sync_end, start, duration)
            elif duration >= _INIT_MIN_PS and kind.init:
                self._tagged("init", start, duration)
            return
        if kind.span is not None:
            if kind.span == "input_wait":
                self._span(self.wait_start, self.wait_end, start, duration)
            elif kind.span == "zero_grad":
                self._span(self.zero_grad_start, self.zero_grad_end, start, duration)
            elif kind.span == "fill":
                self._span(self.fill_start, self.fill_end, start, duration)
            else:
                self._tagged(kind.span, start, duration)
        if kind.collective:
            self.collectives.add_host_op(thread, name, start, duration, args_dict(args))
        if kind.cpu_op:
            self._op(thread, name, start, end, args, kind)
        if kind.tag is not None:
            self._tagged(kind.tag, start, duration)

    def _op(self, thread, name, start, end, args, kind):
        """A `cpu_op` event: its span, name, cost (kineto.op_work) and input element type."""
        flops = args.flops
        options = self.options
        options.ops += 1
        options.shapes += args.dims is not UNSET
        options.stacks += args.stack is not UNSET
        options.flops += flops is not UNSET
        columns = self.ops.get(thread)
        if columns is None:
            columns = self.ops[thread] = (array("q"), array("q"), array("i"), array("q"), array("i"))
        columns[0].append(start)
        columns[1].append(end)
        columns[2].append(intern(self.op_names, name))
        cost = None
        if kind.costed or (type(flops) is int and flops > 0):
            cost = op_cost(name, args_dict(args))
            if cost is not None:
                self.op_costs.append(cost)
        columns[3].append(len(self.op_costs) - 1 if cost is not None else -1)
        if cost is not None:
            dtype = cost.dtype
        else:
            types = args.types
            dtype = self.dtypes_of.get(bytes(types), UNSET) if type(types) is Raw else UNSET
            if dtype is UNSET:
                dtype = self._input_dtype(types)
        columns[4].append(intern(self.op_dtypes, dtype) if dtype else -1)
        if kind.loss:
            self.loss_calls.append(
                (name, start, end, input_dims(decoded(args.dims) if args.dims is not UNSET else None))
            )

    def _input_dtype(self, types):
        key = raw_key(types)
        if key is UNCACHED:
            return input_dtype({"Input type": types})
        found = self.dtypes_of.get(key, UNSET)
        if found is UNSET:
            found = input_dtype({"Input type": decoded(types)})
            if len(self.dtypes_of) < CACHED_NAMES:
                self.dtypes_of[key] = found
        return found

    def _tagged(self, tag, start, duration):
        spans = self.tagged.get(tag)
        if spans is None:
            spans = self.tagged[tag] = (array("q"), array("q"))
        self._span(spans[0], spans[1], start, duration)
