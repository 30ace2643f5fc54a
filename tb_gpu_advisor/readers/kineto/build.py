"""Kineto trace -> TraceModel: device activity per GPU and stream, host launches, steps, waits and syncs.

Times become integer picoseconds from the earliest event, computed exactly from the file's decimal
microseconds (`decimal.Decimal`, never float), so sub-microsecond events keep their order and length. The events
are gathered by kineto.collect as they stream by; this module turns its columns into the model.
"""

from __future__ import annotations

from dataclasses import replace
from os import PathLike

import numpy as np

from tb_gpu_advisor.constants import DEFAULT_MAX_FILE_BYTES
from tb_gpu_advisor.model.trace import TraceModel
from tb_gpu_advisor.readers.kineto.collect import Collector
from tb_gpu_advisor.readers.progress import Progress
from tb_gpu_advisor.readers.kineto.device_columns import column
from tb_gpu_advisor.readers.kineto.devices import capabilities, device_events_name
from tb_gpu_advisor.files.names import worker_and_span
from tb_gpu_advisor.readers.kineto.op_self import op_self_ps
from tb_gpu_advisor.readers.kineto.op_work import event_work, launch_work
from tb_gpu_advisor.readers.kineto.op_stalls import op_stalls
from tb_gpu_advisor.readers.kineto.ops import launch_ops
from tb_gpu_advisor.readers.kineto.process_groups import with_group_sizes
from tb_gpu_advisor.readers.kineto.profiler_log import capture_warnings
from tb_gpu_advisor.readers.kineto.stream import stream_trace
from tb_gpu_advisor.readers.kineto.values import PS_PER_US, clean_text, integer
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.allocators import AllocatorStats
from tb_gpu_advisor.model.host import outermost_markers
from tb_gpu_advisor.model.limits import check_model_times
from tb_gpu_advisor.model.trace import DeviceActivity, GpuDevice, HostActivity, StepMarker

FORMAT = "kineto"


def _activity(device, op_of_correlation, op_table):
    start = column(device.start, np.int64)
    order = np.argsort(start, kind="stable")
    correlation = column(device.correlation, np.int64)[order]
    op_id = np.full(len(correlation), -1, dtype=np.int32)
    if len(op_of_correlation[0]):
        position = np.minimum(np.searchsorted(op_of_correlation[0], correlation), len(op_of_correlation[0]) - 1)
        found = (op_of_correlation[0][position] == correlation) & (correlation >= 0)
        names = op_of_correlation[1][position[found]]
        op_id[found] = (
            np.array([op_table.setdefault(int(n), len(op_table)) for n in names], dtype=np.int32)
            if len(names)
            else np.zeros(0, np.int32)
        )
    return DeviceActivity(
        start_ps=start[order],
        duration_ps=column(device.duration, np.int64)[order],
        kind=column(device.kind, np.int8)[order],
        stream_id=column(device.stream, np.int64)[order],
        correlation_id=correlation,
        name_id=column(device.name_id, np.int32)[order],
        config_id=column(device.config_id, np.int32)[order],
        op_id=op_id,
        copy_direction=column(device.direction, np.int8)[order],
        copy_id=column(device.copy_id, np.int32)[order],
        names=tuple(device.names),
        configs=tuple(device.configs),
        op_names=(),
        copies=tuple(device.copies),
    )


def load_kineto_model(
    path: str | PathLike[str],
    max_bytes: int | None = DEFAULT_MAX_FILE_BYTES,
    progress: Progress | None = None,
    batches: bool = True,
) -> TraceModel:
    """Reads and models one `.pt.trace.json[.gz]` file; raises ProfileError for bad input.

    Times count from the first event with a plausible time. When most events lie outside the window around
    it (that first event is the outlier), the file is read once more from the first of those instead, and
    whichever reading keeps more events is modelled: one stray event never empties the report.
    `batches=False` reads every event with the standard library (kineto.stream), as without msgspec.
    """
    collector, metadata = _read(path, max_bytes, batches=batches)
    if collector.left_out.far_count > collector.kept:
        kept, origin_us = collector.kept, collector.left_out.first_far_us
        collector = None  # one reading in memory at a time
        collector, metadata = _read(path, max_bytes, origin_us, batches)
        if collector.kept < kept:  # the far events are scattered: the first reading kept more
            collector = None
            collector, metadata = _read(path, max_bytes, batches=batches)
    model = _model(str(path), collector, metadata)
    check_model_times(model)
    return model


def _read(path, max_bytes, origin_us=None, batches=True):
    collector = Collector(origin_us)
    return collector, stream_trace(
        path, collector.add, max_bytes=max_bytes, on_batch=collector.add_batch if batches else None
    )


def _model(path, c, metadata):
    shift = _shift(c)
    collectives = with_group_sizes(
        c.collectives.result(shift, _launches_of(c, c.collectives.kernel_correlations())),
        metadata.get("distributedInfo"),
    )
    for device in c.devices.values():
        _shift_array(device.start, shift)
    for columns in (
        c.launch_start,
        c.busy_start,
        c.busy_end,
        c.wait_start,
        c.wait_end,
        c.sync_start,
        c.sync_end,
        c.zero_grad_start,
        c.zero_grad_end,
        c.fill_start,
        c.fill_end,
    ):
        _shift_array(columns, shift)
    for starts, ends, *_ in c.ops.values():
        _shift_array(starts, shift)
        _shift_array(ends, shift)
    for starts, ends in list(c.tagged.values()) + list(c.thread_spans.values()):
        _shift_array(starts, shift)
        _shift_array(ends, shift)
    c.loss_calls = [(name, start - shift, end - shift, dims) for name, start, end, dims in c.loss_calls]
    markers = [
        StepMarker(
            name=m.name, start_ps=m.start_ps - shift, end_ps=m.end_ps - shift, source="host", step_num=m.step_num
        )
        for m in c.markers
    ]
    host = _host_activity(c, _device_correlations(c))
    launch_thread = (
        column(c.launch_tid, np.int64)[np.argsort(column(c.launch_corr, np.int64), kind="stable")]
        if len(c.launch_corr)
        else np.zeros(0, np.int64)
    )
    columns = {
        thread: tuple(
            column(values, dtype) for values, dtype in zip(cols, (np.int64, np.int64, np.int32, np.int64, np.int32))
        )
        for thread, cols in c.ops.items()
    }
    op_of_correlation = launch_ops(host, launch_thread, {thread: cols[:3] for thread, cols in columns.items()})
    launches = launch_work(
        host, launch_thread, {thread: (cols[0], cols[1], cols[3], cols[4]) for thread, cols in columns.items()}
    )
    dtypes = tuple(c.op_dtypes)
    op_names = list(c.op_names)
    gpus = []
    properties = metadata.get("deviceProperties")
    warnings = list(c.left_out.warnings()) + list(capture_warnings(metadata))
    for ordinal in sorted(c.devices):
        op_table = {}
        activity = _activity(c.devices[ordinal], op_of_correlation, op_table)
        activity = _with_op_names(activity, [op_names[index] for index in op_table])
        activity = replace(
            activity, work=event_work(activity.correlation_id, activity.duration_ps, launches, c.op_costs, dtypes)
        )
        caps, device_warnings = capabilities(properties, ordinal)
        warnings += device_warnings
        gpus.append(GpuDevice(ordinal=ordinal, name=device_events_name(ordinal), capabilities=caps, activity=activity))
    return TraceModel(
        path=path,
        host=worker_and_span(path)[0],
        gpus=tuple(gpus),
        host_activity=host,
        host_step_markers=outermost_markers(markers),
        profile_span_ps=_span(gpus, host),
        trace_warnings=tuple(warnings),
        environment=_environment(metadata),
        format=FORMAT,
        has_host_plane=bool(c.threads),
        collectives=collectives,
        gpu_metric_ranges=c.profiler_ranges,
        allocators=tuple(
            AllocatorStats(f"cuda:{device}", device, peak, None, count)
            for device, (peak, count) in sorted(c.memory.items())
        ),
        profiler_options=c.options.options(metadata, c.python_calls, c.memory_events),
        profiled_ops=c.options.ops,
        time_origin_ps=int(round(c.origin_us * PS_PER_US)) + shift if c.origin_us is not None else None,
        machine=clean_text(metadata["host_name"]) if isinstance(metadata.get("host_name"), str) else None,
    )


def _with_op_names(activity, names):
    return replace(activity, op_names=tuple(names))


def _launches_of(c, correlations):
    """{correlation: (thread, start)} of the launch calls of the given correlation ids (before any shift)."""
    if not correlations:
        return {}
    return {
        corr: (tid, start)
        for corr, start, tid in zip(c.launch_corr, c.launch_start, c.launch_tid)
        if corr in correlations
    }


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
    ids = [column(device.correlation, np.int64) for device in c.devices.values()]
    return np.unique(np.concatenate(ids)) if ids else np.zeros(0, np.int64)


def _host_activity(c, device_correlations):
    """HostActivity; `launch_busy` covers only the runtime calls that put work on a device (a 30 s first
    call that initializes CUDA is host time, not launch time)."""
    corr = column(c.launch_corr, np.int64)
    start = column(c.launch_start, np.int64)
    duration = column(c.launch_dur, np.int64)
    order = np.argsort(corr, kind="stable")
    corr, start, duration = corr[order], start[order], duration[order]
    launched = np.isin(corr, device_correlations)
    tagged = {tag: intervals.union(column(s, np.int64), column(e, np.int64)) for tag, (s, e) in c.tagged.items()}
    if len(c.sync_start):
        tagged["sync"] = intervals.union(column(c.sync_start, np.int64), column(c.sync_end, np.int64))
    fills = intervals.intersect(
        intervals.union(column(c.fill_start, np.int64), column(c.fill_end, np.int64)),
        intervals.union(column(c.zero_grad_start, np.int64), column(c.zero_grad_end, np.int64)),
    )
    if len(fills):
        tagged["zero_grad_fill"] = fills
    for tag, found in op_stalls(c.ops, c.thread_spans, list(c.op_names)).items():
        tagged[tag] = intervals.union(
            np.array([s for s, _ in found], np.int64), np.array([e for _, e in found], np.int64)
        )
    return HostActivity(
        launch_correlation_id=corr,
        launch_start_ps=start,
        launch_duration_ps=duration,
        launch_device_id=np.full(len(corr), -1, dtype=np.int64),
        input_waits=intervals.union(column(c.wait_start, np.int64), column(c.wait_end, np.int64)),
        busy=intervals.union(column(c.busy_start, np.int64), column(c.busy_end, np.int64)),
        launch_busy=intervals.union(start[launched], start[launched] + duration[launched]),
        op_totals={name: tuple(value) for name, value in c.op_totals.items()},
        op_self_ps=op_self_ps(c.ops, list(c.op_names)),
        thread_count=len(c.threads),
        tagged=tagged,
        thread_busy={},
        loss_calls=tuple(sorted(c.loss_calls, key=lambda call: (call[1], -call[2]))),
        thread_waits=c.thread_waits(),
        step_thread_busy=_step_thread_busy(c),
    )


def _step_thread_busy(c):
    """The union of the host events on the threads holding step markers (Intervals.EMPTY without markers)."""
    spans = [c.thread_spans[thread] for thread in sorted(c.marker_threads) if thread in c.thread_spans]
    if not spans:
        return intervals.EMPTY
    return intervals.union(
        np.concatenate([column(s, np.int64) for s, _ in spans]), np.concatenate([column(e, np.int64) for _, e in spans])
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
        for source, key in (
            ("rank", "rank"),
            ("world_size", "world_size"),
            ("backend", "distributed_backend"),
            ("nccl_version", "nccl_version"),
        ):
            value = info.get(source)
            if isinstance(value, str):
                environment[key] = clean_text(value)
            elif integer(value, None) is not None:
                environment[key] = value
    schema = metadata.get("schemaVersion")
    if integer(schema, None) is not None:
        environment["kineto_schema_version"] = schema
    return environment
