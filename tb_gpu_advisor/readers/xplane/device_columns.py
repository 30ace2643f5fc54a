"""The fast GpuDevice builder: the same result as `device.build_gpu_device`, from a PlaneScan's event columns.

Every table (names, configs, op names, copies) is filled in the order the per-event reference fills it: each
chunk's new values are interned in the order of their first event. Cases the reference treats in ways not
worth vectorizing (a numeric tf_op, two kernel_details on one kernel, ...) raise Unusual.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
from google.protobuf.message import DecodeError

from tb_gpu_advisor.constants import STEPS_LINE_ID
from tb_gpu_advisor.model.copies import reclassified_copy
from tb_gpu_advisor.model.details import parse_copy_details, parse_kernel_details
from tb_gpu_advisor.model.device_events import classify_event_name
from tb_gpu_advisor.model.trace import ActivityKind, DeviceActivity, GpuDevice
from tb_gpu_advisor.readers.xplane import schema
from tb_gpu_advisor.readers.xplane.device import (
    _DEVICE_STATS,
    _SKIPPED_LINE_NAMES,
    _STEP_STATS,
    _Interner,
    _step_markers,
    capabilities_from_stats,
    op_name_from_tf_op,
    tf_signature,
)
from tb_gpu_advisor.readers.xplane.plane_scan import (
    DOUBLE,
    INT64,
    UINT64,
    PlaneScan,
    TextTable,
    event_chunks,
    int64_values,
)
from tb_gpu_advisor.readers.xplane.stats import ids_named, is_derived_line, plane_stats, stat_names
from tb_gpu_advisor.readers.xplane.unique_ids import unique_ids, unique_rows
from tb_gpu_advisor.readers.xplane.wire_scan import Unusual

_NO_KIND = -1
_SAFE_PS = 2**62  # line bases and offsets below this cannot overflow int64 when added


class _Tables:
    """The interned tables of one device and the caches that map chunk keys to their ids."""

    def __init__(self, scan, names):
        self.meta = scan.meta
        self.texts = TextTable(scan.data, names)
        self.names, self.configs, self.ops, self.copies = _Interner(), _Interner(), _Interner(), _Interner()
        self.signatures = _Interner()
        self.signature_of_key = {}  # (tf_op, annotation, shape) text ids -> signature or None
        self.event_kinds = {}  # metadata id -> (kind or _NO_KIND, direction, name id)
        self.config_of_text, self.config_with_occupancy, self.op_of_key, self.copy_of_text = {}, {}, {}, {}
        self.parsed = {}  # text id -> KernelConfig parsed from it
        self.copy_direction_of_text = {}  # memcpy_details text id -> direction of a kernel-named copy

    def kinds(self, metadata_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(kind, direction, name id) arrays for the events, interning names in first-event order."""
        unique, first, inverse = unique_ids(metadata_ids)
        for index in np.argsort(first, kind="stable"):
            meta_id = int(unique[index])
            if meta_id not in self.event_kinds:
                found = self.meta.event_metadata[meta_id].name if meta_id in self.meta.event_metadata else ""
                kind, direction = classify_event_name(found)
                self.event_kinds[meta_id] = (
                    _NO_KIND if kind is None else int(kind),
                    int(direction),
                    self.names.get(found),
                )
        table = np.array([self.event_kinds[int(m)] for m in unique], dtype=np.int64).reshape(-1, 3)
        return table[inverse, 0], table[inverse, 1], table[inverse, 2]


def _intern_in_order(keys, positions, cache, value_of, interner):
    """Interns value_of(key) for keys not yet cached, in order of their first position; returns ids per row."""
    if not len(keys):
        return np.zeros(0, dtype=np.int64)
    unique, first, inverse = unique_rows(keys) if keys.ndim > 1 else unique_ids(keys)
    inverse = inverse.reshape(-1)
    order = np.argsort(positions[first], kind="stable")
    for index in order:
        key = tuple(int(v) for v in np.atleast_1d(unique[index]))
        if key not in cache:
            cache[key] = interner.get(value_of(key))
    return np.array([cache[tuple(int(v) for v in np.atleast_1d(k))] for k in unique], dtype=np.int64)[inverse]


def _configs(tables, text_ids, occupancy_ok, occupancy, positions):
    """Config id per kernel: its parsed kernel_details, or that config with the occupancy stat if it has none.

    The reference interns parse(text) for event e, then the occupancy variant; new values of this chunk are
    interned in that order (position 2e for the text, 2e + 1 for the variant).
    """
    texts, parsed = tables.texts.values, tables.parsed
    unique, first, inverse = unique_ids(text_ids)
    for text_id in unique.tolist():
        if text_id not in parsed:
            parsed[text_id] = parse_kernel_details(texts[text_id] or "")
    lacking = np.array([parsed[t].occupancy_pct is None for t in unique.tolist()], dtype=bool)[inverse]
    variant = np.flatnonzero(occupancy_ok & lacking)
    pending = [
        (2 * int(positions[first[i]]), 0, t) for i, t in enumerate(unique.tolist()) if t not in tables.config_of_text
    ]
    keys = np.stack([text_ids[variant], occupancy[variant].view(np.int64)], axis=1)
    unique_v, first_v, inverse_v = unique_rows(keys)
    variants = [(int(t), int(bits)) for t, bits in unique_v]
    pending += [
        (2 * int(positions[variant[first_v[i]]]) + 1, 1, key)
        for i, key in enumerate(variants)
        if key not in tables.config_with_occupancy
    ]
    for _, part, key in sorted(pending):
        if part == 0:
            tables.config_of_text[key] = tables.configs.get(parsed[key])
        else:
            value = float(np.array([key[1]], dtype=np.int64).view(np.float64)[0])
            tables.config_with_occupancy[key] = tables.configs.get(replace(parsed[key[0]], occupancy_pct=value))
    ids = np.array([tables.config_of_text[t] for t in unique.tolist()], dtype=np.int64)[inverse]
    if len(variant):
        ids[variant] = np.array([tables.config_with_occupancy[k] for k in variants], dtype=np.int64)[
            inverse_v.reshape(-1)
        ]
    return ids


def build_gpu_device_from_scan(scan: PlaneScan, ordinal: int, origin_ns: int) -> GpuDevice:
    """GpuDevice of a scanned GPU plane; the same value `device.build_gpu_device` gives for the decoded plane."""
    meta = scan.meta
    names = stat_names(meta)
    wanted = ids_named(names, _DEVICE_STATS)
    tables = _Tables(scan, names)
    markers, line_works, line_bases = [], [], []
    for (start, end), line in zip(scan.line_spans, scan.lines):
        base = (line.timestamp_ns - origin_ns) * 1000
        line_bases.append(base if abs(base) < _SAFE_PS else 0)
        if line.id == STEPS_LINE_ID or (is_derived_line(line.id) and line.name == "Steps"):
            try:
                decoded = schema.XLine.FromString(scan.data[start:end])
            except (DecodeError, RuntimeError, ValueError):
                raise Unusual("Steps line does not decode") from None
            markers.extend(_step_markers(meta, decoded, ids_named(names, _STEP_STATS), names, origin_ns))
            line_works.append(False)
        else:
            line_works.append(not (is_derived_line(line.id) or line.name in _SKIPPED_LINE_NAMES))
            if line_works[-1] and abs(base) >= _SAFE_PS:
                raise Unusual("line base beyond int64 picoseconds")
    work_line, bases = np.array(line_works, dtype=bool), np.array(line_bases, dtype=np.int64)
    stream_of = np.array([line.id for line in scan.lines], dtype=np.int64)
    columns = []
    position = 0  # index of the chunk's first work event among all work events
    for chunk in event_chunks(scan, wanted):
        kept = np.flatnonzero(work_line[chunk.line] & (chunk.duration_ps > 0))
        kind, direction, name_id = tables.kinds(chunk.metadata_id[kept])
        work = kind != _NO_KIND
        rows, kind, direction, name_id = kept[work], kind[work], direction[work], name_id[work]
        columns.append(_work_columns(tables, chunk, rows, kind, direction, name_id, bases, stream_of, position))
        position += len(rows)
    activity = _activity(columns, tables)
    return GpuDevice(
        ordinal=ordinal,
        name=meta.name,
        capabilities=capabilities_from_stats(plane_stats(meta, names), activity.names),
        activity=activity,
        step_markers=tuple(sorted(markers, key=lambda m: m.start_ps)),
    )


def _text_column(tables, chunk, key, rows):
    return tables.texts.ids(chunk.stats[key].take(rows)) if key in chunk.stats else np.full(len(rows), -1)


def _copies_by_details(tables, chunk, rows, kind, direction):
    """kind and direction with every kernel that carries `memcpy_details` turned into a copy (XProf's rule), and
    every other one with `memset_details` into a memset."""
    kernels = np.flatnonzero(kind == ActivityKind.KERNEL)
    text = _text_column(tables, chunk, "memcpy_details", rows[kernels])
    turned = np.flatnonzero(text >= 0)
    fills = kernels[(text < 0) & (_text_column(tables, chunk, "memset_details", rows[kernels]) >= 0)]
    if not len(turned) and not len(fills):
        return kind, direction
    kind, direction = kind.copy(), direction.copy()
    kind[fills] = ActivityKind.MEMSET
    values = tables.texts.values
    for index in turned.tolist():
        found = tables.copy_direction_of_text.get(int(text[index]))
        if found is None:
            found = tables.copy_direction_of_text[int(text[index])] = int(
                reclassified_copy(ActivityKind.KERNEL, None, values[int(text[index])])[1]
            )
        kind[kernels[index]] = ActivityKind.MEMCPY
        direction[kernels[index]] = found
    return kind, direction


def _work_columns(tables, chunk, rows, kind, direction, name_id, bases, stream_of, position):
    kind, direction = _copies_by_details(tables, chunk, rows, kind, direction)
    offsets = chunk.offset_ps[rows]
    if len(offsets) and np.abs(offsets).max() >= _SAFE_PS:
        raise Unusual("offset beyond int64 picoseconds")
    line = chunk.line[rows]
    positions = position + np.arange(len(rows), dtype=np.int64)
    correlation = np.full(len(rows), -1, dtype=np.int64)
    if "correlation_id" in chunk.stats:
        column = chunk.stats["correlation_id"].take(rows)
        if (column.kind == DOUBLE).any():
            raise Unusual("floating-point correlation id")
        is_int, values = int64_values(column)
        correlation = np.where(is_int, values, -1)
    program = np.full(len(rows), -1, dtype=np.int64)
    if "program_id" in chunk.stats:
        is_int, values = int64_values(chunk.stats["program_id"].take(rows))
        program = np.where(is_int, values, -1)
    config_id = np.full(len(rows), -1, dtype=np.int64)
    kernels = np.flatnonzero(kind == ActivityKind.KERNEL)
    kernel_text = _text_column(tables, chunk, "kernel_details", rows[kernels])
    with_config = np.flatnonzero(kernel_text >= 0)
    if len(with_config):
        if (chunk.stats["kernel_details"].count[rows[kernels[with_config]]] > 1).any():
            raise Unusual("several kernel_details on one kernel")
        occupancy_ok, occupancy = _occupancy(chunk, rows[kernels[with_config]])
        config_id[kernels[with_config]] = _configs(
            tables, kernel_text[with_config], occupancy_ok, occupancy, positions[kernels[with_config]]
        )
    copy_id = np.full(len(rows), -1, dtype=np.int64)
    copies = np.flatnonzero(kind == ActivityKind.MEMCPY)
    copy_text = _text_column(tables, chunk, "memcpy_details", rows[copies])
    with_copy = np.flatnonzero(copy_text >= 0)
    if len(with_copy):
        if (chunk.stats["memcpy_details"].count[rows[copies[with_copy]]] > 1).any():
            raise Unusual("several memcpy_details on one copy")
        texts = tables.texts.values
        copy_id[copies[with_copy]] = _intern_in_order(
            copy_text[with_copy],
            positions[copies[with_copy]],
            tables.copy_of_text,
            lambda key: parse_copy_details(texts[key[0]] or ""),
            tables.copies,
        )
    return {
        "start": bases[line] + offsets,
        "duration": chunk.duration_ps[rows],
        "kind": kind,
        "stream": stream_of[line],
        "correlation": correlation,
        "name_id": name_id,
        "config_id": config_id,
        "op_id": _op_ids(tables, chunk, rows, positions),
        "direction": direction,
        "copy_id": copy_id,
        "program_id": program,
        "tf_signature_id": _signature_ids(tables, chunk, rows, kind, positions),
    }


def _signature_ids(tables, chunk, rows, kind, positions):
    """tf signature id per event (kernels with a `shape`), interned in the reference's first-event order."""
    out = np.full(len(rows), -1, dtype=np.int64)
    kernels = np.flatnonzero(kind == ActivityKind.KERNEL)
    shape = _text_column(tables, chunk, "shape", rows[kernels])
    shaped = kernels[shape > 0]
    if not len(shaped):
        return out
    keys = np.stack(
        [
            _text_column(tables, chunk, "tf_op", rows[shaped]),
            _text_column(tables, chunk, "annotation", rows[shaped]),
            shape[shape > 0],
        ],
        axis=1,
    )
    unique, first, inverse = unique_rows(keys)
    texts = tables.texts.values
    signatures = []
    for key in unique.tolist():
        key = tuple(key)
        if key not in tables.signature_of_key:
            tables.signature_of_key[key] = tf_signature(*(texts[i] if i >= 0 else None for i in key))
        signatures.append(tables.signature_of_key[key])
    for index in np.argsort(positions[shaped][first], kind="stable").tolist():
        if signatures[index] is not None:
            tables.signatures.get(signatures[index])
    ids = np.array([tables.signatures.index[s] if s is not None else -1 for s in signatures], dtype=np.int64)
    out[shaped] = ids[inverse.reshape(-1)]
    return out


def _occupancy(chunk, rows):
    """(usable, value) of the theoretical_occupancy_pct stat: a finite number, as float, like the reference
    (analysis.plausibility nulls shares outside 0-100 with a note)."""
    if "theoretical_occupancy_pct" not in chunk.stats:
        return np.zeros(len(rows), dtype=bool), np.zeros(len(rows))
    column = chunk.stats["theoretical_occupancy_pct"].take(rows)
    raw = column.raw
    value = np.where(
        column.kind == DOUBLE,
        raw.view(np.float64),
        np.where(column.kind == INT64, raw.view(np.int64).astype(np.float64), raw.astype(np.float64)),
    )
    with np.errstate(invalid="ignore"):
        share = np.isfinite(value)
    return np.isin(column.kind, (DOUBLE, UINT64, INT64)) & share, value


def _op_ids(tables, chunk, rows, positions):
    """op id per event: for XLA kernels the non-empty hlo_op (the instruction the roofline joins on); otherwise
    the name part of a non-empty tf_op."""
    hlo = _text_column(tables, chunk, "hlo_op", rows)
    tf = _text_column(tables, chunk, "tf_op", rows)
    truthy = np.array([bool(text) for text in tables.texts.values], dtype=bool)
    use_hlo = (hlo >= 0) & truthy[np.maximum(hlo, 0)]
    use_tf = ~use_hlo & (tf >= 0) & truthy[np.maximum(tf, 0)]
    keys = np.where(use_hlo, 3 * hlo, 3 * tf + 1)
    chosen = np.flatnonzero(use_hlo | use_tf)
    texts = tables.texts.values

    def op_name(key: Any) -> str:
        text = texts[key[0] // 3]
        return op_name_from_tf_op(str(text)) if key[0] % 3 == 1 else str(text)

    op_id = np.full(len(rows), -1, dtype=np.int64)
    op_id[chosen] = _intern_in_order(keys[chosen], positions[chosen], tables.op_of_key, op_name, tables.ops)
    return op_id


def _activity(columns, tables):
    def joined(key: str, dtype: type) -> np.ndarray:
        return np.concatenate([c[key] for c in columns]).astype(dtype) if columns else np.zeros(0, dtype)

    start = joined("start", np.int64)
    order = np.argsort(start, kind="stable")
    return DeviceActivity(
        start_ps=start[order],
        duration_ps=joined("duration", np.int64)[order],
        kind=joined("kind", np.int8)[order],
        stream_id=joined("stream", np.int64)[order],
        correlation_id=joined("correlation", np.int64)[order],
        name_id=joined("name_id", np.int32)[order],
        config_id=joined("config_id", np.int32)[order],
        op_id=joined("op_id", np.int32)[order],
        copy_direction=joined("direction", np.int8)[order],
        copy_id=joined("copy_id", np.int32)[order],
        names=tuple(tables.names.values),
        configs=tuple(tables.configs.values),
        op_names=tuple(tables.ops.values),
        copies=tuple(tables.copies.values),
        program_id=joined("program_id", np.int64)[order],
        tf_signature_id=joined("tf_signature_id", np.int32)[order],
        tf_signatures=tuple(tables.signatures.values),
    )
