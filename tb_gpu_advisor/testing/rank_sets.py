"""Rank sets written from real Kineto rank traces, for tests and benchmarks of the run-level view: copies of real
ranks renamed as the ranks of a larger job, with a known clock offset per rank."""

import gzip
import json
import pathlib


def write_rank_set(sources, out_dir, count, world_size=None, clock_us=None, pick=None, machine=None):
    """Writes `count` traces `rank<r>.<n>.pt.trace.json.gz` to `out_dir`: rank r is a copy of
    `sources[pick(r)]` (paths of real `.pt.trace.json[.gz]` files; `pick` r % len(sources) by default) with its
    `distributedInfo` rank and world size set (its default process group grown to the world) and `clock_us(r)` microseconds added to every time (its clock
    offset; none by default). `machine(r)` is rank r's `host_name` (ranks naming one machine share its clock, so
    give them one offset); with offsets and no `machine`, each rank is on a machine of its own (`<host_name>-r<r>`).
    One source is held in memory at a time. Returns the paths, in rank
    order."""
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    world = world_size or count
    pick = pick or (lambda rank: rank % len(sources))
    paths = []
    for index, source in enumerate(sources):
        trace = _load(source)
        for rank in (r for r in range(count) if pick(r) == index):
            shift = clock_us(rank) if clock_us else 0.0
            copy = dict(trace, distributedInfo=_renamed(trace.get("distributedInfo") or {}, rank, world))
            if machine:
                copy["host_name"] = machine(rank)
            elif clock_us:
                copy["host_name"] = f"{trace.get('host_name') or 'host'}-r{rank}"
            if shift:
                copy["traceEvents"] = [_shifted(event, shift) for event in trace["traceEvents"]]
            path = out / f"rank{rank}.{1000 + rank}.pt.trace.json.gz"
            with gzip.open(path, "wb", compresslevel=1) as handle:  # fast: test data, written at test time
                handle.write(json.dumps(copy).encode("utf-8"))
            paths.append((rank, path))
        trace = None
    return [path for _, path in sorted(paths)]


def _renamed(info, rank, world):
    """distributedInfo as rank `rank` of a `world`-rank job: the default process group (the one the source's whole
    world was in) grows to every rank, so the calls' group size is the new world's."""
    groups = [
        dict(group, pg_size=world, ranks=list(range(world)))
        if isinstance(group, dict)
        and (group.get("pg_desc") == "default_pg" or group.get("pg_size") == info.get("world_size"))
        else group
        for group in info.get("pg_config") or ()
    ]
    renamed = dict(info, rank=rank, world_size=world)
    if groups:
        renamed["pg_config"] = groups
    return renamed


def _load(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return json.load(handle)


def _shifted(event, shift_us):
    if isinstance(event, dict) and isinstance(event.get("ts"), (int, float)):
        return dict(event, ts=event["ts"] + shift_us)
    return event


def write_straggler_set(run_dir, out_dir, count, slow_ranks, slow_source=2, clock_us=None, machine=None):
    """A `count`-rank set from one real captured run whose rank `slow_source` was the slow one (such as
    tests/data/real/ddp_cpu/slow_compute, a file `rank<r>.*.pt.trace.json.gz` per rank): the ranks in `slow_ranks`
    are copies of the slow rank, every other rank a copy of one of the others (in turn). All copies come from the
    one run, so the fast ranks' waits at the collectives match the slow ranks' lateness. Returns the paths."""
    files = sorted(pathlib.Path(run_dir).glob("rank*.pt.trace.json*"), key=lambda p: int(p.name[4:].split(".")[0]))
    fast = [i for i in range(len(files)) if i != slow_source]
    slow = set(slow_ranks)
    order = {}
    for rank in range(count):
        order[rank] = slow_source if rank in slow else fast[sum(1 for r in range(rank) if r not in slow) % len(fast)]
    return write_rank_set(files, out_dir, count, clock_us=clock_us, pick=order.__getitem__, machine=machine)
