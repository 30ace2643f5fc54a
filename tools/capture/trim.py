"""Shrinks a captured `.xplane.pb` to its first profiled steps so that it fits a size limit (for test fixtures).

`python -m tools.capture.trim FILE... [--max-mb 3] [--marker train]`: rewrites each file in place without
the HLO modules that no event ran (JAX embeds in `/host:metadata` every module compiled in the process so far,
also by earlier, unprofiled work) and, when it is still larger than the limit, without the events that start
after the end of the last step that fits. Every plane, line, plane stat and the HLO protos of the modules that
ran stay. Steps
are the host events named by `--marker` (`jax.profiler.StepTraceAnnotation` / `tf.profiler.experimental.Trace`
names) that carry a `step_num` stat; the most steps that fit are kept. Only for files this project captured
itself: it rewrites the file it is given.
"""

import argparse
import os
import re
import sys
from dataclasses import dataclass

from google.protobuf.message import DecodeError

from tb_gpu_advisor.readers.xplane import schema

DEFAULT_MAX_MB = 3.0
DEFAULT_MARKER = "train"
MIN_STEPS_KEPT = 3
_HOST_PLANE_PREFIX = "/host:CPU"
_METADATA_PLANE = "/host:metadata"
_PROGRAM_SUFFIX = re.compile(r"\((\d+)\)$")


@dataclass(frozen=True)
class StepMarker:
    step_num: int
    start_ps: int  # absolute: the line's timestamp_ns * 1000 + the event's offset_ps
    end_ps: int


@dataclass(frozen=True)
class TrimResult:
    path: str
    bytes_before: int
    bytes_after: int
    steps_before: int
    steps_after: int


def _step_num_stat_ids(plane):
    return {key for key, meta in plane.stat_metadata.items() if meta.name == "step_num"}


def step_markers(space, marker=DEFAULT_MARKER):
    """The host step markers named `marker` with a `step_num` stat, sorted by start."""
    found = []
    for plane in space.planes:
        if not plane.name.startswith(_HOST_PLANE_PREFIX):
            continue
        names = {key for key, meta in plane.event_metadata.items() if meta.name == marker}
        step_ids = _step_num_stat_ids(plane)
        if not names or not step_ids:
            continue
        for line in plane.lines:
            base_ps = line.timestamp_ns * 1000
            for event in line.events:
                if event.metadata_id not in names:
                    continue
                step = next((s.int64_value or s.uint64_value for s in event.stats if s.metadata_id in step_ids), None)
                if step is not None:
                    start = base_ps + event.offset_ps
                    found.append(StepMarker(int(step), start, start + event.duration_ps))
    return sorted(found, key=lambda m: m.start_ps)


def _cut(space, cutoff_ps):
    """A copy of `space` without the events that start after `cutoff_ps`."""
    trimmed = schema.XSpace()
    trimmed.CopyFrom(space)
    for plane in trimmed.planes:
        for line in plane.lines:
            base_ps = line.timestamp_ns * 1000
            kept = [
                event
                for event in line.events
                if event.WhichOneof("data") != "offset_ps" or base_ps + event.offset_ps <= cutoff_ps
            ]
            if len(kept) != len(line.events):
                del line.events[:]
                line.events.extend(kept)
    return trimmed


def _stat_value(plane, stat):
    """A stat's value; an interned string (`ref_value`) is the name of the stat metadata it points to."""
    kind = stat.WhichOneof("value")
    if kind == "ref_value":
        meta = plane.stat_metadata.get(stat.ref_value)
        return meta.name if meta is not None else None
    return getattr(stat, kind) if kind else None


def referenced_modules(space):
    """(program ids, module names) that events outside `/host:metadata` name in `program_id` and `hlo_module`
    stats: the HLO modules the trace ran."""
    ids, names = set(), set()
    for plane in space.planes:
        if plane.name == _METADATA_PLANE:
            continue
        wanted = {
            key: meta.name for key, meta in plane.stat_metadata.items() if meta.name in ("program_id", "hlo_module")
        }
        if not wanted:
            continue
        for line in plane.lines:
            for event in line.events:
                for stat in event.stats:
                    kind = wanted.get(stat.metadata_id)
                    if kind == "program_id":
                        ids.add(int(stat.int64_value or stat.uint64_value))
                    elif kind == "hlo_module" and (value := _stat_value(plane, stat)):
                        names.add(str(value))
    return ids, names


def prune_unused_modules(space):
    """A copy of `space` whose `/host:metadata` keeps only the HLO modules (named `<name>(<program id>)`) that
    the trace's events ran, matched by program id or, where events name only a module, by module name (every
    variant of that name stays); the space itself when no event names a module (nothing to match against).

    JAX embeds every module compiled in the process so far, also those of earlier, unprofiled work."""
    ids, names = referenced_modules(space)
    if not ids and not names:
        return space
    pruned = schema.XSpace()
    pruned.CopyFrom(space)
    for plane in pruned.planes:
        if plane.name != _METADATA_PLANE:
            continue
        for key in [
            key
            for key, meta in plane.event_metadata.items()
            if (match := _PROGRAM_SUFFIX.search(meta.name))
            and int(match.group(1)) not in ids
            and meta.name[: match.start()] not in names
        ]:
            del plane.event_metadata[key]
    return pruned


def trim_space(space, max_bytes, marker=DEFAULT_MARKER):
    """(space, steps kept) fitting `max_bytes`: without the HLO modules no event ran, and if that is still too
    large, only the most leading steps that fit.

    Raises ValueError when the file has too few step markers or even MIN_STEPS_KEPT steps do not fit."""
    markers = step_markers(space, marker)
    space = prune_unused_modules(space)
    if space.ByteSize() <= max_bytes:
        return space, len(markers)
    if len(markers) < MIN_STEPS_KEPT:
        raise ValueError(f"it has {len(markers)} '{marker}' step markers; cannot trim by steps")
    low, high, best = MIN_STEPS_KEPT, len(markers), None
    while low <= high:
        keep = (low + high) // 2
        candidate = _cut(space, markers[keep - 1].end_ps)
        if candidate.ByteSize() <= max_bytes:
            best, low = (candidate, keep), keep + 1
        else:
            high = keep - 1
    if best is None:
        raise ValueError(f"even its first {MIN_STEPS_KEPT} steps are larger than {max_bytes / 2**20:.1f} MiB")
    return best


def trim_file(path, max_mb=DEFAULT_MAX_MB, marker=DEFAULT_MARKER):
    """Rewrites `path` in place with the leading steps that fit `max_mb`; returns a TrimResult."""
    with open(path, "rb") as handle:
        data = handle.read()
    space = schema.XSpace.FromString(data)
    before = len(step_markers(space, marker))
    trimmed, kept = trim_space(space, int(max_mb * 2**20), marker)
    if trimmed.ByteSize() != len(data):
        tmp = f"{path}.trim-tmp"
        with open(tmp, "wb") as handle:
            handle.write(trimmed.SerializeToString())
        os.replace(tmp, path)
    return TrimResult(path, len(data), os.path.getsize(path), before, kept)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m tools.capture.trim", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("files", nargs="+", help=".xplane.pb files to shrink in place")
    parser.add_argument("--max-mb", type=float, default=DEFAULT_MAX_MB, help="size limit per file (MiB)")
    parser.add_argument("--marker", default=DEFAULT_MARKER, help="name of the step marker events")
    args = parser.parse_args(argv)
    status = 0
    for path in args.files:
        try:
            result = trim_file(path, args.max_mb, args.marker)
        except (OSError, ValueError, DecodeError) as error:
            print(f"error: {path}: {error}", file=sys.stderr)
            status = 2
            continue
        print(
            f"{path}: {result.bytes_before / 2**20:.2f} MiB -> {result.bytes_after / 2**20:.2f} MiB, "
            f"steps {result.steps_before} -> {result.steps_after}"
        )
    return status


if __name__ == "__main__":
    sys.exit(main())
