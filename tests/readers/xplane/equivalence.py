"""Helpers for tests that the fast columnar path builds exactly the model and report of the reference path."""

import dataclasses
import json
import logging

import numpy as np

from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.readers.xplane.build import build_model
from tb_gpu_advisor.pipeline import host_report
from tb_gpu_advisor.testing.encode import len_prefixed
from tb_gpu_advisor.readers.xplane import schema
from tb_gpu_advisor.readers.xplane.reader import parse_space

FALLBACK_LOGGER = "tb_gpu_advisor.readers.xplane.build"


def assert_same(a, b, where="model"):
    """Deep equality of model values: arrays equal in dtype and content, dataclasses field by field."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        assert isinstance(a, np.ndarray) and isinstance(b, np.ndarray), where
        assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b), where
    elif dataclasses.is_dataclass(a) and not isinstance(a, type):
        assert type(a) is type(b), where
        for field in dataclasses.fields(a):
            assert_same(getattr(a, field.name), getattr(b, field.name), f"{where}.{field.name}")
    elif isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b), where
        for index, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{index}]")
    elif isinstance(a, dict):
        assert list(a) == list(b), where
        for key in a:
            assert_same(a[key], b[key], f"{where}[{key!r}]")
    elif isinstance(a, float) and np.isnan(a):
        assert isinstance(b, float) and np.isnan(b), where
    else:
        assert type(a) is type(b) and a == b, f"{where}: {a!r} != {b!r}"


def _outcome(build):
    try:
        model = build()
    except ProfileError as err:
        return "error", str(err), None
    except Exception as err:  # the reference's own failure (e.g. OverflowError) must be reproduced too
        return "exception", type(err).__name__, None
    return "ok", json.dumps(host_report(model), sort_keys=True), model


def compare_paths(data, tmp_path, caplog, expect_fallback=False):
    """Builds `data` (serialized XSpace) the reference way, the fast way from bytes and streamed from a file;
    asserts all three agree (model, report JSON or error) and whether the fast path fell back. Returns the
    reference outcome (kind, report JSON or message, model)."""
    path = tmp_path / "host.xplane.pb"
    path.write_bytes(data)
    name = str(path)
    reference = _outcome(lambda: build_model(parse_space(data, name), reference=True))
    with caplog.at_level(logging.DEBUG, logger=FALLBACK_LOGGER):
        caplog.clear()
        fast = _outcome(lambda: build_model(parse_space(data, name)))
        fell_back = any("reference path" in record.getMessage() for record in caplog.records)
    streamed = _outcome(lambda: load_model(name))
    assert fast[:2] == reference[:2]
    assert streamed[:2] == reference[:2]
    if reference[2] is not None:
        assert_same(fast[2], reference[2])
        assert_same(streamed[2], reference[2])
    if reference[0] == "ok":
        assert fell_back == expect_fallback
    return reference


class SpaceWriter:
    """Hand-made XSpaces with full control of every field, for edge cases TraceBuilder never writes."""

    def __init__(self):
        self.space = schema.XSpace(hostnames=["edge"])
        self.raw_events = {}  # id(line) -> serialized XEvent payloads appended to that line as written

    def append_raw_event(self, line, payload):
        """Appends an event given as raw bytes (e.g. fields in an order upb would never write)."""
        self.raw_events.setdefault(id(line), []).append(payload)

    def plane(self, name, plane_id=0):
        plane = self.space.planes.add(id=plane_id, name=name)
        return plane

    @staticmethod
    def event_id(plane, name):
        for key, meta in plane.event_metadata.items():
            if meta.name == name:
                return key
        key = len(plane.event_metadata) + 1
        plane.event_metadata[key].id = key
        plane.event_metadata[key].name = name
        return key

    @staticmethod
    def stat_id(plane, name):
        for key, meta in plane.stat_metadata.items():
            if meta.name == name:
                return key
        key = 1000 + len(plane.stat_metadata)
        plane.stat_metadata[key].id = key
        plane.stat_metadata[key].name = name
        return key

    def event(self, plane, line, name, offset_ps, duration_ps, stats=(), metadata_id=None):
        """An event; `stats` holds (stat name, oneof field, value), field "ref" takes an interned string."""
        event = line.events.add(
            metadata_id=self.event_id(plane, name) if metadata_id is None else metadata_id,
            offset_ps=offset_ps,
            duration_ps=duration_ps,
        )
        for stat_name, field, value in stats:
            stat = event.stats.add(metadata_id=self.stat_id(plane, stat_name))
            if field == "ref":
                stat.ref_value = self.stat_id(plane, value)
            elif field is not None:
                setattr(stat, field, value)
        return event

    def bytes(self):
        if not self.raw_events:
            return self.space.SerializeToString()
        out = []
        for plane in self.space.planes:
            header = schema.XPlane()
            header.CopyFrom(plane)
            del header.lines[:]
            lines = [
                line.SerializeToString() + b"".join(len_prefixed(4, raw) for raw in self.raw_events.get(id(line), ()))
                for line in plane.lines
            ]
            out.append(len_prefixed(1, header.SerializeToString() + b"".join(len_prefixed(3, line) for line in lines)))
        return b"".join(out) + b"".join(len_prefixed(4, host.encode()) for host in self.space.hostnames)
