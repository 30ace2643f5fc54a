"""Writes one XPlane: its lines, events and interned stat and event metadata, from times in microseconds."""

from __future__ import annotations

from tb_gpu_advisor.readers.xplane import schema


PS_PER_US = 1_000_000


DEFAULT_BASE_NS = 1_000


def us_to_ps(us):
    return int(round(us * PS_PER_US))


class PlaneWriter:
    """Interns metadata and collects lines of one XPlane."""

    def __init__(self, plane_id, name):
        self.plane = schema.XPlane(id=plane_id, name=name)
        self._event_ids = {}
        self._stat_ids = {}
        self._lines = {}

    def stat_id(self, name):
        found = self._stat_ids.get(name)
        if found is None:
            found = self._stat_ids[name] = len(self._stat_ids) + 1
            self.plane.stat_metadata[found].id = found
            self.plane.stat_metadata[found].name = name
        return found

    def event_id(self, name):
        found = self._event_ids.get(name)
        if found is None:
            found = self._event_ids[name] = len(self._event_ids) + 1
            self.plane.event_metadata[found].id = found
            self.plane.event_metadata[found].name = name
        return found

    def line(self, line_id, name, base_ns=DEFAULT_BASE_NS):
        found = self._lines.get(line_id)
        if found is None:
            found = self._lines[line_id] = self.plane.lines.add(id=line_id, name=name, timestamp_ns=base_ns)
        return found

    def set_stat(self, stat, name, value, interned=False, unsigned=False):
        stat.metadata_id = self.stat_id(name)
        if interned:
            stat.ref_value = self.stat_id(str(value))
        elif isinstance(value, bool):
            stat.int64_value = int(value)
        elif isinstance(value, int):
            if value >= 2**63 or (unsigned and value >= 0):
                stat.uint64_value = value
            else:
                stat.int64_value = value
        elif isinstance(value, float):
            stat.double_value = value
        elif isinstance(value, bytes):
            stat.bytes_value = value
        else:
            stat.str_value = str(value)

    def add_event(self, line, name, start_us, duration_us, stats=(), interned=()):
        event = line.events.add(
            metadata_id=self.event_id(name),
            offset_ps=us_to_ps(start_us) - line.timestamp_ns * 1000,
            duration_ps=us_to_ps(duration_us),
        )
        for key, value in stats:
            if value is not None:
                self.set_stat(event.stats.add(), key, value, interned=key in interned)
        return event

    def add_plane_stat(self, name, value, unsigned=False):
        self.set_stat(self.plane.stats.add(), name, value, unsigned=unsigned)

    def sort_lines(self):
        """Orders each line's events by start, enclosing events first, as the profiler's post-processing does."""
        for line in self.plane.lines:
            ordered = sorted(line.events, key=lambda e: (e.offset_ps, -e.duration_ps))
            del line.events[:]
            line.events.extend(ordered)
