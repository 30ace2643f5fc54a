"""Rank sets written from real Kineto rank traces, for tests and benchmarks of the run-level view: copies of real
ranks renamed as the ranks of a larger job, with a known clock offset per rank."""

import gzip
import json
import pathlib


def write_rank_set(sources, out_dir, count, world_size=None, clock_us=None):
    """Writes `count` traces `rank<r>.<n>.pt.trace.json.gz` to `out_dir`: rank r is a copy of `sources[r %
    len(sources)]` (paths of real `.pt.trace.json[.gz]` files) with its `distributedInfo` rank and world size set
    and `clock_us(r)` microseconds added to every time (its clock offset; none by default). One source is held
    in memory at a time. Returns the paths, in rank order."""
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    world = world_size or count
    paths = []
    for index, source in enumerate(sources):
        trace = _load(source)
        for rank in range(index, count, len(sources)):
            shift = clock_us(rank) if clock_us else 0.0
            copy = dict(trace, distributedInfo=dict(trace.get("distributedInfo") or {}, rank=rank, world_size=world))
            if shift:
                copy["traceEvents"] = [_shifted(event, shift) for event in trace["traceEvents"]]
            path = out / f"rank{rank}.{1000 + rank}.pt.trace.json.gz"
            with gzip.open(path, "wt", encoding="utf-8") as handle:
                json.dump(copy, handle)
            paths.append((rank, path))
        trace = None
    return [path for _, path in sorted(paths)]


def _load(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return json.load(handle)


def _shifted(event, shift_us):
    if isinstance(event, dict) and isinstance(event.get("ts"), (int, float)):
        return dict(event, ts=event["ts"] + shift_us)
    return event
