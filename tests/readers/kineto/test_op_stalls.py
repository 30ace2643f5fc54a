"""readers.kineto.op_stalls on small generated op columns: exact stall spans, and no stall for an op that is
long every time, or whose time its traced children fill."""

from tb_gpu_advisor.readers.kineto.op_stalls import op_stalls

MS = 1_000_000_000


def _ops(walls):
    """One thread's op columns: op 0 (`op`) called once per ms slot `i` for walls[i] ms, back to back."""
    starts, ends, start = [], [], 0
    for wall in walls:
        starts.append(start)
        ends.append(start + int(wall * MS))
        start += int(wall * MS) + MS
    return starts, ends, [0] * len(walls)


def test_a_long_untraced_call_is_a_stall_with_its_untraced_span():
    starts, ends, ids = _ops([0.3, 0.3, 6.0, 0.3])
    child = (starts[2] + MS // 10, starts[2] + 3 * MS // 10)  # 0.2 ms traced inside the stalled call
    spans = {0: (starts + [child[0]], ends + [child[1]]), 1: ([ends[2] + MS // 2], [ends[2] + MS])}
    found = op_stalls({0: (starts, ends, ids)}, spans, ["op"])
    assert found["op_stall:op"] == [(starts[2], child[0]), (child[1], ends[2])]
    assert found["op_stall_near"] == [(starts[2], ends[2])]  # thread 1 starts 0.5 ms after the stall


def test_no_stall_when_the_op_is_long_every_time_or_its_children_fill_it():
    starts, ends, ids = _ops([6.0, 6.0, 6.0])
    assert op_stalls({0: (starts, ends, ids)}, {0: (starts, ends)}, ["op"]) == {}
    starts, ends, ids = _ops([0.3, 0.3, 6.0, 0.3])
    filled = (starts + [starts[2] + 1], ends + [ends[2] - 1])
    assert op_stalls({0: (starts, ends, ids)}, {0: filled}, ["op"]) == {}
