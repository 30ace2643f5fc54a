"""msgspec's batches (kineto.stream, kineto.times) build exactly the model the standard library's events do."""

import io
import json
from decimal import Decimal

import pytest

from tb_gpu_advisor.cli import main
from tb_gpu_advisor.readers.kineto import stream
from tb_gpu_advisor.readers.kineto.times import split_us
from tb_gpu_advisor.testing.kineto_trace import kernel, launch, trace_text
from tests.readers.kineto.real import REAL_TRACES, real_kineto

pytest.importorskip("msgspec")


def _report(path, batches, monkeypatch):
    """`analyze --format json` of the trace (its error, for a trace it refuses), read with or without batches."""
    if not batches:
        monkeypatch.setattr(stream, "BATCH_DECODER", None)
    out, err = io.StringIO(), io.StringIO()
    code = main(["analyze", str(path), "--format", "json"], out=out, err=err)
    monkeypatch.undo()
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("name", REAL_TRACES)
def test_batches_and_single_events_give_the_same_report(name, monkeypatch):
    assert _report(real_kineto(name), True, monkeypatch) == _report(real_kineto(name), False, monkeypatch)


def test_odd_events_inside_batches_take_the_single_event_path(tmp_path, monkeypatch):
    events = []
    for i in range(3000):
        events.append(kernel("void k<{lambda()#1}, int>", f"{1000 + i * 10}.125", "3.5", i))
        events.append(launch(f"{999 + i * 10}.0000001", 1, i))  # 7 decimals: not plain
    events.append('{"ph": "X", "cat": "kernel", "name": "n", "ts": NaN, "dur": 1}')
    events.append('{"ph": "X", "cat": "kernel", "name": "\\ud800", "ts": 1e3, "dur": -0.0, "args": {}}')
    events.append("7")
    path = tmp_path / "odd.pt.trace.json"
    path.write_text(trace_text(events))
    assert _report(path, True, monkeypatch) == _report(path, False, monkeypatch)


def test_split_us_reads_plain_decimals_exactly():
    texts = [
        "5551907582825.623",
        "-12.5",
        "0",
        "-0.0",
        "999999999999999.999999",
        "1e3",
        "1.1234567",
        "1234567890123456",
        '"5"',
        "null",
        "true",
        "[1.5]",
        "0.000001",
    ]
    whole, ps, plain = split_us([t.encode() for t in texts])
    for text, w, p, ok in zip(texts, whole.tolist(), ps.tolist(), plain.tolist()):
        value = json.loads(text, parse_float=Decimal)
        expected = (
            isinstance(value, (int, Decimal))
            and not isinstance(value, bool)
            and "e" not in text
            and text not in ("1.1234567", "1234567890123456")
        )
        assert ok == expected, text
        if ok:
            assert w * 10**6 + p == value * 10**6, text
