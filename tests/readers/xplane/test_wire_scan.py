"""The wire scanner reads exactly what upb reads, and refuses (Unusual) what it cannot vouch for."""

import numpy as np
import pytest

from tb_gpu_advisor.testing.encode import len_prefixed, varints
from tb_gpu_advisor.readers.xplane import schema
from tb_gpu_advisor.readers.xplane.wire_scan import (
    Unusual,
    as_int64,
    check_utf8,
    read_varint,
    scan_line,
    tag_of,
    token_rounds,
    varints_at,
)

_VALUES = [0, 1, 127, 128, 300, 2**31, 2**35 + 7, 2**62, 2**63 - 1, 2**63, 2**64 - 1]


def test_varints_agree_with_protobuf():
    for value in _VALUES:
        data = schema.XStat(uint64_value=value).SerializeToString()[1:]  # drop the tag
        assert read_varint(data, 0, len(data)) == (value, len(data))
        assert bytes(varints([value]).flat) == data
    signed = schema.XStat(int64_value=-5).SerializeToString()[1:]
    assert as_int64(read_varint(signed, 0, len(signed))[0]) == -5
    buf = np.frombuffer(b"".join(bytes(varints([v]).flat) for v in _VALUES), dtype=np.uint8)
    starts = np.cumsum([0] + [len(varints([v]).flat) for v in _VALUES])
    values, after = varints_at(buf, starts[:-1], np.full(len(_VALUES), len(buf)))
    assert values.tolist() == _VALUES and after.tolist() == starts[1:].tolist()


@pytest.mark.parametrize("data", [b"\x80" * 10 + b"\x01", b"\xff" * 9 + b"\x02", b"\x80\x80"])
def test_varints_beyond_64_bits_or_truncated_are_unusual(data):
    with pytest.raises(Unusual):
        read_varint(data, 0, len(data))
    with pytest.raises(Unusual):
        varints_at(np.frombuffer(data, np.uint8), np.array([0]), np.array([len(data)]))


def test_token_rounds_read_every_stat_value_kind():
    stats = [
        schema.XStat(metadata_id=1, double_value=2.5),
        schema.XStat(metadata_id=2, uint64_value=2**64 - 1),
        schema.XStat(metadata_id=3, int64_value=-7),
        schema.XStat(metadata_id=4, str_value="é"),
        schema.XStat(metadata_id=5, bytes_value=b"\xff"),
        schema.XStat(metadata_id=6, ref_value=9),
        schema.XStat(),
    ]
    raw = [s.SerializeToString() for s in stats]
    data = b"".join(raw)
    buf = np.frombuffer(data, np.uint8)
    ends = np.cumsum([len(r) for r in raw])
    rounds = list(token_rounds(buf, ends - [len(r) for r in raw], ends))
    assert len(rounds) == 2  # metadata_id, then the value; the empty stat has no field
    msg, tag, _, _ = rounds[0]
    assert msg.tolist() == [0, 1, 2, 3, 4, 5] and (tag == tag_of(1, 0)).all()
    msg, tag, value, size = rounds[1]
    assert tag.tolist() == [int(tag_of(f, w)) for f, w in ((2, 1), (3, 0), (4, 0), (5, 2), (6, 2), (7, 0))]
    assert value[:3].tolist() == [np.float64(2.5).view(np.uint64), 2**64 - 1, 2**64 - 7]
    assert data[int(value[3]) : int(value[3]) + int(size[3])].decode() == "é" and value[5] == 9


def test_rounds_of_one_wire_type_read_the_same_as_mixed_rounds():
    stats = [
        schema.XStat(metadata_id=1, double_value=2.5),
        schema.XStat(metadata_id=2, uint64_value=2**64 - 1),
        schema.XStat(metadata_id=300, str_value="long " * 40),
        schema.XStat(metadata_id=4, bytes_value=b"\xff"),
        schema.XEvent(metadata_id=5, offset_ps=2**40, duration_ps=7),
    ]
    raw = [s.SerializeToString() for s in stats] + [b"\x0d\x01\x02\x03\x04"]  # a fixed32 field
    data = b"".join(raw)
    buf = np.frombuffer(data, np.uint8)
    ends = np.cumsum([len(r) for r in raw])
    starts = ends - [len(r) for r in raw]

    def fields(rounds, starts):
        found = {}
        for msg, tag, value, size in rounds:
            for m, t, v, n in zip(msg.tolist(), tag.tolist(), value.tolist(), size.tolist()):
                found.setdefault(m, []).append((t, v - int(starts[m]) if (t & 7) == 2 else v, n))
        return found

    mixed = fields(token_rounds(buf, starts, ends), starts)
    alone = {}
    for m, (start, end) in enumerate(zip(starts, ends)):  # one message a call: every round has one wire type
        one = fields(token_rounds(buf, np.array([start]), np.array([end])), [start])
        alone[m] = one[0]
    assert mixed == alone
    assert mixed[5] == [(int(tag_of(1, 5)), 0x04030201, 0)]
    assert mixed[2][1] == (int(tag_of(5, 2)), 6, 200)  # a LEN payload: its offset, after the tag and length


def test_a_bad_wire_type_in_a_mixed_round_is_unusual():
    data = b"\x08\x01\x0b"
    with pytest.raises(Unusual):
        list(token_rounds(np.frombuffer(data, np.uint8), np.array([0, 2]), np.array([2, 3])))


@pytest.mark.parametrize("data", [b"\x0b\x0c", b"\x00\x01", b"\x0f", b"\x0a\x05ab"])
def test_groups_field_zero_bad_wire_types_and_overruns_are_unusual(data):
    with pytest.raises(Unusual):
        list(token_rounds(np.frombuffer(data, np.uint8), np.array([0]), np.array([len(data)])))


def test_scan_line_finds_events_and_keeps_the_last_header_values():
    event = schema.XEvent(metadata_id=3, offset_ps=10, duration_ps=5)
    long_event = schema.XEvent(metadata_id=4, stats=[schema.XStat(metadata_id=1, str_value="x" * 200)])
    line = (
        schema.XLine(id=1, name="first", timestamp_ns=7).SerializeToString()
        + len_prefixed(4, event.SerializeToString())
        + len_prefixed(4, long_event.SerializeToString())
        + schema.XLine(id=-2, name="second").SerializeToString()
        + len_prefixed(4, b"")
    )
    data = b"pad" + line
    scanned = scan_line(data, 3, len(data))
    assert (scanned.id, scanned.name, scanned.timestamp_ns) == (-2, "second", 7)
    payloads = [data[s:e] for s, e in zip(scanned.event_start, scanned.event_end)]
    assert payloads == [event.SerializeToString(), long_event.SerializeToString(), b""]
    with pytest.raises(Unusual):
        scan_line(data, 3, len(data) - 1)  # the last event runs past the line
    with pytest.raises(Unusual):
        bad = schema.XLine(name="ok").SerializeToString().replace(b"ok", b"o\xff")
        scan_line(bad, 0, len(bad))


def test_check_utf8():
    data = "abcé€".encode() + b"\xff\xfe"
    buf = np.frombuffer(data, np.uint8)
    check_utf8(buf, np.array([0, 3]), np.array([3, 5]))
    with pytest.raises(Unusual):
        check_utf8(buf, np.array([0, 8]), np.array([3, 2]))
