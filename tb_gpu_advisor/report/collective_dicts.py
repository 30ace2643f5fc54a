"""The collectives and collective_bandwidth entries of a HostReport."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.analysis.collective_bandwidth import CollectiveBandwidth
    from tb_gpu_advisor.analysis.collective_bandwidth import Link


def collective_bandwidth_dict(link: Link | None, rows: tuple[CollectiveBandwidth, ...]) -> dict:
    """Per collective kind: sizes and NCCL-tests bandwidths against the link (analysis.collective_bandwidth)."""
    return {
        "link": None
        if link is None
        else {"kind": link.kind, "gbps": link.gbps, "known": link.known, "basis": link.basis},
        "collectives": [
            {
                "collective": row.collective,
                "calls": row.calls,
                "sized_calls": row.sized_calls,
                "group_size": row.group_size,
                "median_bytes": row.median_bytes,
                "time_ms": row.total_ms,
                "large_calls": row.large_calls,
                "algbw_gbps": row.algbw_gbps,
                "busbw_gbps": row.busbw_gbps,
                "best_busbw_gbps": row.best_busbw_gbps,
                "best_busbw_link_ratio": row.best_busbw_link_ratio,
                "size_source": row.size_source,
                "group_size_source": row.group_size_source,
            }
            for row in rows
        ],
    }


def collectives_list(calls, step_count=0):
    """Collective calls grouped by where they were recorded and which collective; sizes where recorded, calls
    per step (per GPU for kernels), where the kind was read and the ops that issued them."""
    groups = {}
    for call in calls:
        entry = groups.setdefault(
            (call.source, call.collective),
            {
                "source": call.source,
                "collective": call.collective,
                "calls": 0,
                "time_us": 0.0,
                "in_bytes": 0,
                "out_bytes": 0,
                "sized_calls": 0,
                "dtypes": set(),
                "group_sizes": set(),
                "size_sources": set(),
                "named_from": set(),
                "issued_by": {},
                "devices": set(),
            },
        )
        entry["calls"] += 1
        entry["devices"].add(call.device)
        if call.named_from:
            entry["named_from"].add(call.named_from)
        if call.issued_by:
            entry["issued_by"][call.issued_by] = entry["issued_by"].get(call.issued_by, 0) + 1
        entry["time_us"] += call.duration_ps / 1e6
        if call.in_bytes is not None:
            entry["sized_calls"] += 1
            entry["in_bytes"] += call.in_bytes
            entry["out_bytes"] += call.out_bytes or 0
            entry["size_sources"].add(call.size_source or "profiler")
        if call.dtype:
            entry["dtypes"].add(call.dtype)
        if call.group_size is not None:
            entry["group_sizes"].add(call.group_size)
    rows = []
    for entry in groups.values():
        sized = entry.pop("sized_calls")
        sources = sorted(entry.pop("size_sources"))
        issuers, devices = entry.pop("issued_by"), len(entry.pop("devices"))
        per_step = round(entry["calls"] / devices / step_count, 2) if step_count else None
        rows.append(
            {
                **entry,
                "time_us": round(entry["time_us"], 3),
                "size_source": ", ".join(sources) or None,
                "calls_per_step": per_step,
                "named_from": sorted(entry["named_from"]),
                "issued_by": sorted(issuers, key=lambda name: (-issuers[name], name))[:3],
                "in_bytes": entry["in_bytes"] if sized else None,
                "out_bytes": entry["out_bytes"] if sized else None,
                "dtypes": sorted(entry["dtypes"]),
                "group_sizes": sorted(entry["group_sizes"]),
            }
        )
    return sorted(rows, key=lambda row: (row["source"], -row["time_us"], row["collective"]))
