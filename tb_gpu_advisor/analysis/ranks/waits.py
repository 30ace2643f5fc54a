"""Each collective split per rank into waiting for the last peer to arrive (arrival skew) and the transfer after
it, and each kind's effective bus bandwidth from its size, kind and group size.

A rank that arrives at a collective before its last peer can move no data until that peer arrives: its time
from its own arrival to the last arrival is a wait, and from the last arrival to its end is the transfer (the
split TraceLens and NCCL's own timing use). Bus bandwidth is NCCL-tests' (collective_bandwidth.bus_factor) over
the median transfer time, which is what the link carried, not the call's whole duration.
"""

import statistics
from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.analysis.collective_bandwidth import LARGE_COLLECTIVE_BYTES, bus_factor
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.analysis.rounding import ms


@dataclass(frozen=True)
class CallSplit:
    """One matched call: each rank's wait for the last arrival and transfer (ps), who arrived last."""

    step_index: int
    call_index: int
    collective: str
    bytes: int | None
    last_rank: int  # position in rank order
    last_arrival_ps: int
    end_ps: int  # the median end over the ranks
    wait_ps: tuple  # per rank
    transfer_ps: tuple  # per rank


@dataclass(frozen=True)
class KindBandwidth:
    """Per collective kind: matched calls, median size, median transfer and the bus bandwidth it implies."""

    collective: str
    calls: int
    group_size: int
    median_bytes: int | None
    median_transfer_ms: float
    median_wait_ms: float  # per rank and call
    busbw_gbps: float | None  # over the median transfer of the sized calls
    link_gbps: float | None  # the link the trace shows, None when it shows none
    link_ratio: float | None


def split_calls(alignment):
    """CallSplit per matched call of every matched step, in step then call order."""
    found = []
    for step_index, step in enumerate(alignment.steps):
        for call in step.calls:
            last = max(call.starts_ps)
            last_rank = call.starts_ps.index(last)
            end = int(statistics.median(call.ends_ps))
            found.append(
                CallSplit(
                    step_index=step_index,
                    call_index=call.index,
                    collective=call.collective,
                    bytes=call.bytes,
                    last_rank=last_rank,
                    last_arrival_ps=last,
                    end_ps=end,
                    wait_ps=tuple(last - start for start in call.starts_ps),
                    transfer_ps=tuple(max(0, e - last) for e in call.ends_ps),
                )
            )
    return tuple(found)


def rank_waits(alignment, splits, rank_count):
    """(wait ps, transfer ps) per step per rank: the union of the rank's waits (transfers) over the step's calls,
    a transfer not counted where the rank also waited (calls overlap when several buckets are in flight)."""
    by_step = {}
    for split in splits:
        by_step.setdefault(split.step_index, []).append(split)
    found = []
    for step_index, step in enumerate(alignment.steps):
        row = []
        for rank in range(rank_count):
            calls = list(step.calls)
            parts = by_step.get(step_index, [])
            waits = intervals.union(
                np.array([c.starts_ps[rank] for c in calls], dtype=np.int64),
                np.array([p.last_arrival_ps for p in parts], dtype=np.int64),
            )
            moving = intervals.union(
                np.array([p.last_arrival_ps for p in parts], dtype=np.int64),
                np.array([max(c.ends_ps[rank], p.last_arrival_ps) for c, p in zip(calls, parts)], dtype=np.int64),
            )
            row.append((waits.total_ps, intervals.subtract(moving, waits).total_ps))
        found.append(tuple(row))
    return tuple(found)


def kind_bandwidth(splits, group_size, link_gbps, complete=True):
    """KindBandwidth per collective kind, most transfer time first; no bus bandwidth when ranks of the group are
    missing (`complete` False): the time after the captured ranks' last arrival may be waiting for them."""
    by_kind = {}
    for split in splits:
        by_kind.setdefault(split.collective, []).append(split)
    rows = []
    for kind, calls in by_kind.items():
        transfers = [statistics.median(c.transfer_ps) for c in calls]
        sized = [(c.bytes, t) for c, t in zip(calls, transfers) if c.bytes and t > 0]
        factor = bus_factor(kind, group_size)
        busbw = None
        if sized and factor is not None and complete:
            size = statistics.median(b for b, _ in sized)
            busbw = round(size / (statistics.median(t for _, t in sized) / 1e12) / 1e9 * factor, 3)
        waits = [w for c in calls for w in c.wait_ps]
        rows.append(
            KindBandwidth(
                collective=kind,
                calls=len(calls),
                group_size=group_size,
                median_bytes=int(statistics.median(b for b, _ in sized)) if sized else None,
                median_transfer_ms=ms(statistics.median(transfers)),
                median_wait_ms=ms(statistics.median(waits)),
                busbw_gbps=busbw,
                link_gbps=link_gbps,
                # a call under LARGE_COLLECTIVE_BYTES runs at NCCL's latency, not at bus bandwidth: no share of
                # the link (as for one rank's collectives)
                link_ratio=round(busbw / link_gbps, 3)
                if busbw is not None and link_gbps and statistics.median(b for b, _ in sized) >= LARGE_COLLECTIVE_BYTES
                else None,
            )
        )
    return tuple(sorted(rows, key=lambda r: (-r.median_transfer_ms * r.calls, r.collective)))
