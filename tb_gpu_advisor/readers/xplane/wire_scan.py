"""Protobuf wire-format scanning without building messages: scalar loops for the few fields of headers and
lines, and a numpy tokenizer that reads the fields of many small messages (events, stats) at once.

The scanner accepts exactly what upb would decode the same way and raises `Unusual` for anything else
(groups, over-long varints, truncation, bad UTF-8, values that would not fit): the caller then falls back to
the reference decoding, which reproduces upb's behaviour, errors included.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

WIRE_VARINT, WIRE_FIXED64, WIRE_LEN, WIRE_FIXED32 = 0, 1, 2, 5
_U64 = 2**64
_EVENTS_TAG = 0x22  # field 4, length-delimited: XLine.events


class Unusual(Exception):
    """Bytes the fast scanner does not handle exactly like upb; decode them the reference way instead."""


def as_int64(value: int) -> int:
    """A varint's uint64 value read as the int64 protobuf stores."""
    return value - _U64 if value >= 2**63 else value


def read_varint(data: bytes, pos: int, end: int) -> tuple[int, int]:
    """(value, next position) of the varint at `pos` in bytes `data`."""
    result = shift = 0
    while True:
        if pos >= end:
            raise Unusual("truncated varint")
        byte = data[pos]
        pos += 1
        if shift == 63 and byte > 1:
            raise Unusual("varint above 64 bits")
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise Unusual("varint longer than 10 bytes")


def read_tag(data: bytes, pos: int, end: int) -> tuple[int, int, int]:
    """(field number, wire type, next position) of the tag at `pos`."""
    tag, pos = read_varint(data, pos, end)
    if tag >> 3 == 0 or tag >= 2**32:
        raise Unusual("invalid tag")
    return tag >> 3, tag & 7, pos


def field_extent(head: bytes) -> tuple[int, int, int, int]:
    """(field, wire type, value offset, field length) of the field `head` begins with, from its first bytes;
    the value of a LEN field is its payload, after the length."""
    field, wire, pos = read_tag(head, 0, len(head))
    if wire == WIRE_LEN:
        length, payload = read_varint(head, pos, len(head))
        return field, wire, payload, payload + length
    if wire == WIRE_VARINT:
        _, after = read_varint(head, pos, len(head))
        return field, wire, pos, after
    if wire in (WIRE_FIXED64, WIRE_FIXED32):
        return field, wire, pos, pos + (8 if wire == WIRE_FIXED64 else 4)
    raise Unusual("group or invalid wire type")


def read_field(data: bytes, pos: int, end: int) -> tuple[int, int, Any, int]:
    """(field, wire type, value, next position) of the field at `pos`; a LEN value is its payload (start, end)."""
    value: int | tuple[int, int]
    field, wire, pos = read_tag(data, pos, end)
    if wire == WIRE_VARINT:
        value, pos = read_varint(data, pos, end)
    elif wire == WIRE_LEN:
        length, pos = read_varint(data, pos, end)
        value = (pos, pos + length)
        pos += length
    elif wire == WIRE_FIXED64:
        value, pos = int.from_bytes(data[pos : pos + 8], "little"), pos + 8
    elif wire == WIRE_FIXED32:
        value, pos = int.from_bytes(data[pos : pos + 4], "little"), pos + 4
    else:
        raise Unusual("group or invalid wire type")
    if pos > end:
        raise Unusual("field runs past its message")
    return field, wire, value, pos


def utf8(data: bytes | np.ndarray, span: tuple[int, int]) -> str:
    try:
        return bytes(data[span[0] : span[1]]).decode("utf-8")
    except UnicodeDecodeError:
        raise Unusual("invalid UTF-8") from None


@dataclass(frozen=True, eq=False)
class LineScan:
    """One XLine: its header fields and where each event's bytes lie in the plane buffer."""

    id: int
    name: str
    timestamp_ns: int
    event_start: np.ndarray  # int64 offsets of each XEvent's payload
    event_end: np.ndarray


def scan_line(data: bytes, start: int, end: int) -> LineScan:
    """LineScan of the XLine in `data[start:end]`; last value wins for repeated singular fields, as in upb."""
    header: dict[int, Any] = {1: 0, 2: "", 3: 0}
    short = array("q")  # tag positions of events shorter than 128 bytes: the hot loop records only these
    long_starts, long_ends = array("q"), array("q")
    record = short.append
    pos = start
    try:
        while pos < end:
            size = data[pos + 1]
            if size < 0x80 and data[pos] == _EVENTS_TAG:
                record(pos)
                pos += 2 + size
                continue
            field, wire, value, pos = read_field(data, pos, end)
            if field == 4 and wire == WIRE_LEN:
                long_starts.append(value[0])
                long_ends.append(value[1])
            elif field in (1, 3) and wire == WIRE_VARINT:
                header[field] = as_int64(value)
            elif field in (2, 11) and wire == WIRE_LEN:
                text = utf8(data, value)
                if field == 2:
                    header[2] = text
    except IndexError:
        raise Unusual("truncated line") from None
    if pos != end:
        raise Unusual("event runs past its line")
    tags = np.frombuffer(short, dtype=np.int64) if len(short) else np.zeros(0, np.int64)
    starts = tags + 2
    ends = starts + np.frombuffer(data, dtype=np.uint8)[tags + 1]
    if len(long_starts):
        starts = np.concatenate([starts, np.frombuffer(long_starts, dtype=np.int64)])
        ends = np.concatenate([ends, np.frombuffer(long_ends, dtype=np.int64)])
        order = np.argsort(starts, kind="stable")
        starts, ends = starts[order], ends[order]
    return LineScan(id=header[1], name=header[2], timestamp_ns=header[3], event_start=starts, event_end=ends)


def tag_of(field: int, wire: int) -> np.uint64:
    """The tag value of a field number and wire type, as token_rounds yields it."""
    return np.uint64((field << 3) | wire)


def varints_at(buf: np.ndarray, pos: np.ndarray, limit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(uint64 values, next positions) of the varints starting at each of `pos`, none reaching `limit`."""
    if len(pos) and (pos >= limit).any():
        raise Unusual("truncated varint")
    byte = buf[pos]
    after = pos + 1
    high = byte >= 0x80
    if not high.any():  # one byte each (tags, small values): the byte is the value
        return byte.astype(np.uint64), after
    value = (byte & 0x7F).astype(np.uint64)
    more = np.flatnonzero(high)
    shift = 7
    while len(more):
        at = after[more]
        if shift > 63 or (at >= limit[more]).any():
            raise Unusual("truncated or over-long varint")
        byte = buf[at]
        if shift == 63 and (byte > 1).any():
            raise Unusual("varint above 64 bits")
        value[more] |= (byte & 0x7F).astype(np.uint64) << np.uint64(shift)
        after[more] = at + 1
        more = more[(byte & 0x80) != 0]
        shift += 7
    return value, after


def _fixed(buf, pos, width, limit):
    if len(pos) and (pos + width > limit).any():
        raise Unusual("truncated fixed field")
    raw = buf[pos[:, None] + np.arange(width)]
    return np.ascontiguousarray(raw).view(f"<u{width}").reshape(-1).astype(np.uint64), pos + width


def token_rounds(
    buf: np.ndarray, starts: np.ndarray, ends: np.ndarray
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """Reads the fields of the messages `buf[starts[i]:ends[i]]` in lock step with numpy.

    Yields one round per field position: (msg, tag, value, size) for every message's first field, then
    every second field, ... so a message's fields arrive in order, at most one per round. `msg` indexes the
    messages; `value` is a varint's value, a fixed field's bits, or a LEN payload's start (length in `size`).
    """
    msg = np.flatnonzero(starts < ends)
    pos, end = starts[msg], ends[msg]
    while len(msg):
        tag, pos = varints_at(buf, pos, end)
        if (tag >= np.uint64(2**32)).any() or (tag < np.uint64(8)).any():
            raise Unusual("invalid tag")
        wire = tag & np.uint64(7)
        first = int(wire[0])
        if (wire == wire[0]).all():  # every message's field of this round has the same wire type: no selections
            if first not in _WIRE_TYPES:
                raise Unusual("group or invalid wire type")
            value, size, after = _field_values(buf, first, pos, end)
        else:
            value = np.zeros(len(msg), dtype=np.uint64)
            size = np.zeros(len(msg), dtype=np.int64)
            after = np.empty(len(msg), dtype=np.int64)
            handled = 0
            for kind in _WIRE_TYPES:
                sel = np.flatnonzero(wire == np.uint64(kind))
                if len(sel):
                    handled += len(sel)
                    value[sel], size[sel], after[sel] = _field_values(buf, kind, pos[sel], end[sel])
            if handled != len(msg):
                raise Unusual("group or invalid wire type")
        if (after > end).any():
            raise Unusual("field runs past its message")
        yield msg, tag, value, size
        going = after < end
        msg, pos, end = msg[going], after[going], end[going]


_WIRE_TYPES = (WIRE_VARINT, WIRE_FIXED64, WIRE_LEN, WIRE_FIXED32)


def _field_values(buf, kind, pos, end):
    """(value, LEN size, next position) of fields of wire type `kind` whose values start at `pos`."""
    if kind == WIRE_VARINT:
        value, after = varints_at(buf, pos, end)
        return value, np.zeros(len(pos), dtype=np.int64), after
    if kind == WIRE_LEN:
        length, data_start = varints_at(buf, pos, end)
        if (length > np.uint64(2**40)).any():
            raise Unusual("length-delimited field runs past its message")
        size = length.astype(np.int64)
        return data_start.astype(np.uint64), size, data_start + size
    value, after = _fixed(buf, pos, 8 if kind == WIRE_FIXED64 else 4, end)
    return value, np.zeros(len(pos), dtype=np.int64), after


def check_utf8(buf: np.ndarray, starts: np.ndarray, sizes: np.ndarray) -> None:
    """Raises Unusual unless every `buf[start:start+size]` is valid UTF-8 (the check upb makes on strings)."""
    if not len(starts) or not sizes.any():
        return
    spans = np.repeat(starts - (np.cumsum(sizes) - sizes), sizes) + np.arange(int(sizes.sum()))
    high = buf[spans] >= 0x80
    if not high.any():
        return
    owner = np.repeat(np.arange(len(starts)), sizes)
    for index in np.unique(owner[high]):
        utf8(buf, (int(starts[index]), int(starts[index] + sizes[index])))
