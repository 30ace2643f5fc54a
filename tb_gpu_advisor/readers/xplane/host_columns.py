"""The fast host-plane summary: what `host._HostCollector.add_plane` adds for a decoded plane, from a
PlaneScan's event columns. Launches, input waits, per-name totals and busy blocks are vectorized; the few
events that may be step markers go through the reference `_note_stats`.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Iterable
from typing import Any

import numpy as np

from tb_gpu_advisor.model.host import (
    _MARKER_NAMES,
    XLA_CPU_EXECUTOR_THREADS,
    XLA_CPU_TAG,
    TF_DATA_MAP_OP_TAG,
    TF_DATA_PY_FUNCTION_TAG,
    _is_input_wait,
    event_tags,
    is_py_function_event,
    is_tf_op_event,
    on_tf_data_thread,
    step_thread_only,
    thread_kind,
)
from tb_gpu_advisor.model.waits import call_role, thread_label, thread_waits
from tb_gpu_advisor.readers.xplane.host import _HOST_STATS, _HostCollector
from tb_gpu_advisor.readers.xplane.plane_scan import ABSENT, PlaneScan, event_chunks, int64_values, python_value
from tb_gpu_advisor.readers.xplane.stats import ids_named, is_derived_line, stat_names
from tb_gpu_advisor.readers.xplane.unique_ids import unique_ids
from tb_gpu_advisor.readers.xplane.wire_scan import Unusual

_SAFE_PS = 2**61  # |base|, |offset| and |duration| below this: start and end fit in int64


@dataclass(frozen=True, eq=False)
class HostPlaneColumns:
    """One host plane's contribution to the HostActivity, in the reference's event order; each array field is
    a list of chunks, joined once by the collector."""

    launch_corr: list
    launch_start: list
    launch_dur: list
    launch_device: list
    wait_start: list
    wait_end: list
    busy_start: list
    busy_end: list
    markers: tuple
    op_totals: dict  # name -> (count, total ps), in first-event order
    op_shortest: dict  # name -> shortest event duration ps
    executor_op_totals: dict  # name -> (count, total ps) on XLA's CPU executor threads
    threads: int
    tagged: dict  # tag -> ([starts], [ends]) as Python ints, tags in first-event order
    thread_busy: dict  # thread kind -> (thread count, busy ps), kinds in line order
    thread_waits: tuple  # model.trace.ThreadWaits, in line order
    batch_stages: dict  # tf.data stage event name -> {batch_size: events}


class _Busy:
    """Top-level busy blocks of each thread line, carried across chunks: a block grows while events start
    before its end (events in file order, as the reference walks them)."""

    def __init__(self):
        self.starts, self.ends = [], []  # arrays of closed blocks
        self.block_lines = []  # (line, number of blocks) of each array of closed blocks
        self.line, self.open = None, None  # the open block (start, end) of line `line`
        self.line_busy = {}  # line index -> summed length of its blocks

    def add(self, line: int, starts: np.ndarray, ends: np.ndarray) -> None:
        if line != self.line:
            self.close()
            self.line = line
        running = np.maximum.accumulate(ends)
        carry = self.open
        if carry is not None:
            running = np.maximum(running, carry[1])
        new = np.empty(len(starts), dtype=bool)
        new[0] = carry is None or starts[0] >= carry[1]
        new[1:] = starts[1:] >= running[:-1]
        opens = np.flatnonzero(new)
        block_start = starts[opens]
        block_last = np.append(opens[1:] - 1, len(starts) - 1) if len(opens) else opens
        block_end = running[block_last.astype(np.int64)]
        if carry is not None:
            carried_end = carry[1] if new[0] else running[opens[0] - 1 if len(opens) else -1]
            block_start = np.concatenate([[carry[0]], block_start]).astype(np.int64)
            block_end = np.concatenate([[carried_end], block_end]).astype(np.int64)
        self.starts.append(block_start[:-1])
        self.ends.append(block_end[:-1])
        self.block_lines.append((self.line, len(block_start) - 1))
        self._count(int((block_end[:-1] - block_start[:-1]).sum()))
        self.open = (int(block_start[-1]), int(block_end[-1]))

    def close(self) -> None:
        if self.open is not None:
            self.starts.append(np.array([self.open[0]], dtype=np.int64))
            self.ends.append(np.array([self.open[1]], dtype=np.int64))
            self.block_lines.append((self.line, 1))
            self._count(self.open[1] - self.open[0])
        self.open = None

    def _count(self, length):
        self.line_busy[self.line] = self.line_busy.get(self.line, 0) + length

    def arrays(self) -> tuple[list[np.ndarray], list[np.ndarray]]:
        self.close()
        return self.starts, self.ends

    def of_lines(self, lines: Iterable[int]) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        """{line: (starts, ends)} of the closed blocks of the given lines (after `arrays()`)."""
        found: dict[int, tuple[list[np.ndarray], list[np.ndarray]]] = {line: ([], []) for line in lines}
        for (line, count), starts, ends in zip(self.block_lines, self.starts, self.ends):
            if line in found and count:
                found[line][0].append(starts)
                found[line][1].append(ends)
        return {
            line: (np.concatenate(s) if s else np.zeros(0, np.int64), np.concatenate(e) if e else np.zeros(0, np.int64))
            for line, (s, e) in found.items()
        }


def host_plane_columns(scan: PlaneScan, origin_ns: int) -> HostPlaneColumns:
    """HostPlaneColumns of a scanned `/host:CPU` (or `/host:CUPTI`) plane."""
    meta = scan.meta
    names = stat_names(meta)
    meta_names = {key: value.name for key, value in meta.event_metadata.items()}
    wait_ids = np.array(sorted(k for k, name in meta_names.items() if _is_input_wait(name)), dtype=np.int64)
    tag_of = event_tags(meta_names)
    tag_ids = np.array(sorted(tag_of), dtype=np.int64)
    step_thread_ids = np.array(sorted(k for k, tag in tag_of.items() if step_thread_only(tag)), dtype=np.int64)
    marker_ids = np.array(sorted(k for k, name in meta_names.items() if name in _MARKER_NAMES), dtype=np.int64)
    thread = np.array([not is_derived_line(line.id) for line in scan.lines], dtype=bool)
    executor = thread & np.array(
        [thread_kind(line.name) in XLA_CPU_EXECUTOR_THREADS for line in scan.lines], dtype=bool
    )
    tf_data = thread & np.array([on_tf_data_thread(line.name) for line in scan.lines], dtype=bool)
    py_function_ids = np.array(
        sorted(k for k, name in meta_names.items() if is_py_function_event(name)), dtype=np.int64
    )
    tf_op_ids = np.array(sorted(k for k, name in meta_names.items() if is_tf_op_event(name)), dtype=np.int64)
    role_of = {key: role for key, name in meta_names.items() if (role := call_role(name))}
    role_ids = np.array(sorted(role_of), dtype=np.int64)
    dispatch_ids = np.array(sorted(k for k, tag in tag_of.items() if tag == "dispatch"), dtype=np.int64)
    line_roles: dict[int, tuple[dict[str, tuple[list[int], list[int]]], tuple[list[int], list[int]]]]
    line_roles, feeding = {}, set()  # line -> ({kind: ([starts], [ends])}, wakes); lines that feed the device
    line_bases = []
    for line, is_thread in zip(scan.lines, thread):
        base = (line.timestamp_ns - origin_ns) * 1000
        if is_thread and abs(base) >= _SAFE_PS:
            raise Unusual("line base beyond int64 picoseconds")
        line_bases.append(base if is_thread else 0)
    bases = np.array(line_bases, dtype=np.int64)
    scratch = _HostCollector()  # receives the markers of the events that go through _note_stats
    busy = _Busy()
    totals: dict[int, list[int]]  # metadata id -> [count, total ps, shortest ps]
    executor_totals: dict[int, list[int]]
    tagged: dict[str, tuple[list[int], list[int]]]
    totals, executor_totals, parts, tagged = {}, {}, [], {}
    for chunk in event_chunks(scan, ids_named(names, _HOST_STATS)):
        rows = np.flatnonzero(thread[chunk.line])
        offset, duration = chunk.offset_ps[rows], chunk.duration_ps[rows]
        if len(rows) and max(np.abs(offset).max(), np.abs(duration).max()) >= _SAFE_PS:
            raise Unusual("event time beyond int64 picoseconds")
        start = bases[chunk.line[rows]] + offset
        end = start + duration
        meta_id = chunk.metadata_id[rows]
        _add_totals(totals, meta_id, duration)
        waiting = np.isin(meta_id, wait_ids) & (duration > 0)
        pipeline_op = tf_data[chunk.line[rows]] & np.isin(meta_id, step_thread_ids)
        _add_tagged(
            tagged,
            tag_of,
            np.flatnonzero(np.isin(meta_id, tag_ids) & (duration > 0) & ~pipeline_op),
            meta_id,
            start,
            end,
        )
        on_executor = executor[chunk.line[rows]]
        if on_executor.any():
            _add_totals(executor_totals, meta_id[on_executor], duration[on_executor])
        executing = on_executor & (duration > 0)
        if executing.any():
            spans = tagged.setdefault(XLA_CPU_TAG, ([], []))
            spans[0].extend(start[executing].tolist())
            spans[1].extend(end[executing].tolist())
        ops_in_tf_data = tf_data[chunk.line[rows]] & np.isin(meta_id, tf_op_ids) & (duration > 0)
        if ops_in_tf_data.any():
            spans = tagged.setdefault(TF_DATA_MAP_OP_TAG, ([], []))
            spans[0].extend(start[ops_in_tf_data].tolist())
            spans[1].extend(end[ops_in_tf_data].tolist())
        py_in_tf_data = tf_data[chunk.line[rows]] & np.isin(meta_id, py_function_ids) & (duration > 0)
        if py_in_tf_data.any():
            spans = tagged.setdefault(TF_DATA_PY_FUNCTION_TAG, ([], []))
            spans[0].extend(start[py_in_tf_data].tolist())
            spans[1].extend(end[py_in_tf_data].tolist())
        launch, marker = _launches_and_markers(
            scratch, chunk, rows, meta_id, start, duration, meta_names, marker_ids, scan.data, names
        )
        if len(role_ids):
            _add_roles(line_roles, role_of, role_ids, chunk.line[rows], meta_id, start, end, duration)
        feeds = marker | launch.pop("mask") | (np.isin(meta_id, dispatch_ids) & (duration > 0))
        if feeds.any():
            feeding.update(np.unique(chunk.line[rows[feeds]]).tolist())
        parts.append((launch, start[waiting], end[waiting]))
        counted = np.flatnonzero(~marker & (duration > 0))
        lines = chunk.line[rows[counted]]
        if len(counted):
            cuts = np.flatnonzero(np.diff(lines)) + 1
            for piece in np.split(np.arange(len(counted)), cuts):
                busy.add(int(lines[piece[0]]), start[counted[piece]], end[counted[piece]])
    busy_start, busy_end = busy.arrays()
    line_busy = busy.of_lines(line_roles)
    waits = tuple(
        thread_waits(
            thread_label(scan.lines[line].name, scan.lines[line].id),
            line in feeding,
            line_roles[line][0],
            line_roles[line][1],
            line_busy[line],
        )
        for line in sorted(line_roles)
    )
    thread_busy: dict[str, list[int]] = {}
    for index, line in enumerate(scan.lines):
        if thread[index]:
            entry = thread_busy.setdefault(thread_kind(line.name), [0, 0])
            entry[0] += 1
            entry[1] += busy.line_busy.get(index, 0)

    def chunks(index: int, field: str | None = None) -> list[Any]:
        return [part[0][field] if index == 0 else part[index] for part in parts]

    op_totals: dict[str, list[int]] = {}
    op_shortest: dict[str, int] = {}
    for key, (events, total, shortest) in totals.items():
        name = meta_names.get(key, "")
        entry = op_totals.setdefault(name, [0, 0])
        entry[0] += events
        entry[1] += total
        op_shortest[name] = min(op_shortest.get(name, shortest), shortest)
    executor_op_totals: dict[str, list[int]] = {}
    for key, (events, total, _) in executor_totals.items():
        entry = executor_op_totals.setdefault(meta_names.get(key, ""), [0, 0])
        entry[0] += events
        entry[1] += total
    return HostPlaneColumns(
        launch_corr=chunks(0, "corr"),
        launch_start=chunks(0, "start"),
        launch_dur=chunks(0, "dur"),
        launch_device=chunks(0, "device"),
        wait_start=chunks(1),
        wait_end=chunks(2),
        busy_start=busy_start,
        busy_end=busy_end,
        markers=tuple(scratch.markers),
        op_totals={k: tuple(v) for k, v in op_totals.items()},
        op_shortest=op_shortest,
        executor_op_totals={k: tuple(v) for k, v in executor_op_totals.items()},
        threads=int(thread.sum()),
        tagged=tagged,
        thread_busy={k: tuple(v) for k, v in thread_busy.items()},
        thread_waits=waits,
        batch_stages=scratch.batch_stages,
    )


def _add_roles(line_roles, role_of, role_ids, lines, meta_id, start, end, duration):
    """Appends the spans of waits and wakes (model.waits) per line, in event order."""
    for row in np.flatnonzero(np.isin(meta_id, role_ids) & (duration > 0)).tolist():
        role, kind = role_of[int(meta_id[row])]
        waits, wakes = line_roles.setdefault(int(lines[row]), ({}, ([], [])))
        spans = waits.setdefault(kind, ([], [])) if role == "wait" else wakes
        spans[0].append(int(start[row]))
        spans[1].append(int(end[row]))


def _add_tagged(tagged, tag_of, rows, meta_id, start, end):
    """Appends the spans of tagged events (rare: checkpoints, summaries, compiles), tags in first-event order."""
    for row in rows.tolist():
        spans = tagged.setdefault(tag_of[int(meta_id[row])], ([], []))
        spans[0].append(int(start[row]))
        spans[1].append(int(end[row]))


def _add_totals(totals, meta_id, duration):
    """Adds count and total duration per metadata id, new ids in order of their first event."""
    if not len(meta_id):
        return
    if int(np.abs(duration).max()) * len(duration) >= 2**63:
        raise Unusual("duration totals beyond int64")
    unique, first, inverse = unique_ids(meta_id)
    sums = np.zeros(len(unique), dtype=np.int64)
    np.add.at(sums, inverse, duration)
    counts = np.bincount(inverse, minlength=len(unique))
    shortest = np.full(len(unique), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(shortest, inverse, duration)
    for index in np.argsort(first, kind="stable"):
        entry = totals.setdefault(int(unique[index]), [0, 0, int(shortest[index])])
        entry[0] += int(counts[index])
        entry[1] += int(sums[index])
        entry[2] = min(entry[2], int(shortest[index]))


def _launches_and_markers(scratch, chunk, rows, meta_id, start, duration, meta_names, marker_ids, data, names):
    """(launch columns, marker mask): events with a non-negative integer correlation_id are launches; other
    events with host stats, and stat-less events named like a step, go through the reference `_note_stats`."""
    columns = {key: column.take(rows) for key, column in chunk.stats.items()}
    found = np.zeros(len(rows), dtype=bool)
    for column in columns.values():
        found |= column.kind != ABSENT
    launch = np.zeros(len(rows), dtype=bool)
    corr = np.zeros(len(rows), dtype=np.int64)
    if "correlation_id" in columns:
        is_int, corr = int64_values(columns["correlation_id"])
        launch = found & is_int & (corr >= 0)
    chosen = np.flatnonzero(launch)
    device = np.full(len(chosen), -1, dtype=np.int64)
    if "device_id" in columns:
        is_int, values = int64_values(columns["device_id"].take(chosen))
        device = np.where(is_int, values, -1)
    marker = np.zeros(len(rows), dtype=bool)
    stat_count = chunk.stat_count[rows]
    slow = np.flatnonzero((found & ~launch) | ((stat_count == 0) & np.isin(meta_id, marker_ids)))
    for row in slow.tolist():
        found_stats = {
            key: python_value(column, row, data, names) for key, column in columns.items() if column.kind[row] != ABSENT
        }
        name = meta_names.get(int(meta_id[row]), "")
        marker[row] = scratch._note_stats(name, found_stats, int(start[row]), int(duration[row]))
    return {
        "corr": corr[chosen],
        "start": start[chosen],
        "dur": duration[chosen],
        "device": device,
        "mask": launch,
    }, marker
