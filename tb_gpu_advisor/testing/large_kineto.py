"""Writes a large Kineto trace from a real one: its events repeated, each copy later in time, with its own
correlation, External id and flow ids and its own step numbers, the rest of each event's text unchanged."""

import gzip
import json
import os
import re
from decimal import Decimal

# The values a copy shifts: a time, an id linking events, a flow id, a step's number.
_SHIFTED = re.compile(r'"(ts|correlation|External id|id)": (-?[0-9][0-9.eE+-]*)|"ProfilerStep#([0-9]+)"')
_DECODER = json.JSONDecoder(parse_float=Decimal)


def _events(text):
    """(the text before the events, [(event text, event)], the text after the events) of a trace."""
    start = text.index("[", text.index('"traceEvents"')) + 1
    found, position = [], start
    while True:
        while text[position] in " \t\r\n,":
            position += 1
        if text[position] == "]":
            return text[:start], found, text[position:]
        event, end = _DECODER.raw_decode(text, position)
        found.append((text[position:end], event))
        position = end


def _span_us(events):
    """A whole number of microseconds longer than the events' time span."""
    starts = [e["ts"] for _, e in events if isinstance(e.get("ts"), (int, Decimal))]
    ends = [
        e["ts"] + e.get("dur", 0) for _, e in events if e.get("ph") == "X" and isinstance(e.get("ts"), (int, Decimal))
    ]
    return int(max(ends) - min(starts)) + 1000


def write_repeated_kineto(path, source, copies):
    """Writes `copies` copies of the events of the Kineto trace `source` (plain or gzip) to `path` (plain
    JSON); returns (bytes written, events written). Metadata events and the profiler's own spans are kept
    once (the first copy)."""
    opener = gzip.open if str(source).endswith(".gz") else open
    with opener(source, "rt", encoding="utf-8") as handle:
        head, events, tail = _events(handle.read())
    span = _span_us(events)
    id_step = (
        10
        ** len(
            str(
                max(
                    (e.get("args", {}).get("correlation", 0) for _, e in events if isinstance(e.get("args"), dict)),
                    default=0,
                )
                + 1
            )
        )
        * 10
    )
    steps = [int(m) for text, _ in events for m in re.findall(r'"ProfilerStep#([0-9]+)"', text)]
    step_count = max(steps) + 1 if steps else 0
    keep = [event.get("ph") in ("X", "f", "s") and isinstance(event.get("pid"), int) for _, event in events]
    repeated = [text for (text, _), kept in zip(events, keep) if kept]
    once = [text for (text, _), kept in zip(events, keep) if not kept]
    written = 0
    with open(path, "w", encoding="utf-8") as out:
        out.write(head)
        first = True
        for copy in range(copies):
            shift_us, shift_id, shift_step = copy * span, copy * id_step, copy * step_count

            def shifted(match, shift_us=shift_us, shift_id=shift_id, shift_step=shift_step):
                if match.group(3) is not None:
                    return f'"ProfilerStep#{int(match.group(3)) + shift_step}"'
                key, value = match.group(1), match.group(2)
                if key == "ts":
                    return f'"ts": {Decimal(value) + shift_us}'
                return f'"{key}": {int(value) + shift_id}'

            for text in repeated if copy else repeated + once:
                out.write(("\n  " if first else ",\n  ") + (_SHIFTED.sub(shifted, text) if copy else text))
                first = False
                written += 1
        out.write("\n  " + tail)
    return os.path.getsize(path), written
