"""The Collectives section: the calls of each collective kind, their bandwidth and the link it is judged against."""

from __future__ import annotations

from tb_gpu_advisor.report import units
from tb_gpu_advisor.vocabulary import (
    COLLECTIVE_BANDWIDTH_GAPS,
    COLLECTIVE_HEADERS,
    COLLECTIVE_SIZE_SOURCES,
    collective_bandwidth_gap,
    listed,
)
from tb_gpu_advisor.report.section_model import Section, Table


def collectives_section(report: dict) -> Section:
    rows = tuple(
        (
            row["source"],
            row["collective"],
            units.count(row["calls"]),
            f"{row['calls_per_step']:g}" if row.get("calls_per_step") is not None else "-",
            units.duration_us(row["time_us"]),
            units.size_bytes(row["in_bytes"]) if row["in_bytes"] is not None else "-",
            listed(row["dtypes"]) or "-",
            listed(row["group_sizes"]) or "-",
            COLLECTIVE_SIZE_SOURCES.get(row.get("size_source"), row.get("size_source") or "-"),
            issued_by_text(row),
        )
        for row in report["collectives"]
    )
    groups = {row["collective"]: row["group_sizes"] for row in report["collectives"] if row["source"] == "kernel"}
    return Section(
        "Collectives",
        lines=_bandwidth_lines(report.get("collective_bandwidth"), groups),
        table=Table(COLLECTIVE_HEADERS, rows, (False, False, True, True, True, True, False, True, False, False)),
    )


def issued_by_text(row: dict) -> str:
    """The op that issued a collectives row's calls (the most frequent), "kernel name" where only the kernel's
    name told the kind, "-" where nothing did."""
    if row.get("issued_by"):
        return row["issued_by"][0]
    return "kernel name" if "kernel_name" in (row.get("named_from") or ()) else "-"


def _ranks_from(row):
    """Where a bandwidth row's rank count comes from, when not the calls' own args."""
    source = row.get("group_size_source")
    words = {"world_size": "the trace's world size", "process_groups": "the trace's process groups"}
    return f"; {row['group_size']} ranks from {words[source]}" if source in words else ""


def _bandwidth_lines(bandwidth, groups):
    """NCCL-tests bandwidths of the large calls of each collective kind, the link they are judged against, and
    why a kind has none."""
    if not bandwidth:
        return ()
    lines = []
    gaps = []
    for row in bandwidth["collectives"]:
        gap = collective_bandwidth_gap(row, groups.get(row["collective"], ()))
        if gap is not None:
            reason = COLLECTIVE_BANDWIDTH_GAPS[gap]
            gaps.append(
                f"{row['collective']}: {units.count(row['large_calls'])} calls of 8 MiB or more: algbw "
                f"{row['algbw_gbps']:.1f} GB/s, no busbw ({reason})."
                if row.get("algbw_gbps") is not None
                else f"{row['collective']}: no bandwidth ({reason})."
            )
            continue
        ratio = (
            f", {units.percent(100.0 * row['best_busbw_link_ratio'])} of the link"
            if row.get("best_busbw_link_ratio") is not None
            else ""
        )
        lines.append(
            f"{row['collective']}: {units.count(row['large_calls'])} calls of 8 MiB or more: algbw "
            f"{row['algbw_gbps']:.1f} GB/s, busbw {row['busbw_gbps']:.1f} GB/s (median; best "
            f"{row['best_busbw_gbps']:.1f} GB/s{ratio}{_ranks_from(row)})."
        )
    bounds = (
        "These bandwidths are lower bounds: one rank's call time includes waiting for its slowest peer to arrive "
        "(a run of every rank's trace splits the wait from the transfer)."
    )
    link = bandwidth.get("link")
    if lines and link:
        outran = not link.get("known") and any(
            (row.get("best_busbw_gbps") or 0) > link["gbps"] for row in bandwidth["collectives"]
        )
        lines.append(
            f"Link: {link['gbps']:g} GB/s {'NVLink' if link['kind'] == 'nvlink' else 'PCIe'} per GPU "
            f"({link['basis']})."
            + (
                " The best busbw above is faster: these ranks use a faster link than that, so no share of it is given."
                if outran
                else ""
            )
        )
    return tuple(lines + ([bounds] if lines else []) + gaps)
