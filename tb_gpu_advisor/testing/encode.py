"""Vectorized protobuf wire encoding of many rows at once (varints, fields, nested messages) for big traces.

A `Rows` value is a column of byte strings held as one flat uint8 array plus a length per row. Fields are
built for every row at once (`varint_field`, `message_field`), concatenated row by row (`join_rows`) and
grouped (`group_rows`), so millions of XEvents serialize in a few numpy passes instead of a Python loop.
"""

from dataclasses import dataclass

import numpy as np

_WIRE_VARINT, _WIRE_FIXED64, _WIRE_LEN = 0, 1, 2


@dataclass(frozen=True, eq=False)
class Rows:
    """Row i is `flat[offsets[i]:offsets[i] + lengths[i]]`; rows are stored back to back."""

    flat: np.ndarray  # uint8
    lengths: np.ndarray  # int64

    def __len__(self):
        return len(self.lengths)

    def tobytes(self):
        """All rows back to back, which is how a repeated field serializes."""
        return self.flat.tobytes()


def _as_uint64(values):
    values = np.asarray(values)
    if values.dtype.kind == "f":
        raise TypeError("varints need integers")
    return (
        values.astype(np.int64, copy=False).view(np.uint64)
        if values.dtype.kind == "i"
        else values.astype(np.uint64, copy=False)
    )


def varint_sizes(values):
    """Bytes each value takes as a varint (negative int64 values take 10, as protobuf writes them)."""
    remaining = _as_uint64(values) >> np.uint64(7)
    sizes = np.ones(len(remaining), dtype=np.int64)
    while True:
        more = remaining > 0
        if not more.any():
            return sizes
        sizes += more
        remaining = remaining >> np.uint64(7)


def varints(values):
    """Rows holding each value as a varint."""
    values = _as_uint64(values)
    sizes = varint_sizes(values)
    offsets = np.cumsum(sizes) - sizes
    flat = np.empty(int(sizes.sum()), dtype=np.uint8)
    for k in range(int(sizes.max()) if len(sizes) else 0):
        here = sizes > k
        chunk = (values[here] >> np.uint64(7 * k)) & np.uint64(0x7F)
        continues = (sizes[here] > k + 1).astype(np.uint64) << np.uint64(7)
        flat[offsets[here] + k] = (chunk | continues).astype(np.uint8)
    return Rows(flat, sizes)


def constant(data, count):
    """`count` rows each holding the same bytes."""
    data = np.frombuffer(bytes(data), dtype=np.uint8)
    return Rows(np.tile(data, count), np.full(count, len(data), dtype=np.int64))


def strings(values):
    """Rows from a sequence of bytes or str."""
    encoded = [v.encode() if isinstance(v, str) else bytes(v) for v in values]
    flat = np.frombuffer(b"".join(encoded), dtype=np.uint8).copy()
    return Rows(flat, np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)))


def take(rows, index):
    """Rows picked (or repeated) by index."""
    index = np.asarray(index, dtype=np.int64)
    offsets = np.cumsum(rows.lengths) - rows.lengths
    lengths = rows.lengths[index]
    return Rows(rows.flat[_ranges(offsets[index], lengths)], lengths)


def _ranges(starts, lengths):
    """Concatenation of arange(start, start + length) for each row."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    out_starts = np.cumsum(lengths) - lengths
    return np.repeat(starts - out_starts, lengths) + np.arange(total, dtype=np.int64)


def join_rows(*parts):
    """Row i of the result is row i of each part, concatenated in order."""
    count = len(parts[0])
    lengths = np.zeros(count, dtype=np.int64)
    for part in parts:
        lengths += part.lengths
    out_offsets = np.cumsum(lengths) - lengths
    flat = np.empty(int(lengths.sum()), dtype=np.uint8)
    within = np.zeros(count, dtype=np.int64)
    for part in parts:
        flat[_ranges(out_offsets + within, part.lengths)] = part.flat
        within += part.lengths
    return Rows(flat, lengths)


def where(present, rows):
    """Keeps row i where `present[i]`, else an empty row (an absent optional field)."""
    present = np.asarray(present, dtype=bool)
    if present.all():
        return rows
    offsets = np.cumsum(rows.lengths) - rows.lengths
    lengths = np.where(present, rows.lengths, 0)
    return Rows(rows.flat[_ranges(offsets, lengths)], lengths)


def tag(field_number, wire_type):
    return bytes(varints([(field_number << 3) | wire_type]).flat)


def varint_field(field_number, values, present=None):
    """An int64/uint64 field in every row (two's complement for negatives), optionally absent in some."""
    rows = join_rows(constant(tag(field_number, _WIRE_VARINT), len(values)), varints(values))
    return rows if present is None else where(present, rows)


def double_field(field_number, values):
    """A double field in every row."""
    payload = np.asarray(values, dtype="<f8").view(np.uint8)
    return join_rows(
        constant(tag(field_number, _WIRE_FIXED64), len(values)), Rows(payload, np.full(len(values), 8, dtype=np.int64))
    )


def message_field(field_number, rows, present=None):
    """Each row wrapped as a length-delimited field (a submessage, string or bytes)."""
    wrapped = join_rows(constant(tag(field_number, _WIRE_LEN), len(rows)), varints(rows.lengths), rows)
    return wrapped if present is None else where(present, wrapped)


def group_rows(rows, counts):
    """Merges consecutive rows: result row i is the concatenation of the next `counts[i]` rows."""
    counts = np.asarray(counts, dtype=np.int64)
    bounds = np.concatenate([[0], np.cumsum(counts)])
    sums = np.concatenate([[0], np.cumsum(rows.lengths)])
    return Rows(rows.flat, sums[bounds[1:]] - sums[bounds[:-1]])


def len_prefixed(field_number, payload):
    """One length-delimited field around `payload` bytes."""
    return tag(field_number, _WIRE_LEN) + bytes(varints([len(payload)]).flat) + payload
