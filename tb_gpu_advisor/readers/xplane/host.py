"""Accumulates HostActivity and step markers over XPlane host planes, decoded (the reference path) or scanned
(host_columns)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.host import (
    _KERAS3_MARKER,
    _MARKER_NAMES,
    TF_DATA_MAP_OP_TAG,
    TF_DATA_PY_FUNCTION_TAG,
    XLA_CPU_EXECUTOR_THREADS,
    XLA_CPU_TAG,
    _is_input_wait,
    event_tags,
    is_py_function_event,
    is_tf_op_event,
    on_tf_data_thread,
    outermost_markers,
    step_thread_only,
    thread_kind,
)
from tb_gpu_advisor.model.trace import HostActivity, StepMarker

if TYPE_CHECKING:
    from tb_gpu_advisor.readers.xplane.host_columns import HostPlaneColumns
from tb_gpu_advisor.model.waits import call_role, thread_label, thread_waits
from tb_gpu_advisor.readers.xplane.stats import ids_named, is_derived_line, stat_names, stat_value

_HOST_STATS = {"correlation_id", "device_id", "step_num", "_r", "graph_type", "iter_num", "batch_size"}
# tf.data iterator events (`Iterator::Root::...::BatchV2`) carry their dataset's `batch_size`.
_ITERATOR_PREFIX = "Iterator::"


class _HostCollector:
    """Accumulates what the analyses need while host events stream by."""

    def __init__(self):
        self.launch_corr, self.launch_start, self.launch_dur, self.launch_device = [], [], [], []
        self.wait_start, self.wait_end = [], []
        self.busy_start, self.busy_end = [], []
        self.markers = []
        self.op_totals = {}
        self.op_shortest = {}  # name -> shortest event duration ps
        self.executor_op_totals = {}  # name -> [count, total ps] on XLA's CPU executor threads
        self.threads = 0
        self.arrays = {field: [] for field in _ARRAY_FIELDS}  # chunks of int64 arrays, in event order
        self.tagged = {}  # tag -> ([starts], [ends])
        self.thread_busy = {}  # thread kind -> [thread count, busy ps]
        self.thread_waits = []  # model.trace.ThreadWaits, in thread order
        self.batch_stages = {}  # tf.data stage event name -> {batch_size: events}

    def add_plane(self, plane: Any, origin_ns: int) -> None:
        names = stat_names(plane)
        wanted = ids_named(names, _HOST_STATS)
        meta_names = {key: meta.name for key, meta in plane.event_metadata.items()}
        wait_ids = {key for key, name in meta_names.items() if _is_input_wait(name)}
        tag_ids = event_tags(meta_names)
        py_function_ids = {key for key, name in meta_names.items() if is_py_function_event(name)}
        tf_op_ids = {key for key, name in meta_names.items() if is_tf_op_event(name)}
        role_ids = {key: role for key, name in meta_names.items() if (role := call_role(name))}
        totals: dict[int, list[int]] = {}  # metadata id -> [count, total ps, shortest ps]
        executor_totals: dict[int, list[int]] = {}  # metadata id -> [count, total ps]
        for line in plane.lines:
            if is_derived_line(line.id):
                continue
            self.threads += 1
            base_ps = (line.timestamp_ns - origin_ns) * 1000
            executor = (
                self.tagged.setdefault(XLA_CPU_TAG, ([], []))
                if thread_kind(line.name) in XLA_CPU_EXECUTOR_THREADS
                else None
            )
            pipeline_thread = on_tf_data_thread(line.name)
            py_functions = self.tagged.setdefault(TF_DATA_PY_FUNCTION_TAG, ([], [])) if pipeline_thread else None
            map_ops = self.tagged.setdefault(TF_DATA_MAP_OP_TAG, ([], [])) if pipeline_thread else None
            top_start = top_end = None
            line_busy = 0
            line_waits: dict[str, tuple[list[int], list[int]]]
            wakes: tuple[list[int], list[int]]
            first_block, line_waits, wakes, feeds = len(self.busy_start), {}, ([], []), False
            for event in line.events:
                meta_id = event.metadata_id
                start = base_ps + event.offset_ps
                duration = event.duration_ps
                end = start + duration
                entry = totals.get(meta_id)
                if entry is None:
                    totals[meta_id] = [1, duration, duration]
                else:
                    entry[0] += 1
                    entry[1] += duration
                    if duration < entry[2]:
                        entry[2] = duration
                if meta_id in wait_ids and duration > 0:
                    self.wait_start.append(start)
                    self.wait_end.append(end)
                tag = tag_ids.get(meta_id)
                if tag is not None and duration > 0 and not (pipeline_thread and step_thread_only(tag)):
                    spans = self.tagged.setdefault(tag, ([], []))
                    spans[0].append(start)
                    spans[1].append(end)
                    feeds = feeds or tag == "dispatch"
                role = role_ids.get(meta_id)
                if role is not None and duration > 0:
                    spans = line_waits.setdefault(role[1], ([], [])) if role[0] == "wait" else wakes
                    spans[0].append(start)
                    spans[1].append(end)
                if executor is not None and duration > 0:
                    executor[0].append(start)
                    executor[1].append(end)
                if executor is not None:
                    entry = executor_totals.setdefault(meta_id, [0, 0])
                    entry[0] += 1
                    entry[1] += duration
                if map_ops is not None and duration > 0 and meta_id in tf_op_ids:
                    map_ops[0].append(start)
                    map_ops[1].append(end)
                if py_functions is not None and duration > 0 and meta_id in py_function_ids:
                    py_functions[0].append(start)
                    py_functions[1].append(end)
                is_marker = False
                if event.stats:
                    found = {}
                    for stat in event.stats:
                        key = wanted.get(stat.metadata_id)
                        if key is not None:
                            found[key] = stat_value(stat, names)
                    if found:
                        launches = len(self.launch_corr)
                        is_marker = self._note_stats(meta_names.get(meta_id, ""), found, start, duration)
                        feeds = feeds or is_marker or len(self.launch_corr) > launches
                elif meta_names.get(meta_id) in _MARKER_NAMES:
                    is_marker = self._note_stats(meta_names[meta_id], {}, start, duration)
                    feeds = feeds or is_marker
                if is_marker or duration <= 0:
                    continue
                if top_end is None or start >= top_end:
                    if top_end is not None:
                        self.busy_start.append(top_start)
                        self.busy_end.append(top_end)
                        line_busy += top_end - top_start
                    top_start, top_end = start, end
                elif end > top_end:
                    top_end = end
            if top_end is not None:
                self.busy_start.append(top_start)
                self.busy_end.append(top_end)
                line_busy += top_end - top_start
            kind = self.thread_busy.setdefault(thread_kind(line.name), [0, 0])
            kind[0] += 1
            kind[1] += line_busy
            if line_waits or wakes[0]:
                self.thread_waits.append(
                    thread_waits(
                        thread_label(line.name, line.id),
                        feeds,
                        line_waits,
                        wakes,
                        (self.busy_start[first_block:], self.busy_end[first_block:]),
                    )
                )
        for meta_id, (count, total, shortest) in totals.items():
            name = meta_names.get(meta_id, "")
            entry = self.op_totals.setdefault(name, [0, 0])
            entry[0] += count
            entry[1] += total
            self._note_shortest(name, shortest)
        for meta_id, (count, total) in executor_totals.items():
            entry = self.executor_op_totals.setdefault(meta_names.get(meta_id, ""), [0, 0])
            entry[0] += count
            entry[1] += total

    def _note_shortest(self, name, duration):
        known = self.op_shortest.get(name)
        if known is None or duration < known:
            self.op_shortest[name] = duration

    def _note_stats(self, name, found, start, duration):
        """Records a launch and/or a step marker; True when the event is a step marker."""
        correlation = found.get("correlation_id")
        if isinstance(correlation, int) and 0 <= correlation < 2**63:
            device = found.get("device_id")
            self.launch_corr.append(correlation)
            self.launch_start.append(start)
            self.launch_dur.append(duration)
            self.launch_device.append(device if isinstance(device, int) and -(2**63) <= device < 2**63 else -1)
            return False
        batch = found.get("batch_size")
        if batch is not None and name.startswith(_ITERATOR_PREFIX):
            if isinstance(batch, int) and not isinstance(batch, bool) and batch > 0:
                sizes = self.batch_stages.setdefault(name, {})
                sizes[batch] = sizes.get(batch, 0) + 1
            return False
        step_num = found.get("step_num")
        has_step = isinstance(step_num, (int, float)) and not isinstance(step_num, bool) and math.isfinite(step_num)
        is_marker = name in _MARKER_NAMES or ("_r" in found and has_step) or (name == _KERAS3_MARKER and has_step)
        if not is_marker or duration <= 0:
            return False
        label = str(found.get("graph_type") or name) if name == "TraceContext" else name
        number = int(step_num) if has_step else None
        if number is None and isinstance(found.get("iter_num"), int):
            number = found["iter_num"]
        self.markers.append(
            StepMarker(
                name=f"{label} {number}" if number is not None else label,
                start_ps=start,
                end_ps=start + duration,
                source="host",
                step_num=number,
            )
        )
        return True

    def add_columns(self, columns: HostPlaneColumns) -> None:
        """Adds one plane summarized by model.host_columns (the fast path); keeps the order of planes."""
        self._flush()
        for field in _ARRAY_FIELDS:
            self.arrays[field].extend(getattr(columns, field))
        self.markers.extend(columns.markers)
        self.threads += columns.threads
        for tag, (starts, ends) in columns.tagged.items():
            spans = self.tagged.setdefault(tag, ([], []))
            spans[0].extend(starts)
            spans[1].extend(ends)
        self.thread_waits.extend(columns.thread_waits)
        for kind, (count, busy) in columns.thread_busy.items():
            entry = self.thread_busy.setdefault(kind, [0, 0])
            entry[0] += count
            entry[1] += busy
        for name, (count, total) in columns.op_totals.items():
            entry = self.op_totals.setdefault(name, [0, 0])
            entry[0] += count
            entry[1] += total
        for name, shortest in columns.op_shortest.items():
            self._note_shortest(name, shortest)
        for name, (count, total) in columns.executor_op_totals.items():
            entry = self.executor_op_totals.setdefault(name, [0, 0])
            entry[0] += count
            entry[1] += total
        for name, sizes in columns.batch_stages.items():
            mine = self.batch_stages.setdefault(name, {})
            for size, count in sizes.items():
                mine[size] = mine.get(size, 0) + count

    def _flush(self):
        """Moves the values appended one by one so far (reference path) into the array chunks."""
        for field, values in zip(
            _ARRAY_FIELDS,
            (
                self.launch_corr,
                self.launch_start,
                self.launch_dur,
                self.launch_device,
                self.wait_start,
                self.wait_end,
                self.busy_start,
                self.busy_end,
            ),
        ):
            if values:
                self.arrays[field].append(np.asarray(values, dtype=np.int64))
                values.clear()

    def _take(self, field):
        """One field's chunks as one array; the chunks are released as soon as they are joined."""
        chunks = [chunk for chunk in self.arrays.pop(field) if len(chunk)]
        return chunks[0] if len(chunks) == 1 else np.concatenate(chunks or [np.zeros(0, np.int64)])

    def result(self) -> tuple[HostActivity, tuple[StepMarker, ...]]:
        self._flush()
        corr = self._take("launch_corr")
        launch = [self._take(field) for field in ("launch_start", "launch_dur", "launch_device")]
        if (corr[1:] < corr[:-1]).any():
            order = np.argsort(corr, kind="stable")
            corr = corr[order]
            for index, column in enumerate(launch):
                launch[index] = column[order]
            del order
        launch_start, launch_dur, launch_device = launch
        input_waits = intervals.union(self._take("wait_start"), self._take("wait_end"))
        busy = intervals.union(self._take("busy_start"), self._take("busy_end"))
        activity = HostActivity(
            launch_correlation_id=corr,
            launch_start_ps=launch_start,
            launch_duration_ps=launch_dur,
            launch_device_id=launch_device,
            input_waits=input_waits,
            busy=busy,
            launch_busy=intervals.union(launch_start, launch_start + launch_dur),
            op_totals={name: tuple(v) for name, v in self.op_totals.items()},
            op_shortest_ps=dict(self.op_shortest),
            executor_op_totals={name: tuple(v) for name, v in self.executor_op_totals.items()},
            thread_count=self.threads,
            tagged={
                tag: intervals.union(starts, ends)
                for tag, (starts, ends) in sorted(self.tagged.items())
                if starts and tag != TF_DATA_MAP_OP_TAG  # kept as map_ops_in_flight only
            },
            py_function_calls=_calls(self.tagged.get(TF_DATA_PY_FUNCTION_TAG)),
            map_ops_in_flight=_in_flight(self.tagged.get(TF_DATA_MAP_OP_TAG)),
            thread_busy={kind: tuple(v) for kind, v in self.thread_busy.items()},
            thread_waits=tuple(self.thread_waits),
            batch_stages={name: tuple(sorted(sizes.items())) for name, sizes in sorted(self.batch_stages.items())},
        )
        return activity, outermost_markers(self.markers)


_ARRAY_FIELDS = (
    "launch_corr",
    "launch_start",
    "launch_dur",
    "launch_device",
    "wait_start",
    "wait_end",
    "busy_start",
    "busy_end",
)


def _calls(spans):
    """(starts, ends) ps arrays of tagged events one by one, sorted by start (not merged); () without them."""
    if not spans or not spans[0]:
        return ()
    starts, ends = np.asarray(spans[0], dtype=np.int64), np.asarray(spans[1], dtype=np.int64)
    order = np.argsort(starts, kind="stable")
    return starts[order], ends[order]


def _in_flight(spans):
    """Summed duration over covered time of tagged events (how many run at once while any runs); None without."""
    if not spans or not spans[0]:
        return None
    starts, ends = np.asarray(spans[0], dtype=np.int64), np.asarray(spans[1], dtype=np.int64)
    covered = intervals.union(starts, ends).total_ps
    return round(float((ends - starts).sum()) / covered, 3) if covered > 0 else None
