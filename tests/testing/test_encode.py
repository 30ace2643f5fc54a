"""The vectorized encoder writes what upb parses back to the same values."""

import numpy as np

from tb_gpu_advisor.testing import encode
from tb_gpu_advisor.readers.xplane import schema


def test_events_with_stats_round_trip_through_upb():
    rng = np.random.default_rng(3)
    count = 500
    meta = rng.integers(1, 300, count)
    offset = rng.integers(-(2**40), 2**45, count)
    duration = rng.integers(0, 2**33, count)
    correlation = rng.integers(0, 2**62, count)
    has_ref = rng.random(count) < 0.5
    stats = [
        encode.join_rows(encode.varint_field(1, np.full(count, 7)), encode.varint_field(4, correlation)),
        encode.join_rows(encode.varint_field(1, np.full(count, 8)), encode.double_field(2, duration / 3)),
        encode.join_rows(
            encode.varint_field(1, np.full(count, 9)),
            encode.message_field(5, encode.take(encode.strings(["a", "ü", ""]), np.arange(count) % 3)),
        ),
    ]
    events = encode.join_rows(
        encode.varint_field(1, meta),
        encode.varint_field(2, offset),
        encode.varint_field(3, duration),
        *(encode.message_field(4, s) for s in stats),
        encode.message_field(
            4, encode.join_rows(encode.varint_field(1, np.full(count, 10)), encode.varint_field(7, meta)), has_ref
        ),
    )
    line = schema.XLine.FromString(encode.message_field(4, events).tobytes())
    assert len(line.events) == count
    for index, event in enumerate(line.events):
        assert (event.metadata_id, event.offset_ps, event.duration_ps) == (meta[index], offset[index], duration[index])
        assert event.stats[0].int64_value == correlation[index]
        assert event.stats[1].double_value == duration[index] / 3
        assert event.stats[2].str_value == ["a", "ü", ""][index % 3]
        assert len(event.stats) == 4 if has_ref[index] else len(event.stats) == 3


def test_group_rows_concatenates_consecutive_rows():
    rows = encode.strings([b"ab", b"c", b"", b"def"])
    grouped = encode.group_rows(rows, [2, 0, 2])
    assert grouped.lengths.tolist() == [3, 0, 3] and grouped.tobytes() == b"abcdef"
