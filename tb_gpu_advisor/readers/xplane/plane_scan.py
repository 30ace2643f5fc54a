"""One plane's bytes as columns: metadata decoded with upb, lines located, events and chosen stats read in
numpy chunks. The fast path of the model builders; anything unusual raises wire_scan.Unusual.

Every event and stat of the plane is tokenized, even on lines no analysis reads, so that a plane the
reference decoder (upb, `XPlane.FromString`) would reject is never accepted here.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from google.protobuf.message import DecodeError

from tb_gpu_advisor.readers.xplane import schema
from tb_gpu_advisor.readers.xplane.unique_ids import unique_ids
from tb_gpu_advisor.readers.xplane.wire_scan import (
    WIRE_FIXED64,
    WIRE_LEN,
    WIRE_VARINT,
    Unusual,
    as_int64,
    check_utf8,
    read_field,
    scan_line,
    tag_of,
    token_rounds,
    utf8,
)

CHUNK_EVENTS = 1 << 15
# Stat kinds: 0 = no such stat, 1 = stat without a value, else the number of the value's oneof field.
ABSENT, NO_VALUE, DOUBLE, UINT64, INT64, STR, BYTES, REF = 0, 1, 2, 3, 4, 5, 6, 7
_VALUE_TAGS = tuple(
    (field, tag_of(field, wire))
    for field, wire in (
        (DOUBLE, WIRE_FIXED64),
        (UINT64, WIRE_VARINT),
        (INT64, WIRE_VARINT),
        (STR, WIRE_LEN),
        (BYTES, WIRE_LEN),
        (REF, WIRE_VARINT),
    )
)
_META, _OFFSET, _DURATION = tag_of(1, WIRE_VARINT), tag_of(2, WIRE_VARINT), tag_of(3, WIRE_VARINT)
_STATS, _OCCURRENCES = tag_of(4, WIRE_LEN), tag_of(5, WIRE_VARINT)
_FIELD_OF_TAG = {int(_META): "metadata_id", **{int(tag): field for field, tag in _VALUE_TAGS}}


@dataclass(frozen=True, eq=False)
class PlaneScan:
    """A plane's bytes, its non-line fields decoded (`meta`: an XPlane without lines) and its lines."""

    data: bytes
    meta: Any  # schema.XPlane
    lines: tuple  # wire_scan.LineScan, in file order
    line_spans: tuple  # (start, end) of each line's bytes


def scan_plane(data: bytes) -> PlaneScan:
    """PlaneScan of serialized XPlane bytes."""
    parts, spans = [], []
    pos, end = 0, len(data)
    while pos < end:
        field_start = pos
        field, wire, value, pos = read_field(data, pos, end)
        if field == 3 and wire == WIRE_LEN:
            spans.append(value)
        else:
            parts.append(data[field_start:pos])
    try:
        meta = schema.XPlane.FromString(b"".join(parts))
    except (DecodeError, RuntimeError, ValueError):
        raise Unusual("plane metadata does not decode") from None
    lines = tuple(scan_line(data, start, stop) for start, stop in spans)
    return PlaneScan(data=data, meta=meta, lines=lines, line_spans=tuple(spans))


@dataclass(frozen=True, eq=False)
class StatColumn:
    """The last stat of one key on each event: kind (see ABSENT...REF), raw value, LEN size, and how many."""

    kind: np.ndarray
    raw: np.ndarray
    size: np.ndarray
    count: np.ndarray

    def take(self, index: np.ndarray | slice) -> StatColumn:
        return StatColumn(self.kind[index], self.raw[index], self.size[index], self.count[index])


@dataclass(frozen=True, eq=False)
class EventChunk:
    """Consecutive events of a plane (lines in order, events in order within a line)."""

    line: np.ndarray  # index into PlaneScan.lines
    metadata_id: np.ndarray
    offset_ps: np.ndarray  # 0 for an event that holds num_occurrences instead
    duration_ps: np.ndarray
    stat_count: np.ndarray
    stats: dict  # key name -> StatColumn


def event_chunks(scan: PlaneScan, key_ids: Mapping[int, str], chunk: int = CHUNK_EVENTS) -> Iterator[EventChunk]:
    """EventChunks over every event of the plane; `key_ids` maps stat metadata ids to the key names wanted."""
    buf = np.frombuffer(scan.data, dtype=np.uint8)
    ids = np.array(sorted(key_ids), dtype=np.int64)
    keys = sorted(set(key_ids.values()))
    key_index = np.array([keys.index(key_ids[i]) for i in ids], dtype=np.int64)
    pieces, held = [], 0
    for index, line in enumerate(scan.lines):
        for first in range(0, len(line.event_start), chunk):
            starts = line.event_start[first : first + chunk]
            pieces.append((index, starts, line.event_end[first : first + chunk]))
            held += len(starts)
            if held >= chunk:
                yield _chunk(buf, pieces, ids, keys, key_index)
                pieces, held = [], 0
    if held:
        yield _chunk(buf, pieces, ids, keys, key_index)


def _chunk(buf, pieces, ids, keys, key_index):
    starts = np.concatenate([piece[1] for piece in pieces])
    ends = np.concatenate([piece[2] for piece in pieces])
    line = np.repeat(np.array([piece[0] for piece in pieces], dtype=np.int64), [len(p[1]) for p in pieces])
    count = len(starts)
    metadata_id, duration, data_value = (np.zeros(count, dtype=np.int64) for _ in range(3))
    is_offset = np.zeros(count, dtype=bool)
    owners, stat_starts, stat_sizes = [], [], []
    for msg, tag, value, size in token_rounds(buf, starts, ends):
        signed = value.view(np.int64)
        if (tag == tag[0]).all():  # one field for every message of the round: no selections
            wanted = int(tag[0])
            if wanted == _STATS:
                owners.append(msg)
                stat_starts.append(value.astype(np.int64))
                stat_sizes.append(size)
            elif wanted == _META:
                metadata_id[msg] = signed
            elif wanted == _DURATION:
                duration[msg] = signed
            elif wanted == _OFFSET:
                data_value[msg] = signed
                is_offset[msg] = True
            elif wanted == _OCCURRENCES:
                is_offset[msg] = False
            continue
        for target, wanted in ((metadata_id, _META), (duration, _DURATION), (data_value, _OFFSET)):
            sel = tag == wanted
            target[msg[sel]] = signed[sel]
        is_offset[msg[tag == _OFFSET]] = True
        is_offset[msg[tag == _OCCURRENCES]] = False  # the data oneof: the later of the two wins
        sel = tag == _STATS
        owners.append(msg[sel])
        stat_starts.append(value[sel].astype(np.int64))
        stat_sizes.append(size[sel])
    owner = np.concatenate(owners) if owners else np.zeros(0, dtype=np.int64)
    stat_start = np.concatenate(stat_starts) if owners else owner
    stat_end = stat_start + (np.concatenate(stat_sizes) if owners else owner)
    stats = _stat_values(buf, stat_start, stat_end)
    stat_key = np.full(len(owner), -1, dtype=np.int64)
    if len(ids) and len(owner):
        position = np.minimum(np.searchsorted(ids, stats[0]), len(ids) - 1)
        stat_key = np.where(ids[position] == stats[0], key_index[position], -1)
    chosen = np.flatnonzero(stat_key >= 0)
    slot = stat_key[chosen] * count + owner[chosen]  # (key, event) of each wanted stat
    last = np.full(len(keys) * count, -1, dtype=np.int64)
    np.maximum.at(last, slot, chosen)  # an event's stats come in its field order: the last one wins
    counts = np.bincount(slot, minlength=len(keys) * count)
    columns = {}
    for k, key in enumerate(keys):
        last_k = last[k * count : (k + 1) * count]
        found = np.flatnonzero(last_k >= 0)
        kind = np.zeros(count, dtype=np.int8)
        raw = np.zeros(count, dtype=np.uint64)
        size = np.zeros(count, dtype=np.int64)
        kind[found], raw[found], size[found] = (column[last_k[found]] for column in stats[1:])
        columns[key] = StatColumn(kind=kind, raw=raw, size=size, count=counts[k * count : (k + 1) * count].copy())
    return EventChunk(
        line=line,
        metadata_id=metadata_id,
        offset_ps=np.where(is_offset, data_value, 0),
        duration_ps=duration,
        stat_count=np.bincount(owner, minlength=count),
        stats=columns,
    )


def _stat_values(buf, starts, ends):
    """(metadata id, value kind, raw value, LEN size) of each XStat; the value oneof: the last one wins."""
    count = len(starts)
    metadata_id = np.zeros(count, dtype=np.int64)
    kind = np.full(count, NO_VALUE, dtype=np.int8)
    raw = np.zeros(count, dtype=np.uint64)
    size = np.zeros(count, dtype=np.int64)
    for msg, tag, value, length in token_rounds(buf, starts, ends):
        if (tag == tag[0]).all():  # one field for every stat of the round: no selections
            field = _FIELD_OF_TAG.get(int(tag[0]))
            if field == "metadata_id":
                metadata_id[msg] = value.view(np.int64)
            elif field is not None:
                kind[msg], raw[msg], size[msg] = field, value, length
                if field == STR:
                    check_utf8(buf, value.astype(np.int64), length)
            continue
        sel = tag == _META
        metadata_id[msg[sel]] = value[sel].view(np.int64)
        for field, wanted in _VALUE_TAGS:
            sel = np.flatnonzero(tag == wanted)
            if len(sel):
                rows = msg[sel]
                kind[rows], raw[rows], size[rows] = field, value[sel], length[sel]
                if field == STR:
                    check_utf8(buf, value[sel].astype(np.int64), length[sel])
    return metadata_id, kind, raw, size


def python_value(column: StatColumn, row: int, data: bytes, names: Mapping[int, str]) -> Any:
    """The Python value `xplane.stats.stat_value` gives for row `row` of a StatColumn (None when absent)."""
    kind, raw, size = int(column.kind[row]), int(column.raw[row]), int(column.size[row])
    if kind in (ABSENT, NO_VALUE):
        return None
    if kind == DOUBLE:
        return struct.unpack("<d", raw.to_bytes(8, "little"))[0]
    if kind == UINT64:
        return raw
    if kind == INT64:
        return as_int64(raw)
    if kind == STR:
        return utf8(data, (raw, raw + size))
    if kind == BYTES:
        return bytes(data[raw : raw + size])
    return names.get(raw, "")


def int64_values(column: StatColumn, rows: np.ndarray | slice = slice(None)) -> tuple[np.ndarray, np.ndarray]:
    """(is an int, int64 value) of a StatColumn's rows; Unusual for a uint64 that int64 cannot hold."""
    kind, raw = column.kind[rows], column.raw[rows]
    is_int = (kind == UINT64) | (kind == INT64)
    if ((kind == UINT64) & (raw >= np.uint64(2**63))).any():
        raise Unusual("uint64 stat above the int64 range")
    return is_int, np.where(is_int, raw.view(np.int64), 0)


class TextTable:
    """Interned text values of one plane's str and ref stats; id 0 is None (a stat without a value)."""

    def __init__(self, data, names):
        self.data, self.names = data, names
        self.values, self._index = [None], {None: 0}

    def _id(self, text):
        found = self._index.get(text)
        if found is None:
            found = self._index[text] = len(self.values)
            self.values.append(text)
        return found

    def ids(self, column: StatColumn) -> np.ndarray:
        """Text id per row of a StatColumn: -1 where absent; Unusual for non-text values."""
        kind = column.kind
        out = np.full(len(kind), -1, dtype=np.int64)
        out[kind == NO_VALUE] = 0
        refs = np.flatnonzero(kind == REF)
        if len(refs):
            unique, _, inverse = unique_ids(column.raw[refs])
            out[refs] = np.array([self._id(self.names.get(int(r), "")) for r in unique], np.int64)[inverse]
        for row in np.flatnonzero(kind == STR):
            start = int(column.raw[row])
            out[row] = self._id(utf8(self.data, (start, start + int(column.size[row]))))
        if np.isin(kind, (DOUBLE, UINT64, INT64, BYTES)).any():
            raise Unusual("text stat holds a number or bytes")
        return out
