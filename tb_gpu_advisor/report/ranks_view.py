"""The run report's `ranks` object: the run-level view of a distributed run (analysis.ranks.run.RunRanks) as
JSON, everything the run-level view of the tab draws (the rank x step cells, the slowest rank and why, the
critical path, the what-ifs)."""

import statistics

from tb_gpu_advisor.analysis.ranks.run import STEP_CAUSES
from tb_gpu_advisor.analysis.ranks.step_time import run_step_ms
from tb_gpu_advisor.analysis.rounding import ms

# Per-call rows kept in the JSON (the calls of the first steps); the per-kind table covers every call.
MAX_CALL_ROWS = 256
_ROW_KEYS = ("step_ms", "compute_ms", "input_ms", "host_ms", "peer_wait_ms", "transfer_ms", "other_ms")
CAUSE_WORDS = {
    "more_compute": "more compute (more work per step than the other ranks: data or model imbalance)",
    "slower_compute": "slower compute for the same work (the same ops or kernels, as many per step, each slower: "
    "clocks, thermals, a slower or shared processor, or a larger input the trace does not show)",
    "input": "a late host: its input (the step waits longer for its batch than the other ranks)",
    "host": "a late host: host work (Python, launches) the other ranks do not wait on as long",
    "late_start": "a late start: it begins its steps after the other ranks by more than it left the previous step's "
    "collectives late (its own work between the collective and the next step, or a gap between its steps)",
}


def ranks_view(run):
    """The `ranks` object of a run report from RunRanks."""
    ranks = [
        _rank(
            info,
            [row[info.position] for row in run.rows],
            run.straggler.held_ms_by_rank[info.position] if run.straggler.held_ms_by_rank else 0.0,
        )
        for info in run.ranks
    ]
    worlds = {info.world_size for info in run.ranks if info.world_size}
    backends = {info.backend for info in run.ranks if info.backend}
    devices = {info.device for info in run.ranks}
    return {
        "rank_count": len(run.ranks),
        "world_size": worlds.pop() if len(worlds) == 1 else None,
        "backend": backends.pop() if len(backends) == 1 else None,
        "device": devices.pop() if len(devices) == 1 else None,
        "step_count": len(run.step_nums),
        "step_time_ms": run_step_ms(run.step_ms),
        "clock": {
            "offsets_from_calls": run.offset_calls,
            "absolute_times": run.same_clock,
            "one_clock": run.one_clock,
            "residual_ms": run.residual_ms,
        },
        "ranks": ranks,
        "steps": [
            {"step": num, "step_time_ms": round(step_time, 6), "cells": [_cell(cell) for cell in row]}
            for num, step_time, row in zip(run.step_nums, run.step_ms, run.rows)
        ],
        "cause_order": list(STEP_CAUSES),
        "collectives": [_kind(row) for row in run.bandwidth],
        "link": run.link,
        "calls": [_call(run, split) for split in run.splits[:MAX_CALL_ROWS]],
        "calls_total": len(run.splits),
        "slowest": _slowest(run),
        "late_peer": _late_peer(run.late_peer),
        "critical_path": [_path(run, path) for path in run.paths],
        "what_if": [_what_if(run, w) for w in run.what_ifs],
        "notes": list(run.notes),
    }


def _rank(info, cells, held):
    means = {key: round(statistics.mean(getattr(c, key) for c in cells), 6) if cells else None for key in _ROW_KEYS}
    return {
        "rank": info.rank if info.rank is not None else info.host,
        "host": info.host,
        "device": info.device,
        "steps": info.steps,
        "clock_offset_ms": info.offset_ms,
        "mean": means,
        "held_others_ms_per_step": held,
    }


def _cell(row):
    return {
        **{key: getattr(row, key) for key in _ROW_KEYS},
        "start_ms": row.start_ms,
        "cause": row.cause,
        "idle_ms": dict(row.idle_ms),
    }


def _kind(row):
    return {
        "collective": row.collective,
        "calls": row.calls,
        "group_size": row.group_size,
        "median_bytes": row.median_bytes,
        "median_transfer_ms": row.median_transfer_ms,
        "median_wait_ms": row.median_wait_ms,
        "busbw_gbps": row.busbw_gbps,
        "link_gbps": row.link_gbps,
        "link_ratio": row.link_ratio,
    }


def _rank_id(run, position):
    if position is None:
        return None
    info = run.ranks[position]
    return info.rank if info.rank is not None else info.host


def _call(run, split):
    return {
        "step": run.step_nums[split.step_index],
        "index": split.call_index,
        "collective": split.collective,
        "bytes": split.bytes,
        "last_rank": _rank_id(run, split.last_rank),
        "wait_ms": [ms(w) for w in split.wait_ps],
        "transfer_ms": [ms(t) for t in split.transfer_ps],
    }


def _slowest(run):
    found = run.straggler
    if found.position is None:
        return None
    return {
        "rank": _rank_id(run, found.position),
        "host": run.ranks[found.position].host,
        "cause": found.cause,
        "cause_text": CAUSE_WORDS[found.cause],
        "as_late": [_rank_id(run, position) for position in found.tied],
        "late_steps": found.late_steps,
        "steps": found.steps,
        "held_others_ms_per_step": found.held_ms_per_step,
        "excess_ms_per_step": dict(found.excess_ms),
        "cause_ms_per_step": found.cause_ms,
        "compute_split_ms": dict(found.compute_split_ms) if found.compute_split_ms else None,
        "evidence": found.evidence,
        "work": [
            {
                "name": d.name,
                "calls_per_step": d.calls_per_step,
                "median_calls_per_step": d.median_calls_per_step,
                "ms_per_step": d.ms_per_step,
                "median_ms_per_step": d.median_ms_per_step,
            }
            for d in found.work
        ],
    }


def _late_peer(found):
    if found is None:
        return None
    return {
        "missing_ranks": list(found.missing),
        "late": found.late,
        "after_arrival_ms_per_step": found.after_arrival_ms_per_step,
        "steps": found.steps,
        "of_steps": found.of_steps,
    }


def _path(run, path):
    return {
        "step": path.step_num,
        "step_ms": ms(path.step_ps),
        "segments": [
            {
                "kind": s.kind,
                "rank": _rank_id(run, s.position),
                "start_ms": ms(s.start_ps),
                "end_ms": ms(s.end_ps),
                "collective": s.collective,
            }
            for s in path.segments
        ],
    }


def _what_if(run, item):
    return {
        "name": item.name,
        "rank": _rank_id(run, item.position),
        "ranks": [_rank_id(run, p) for p in (item.position, *item.tied)] if item.position is not None else [],
        "step_ms": item.step_ms,
        "baseline_ms": item.baseline_ms,
        "speedup": item.speedup,
        "kind": item.kind,
        "assumes": item.assumes,
    }
