"""Collectives moving data below the link's bandwidth (communication.collective_below_link)."""

from __future__ import annotations

from tb_gpu_advisor.analysis.collective_bandwidth import LARGE_COLLECTIVE_BYTES
from tb_gpu_advisor.findings.finding import Evidence, Finding, limit
from tb_gpu_advisor.findings.thresholds import (
    COLLECTIVE_LOW_BUSBW_FRACTION,
    COLLECTIVE_MIN_LARGE_CALLS,
    COLLECTIVE_REACHABLE_FRACTION,
    COLLECTIVES_MEDIUM_PCT,
)

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.findings.context import Context


def collective_below_link(ctx: Context) -> Finding | None:
    """The fastest large call of a collective kind reaches < COLLECTIVE_LOW_BUSBW_FRACTION of the link's practical
    bus bandwidth, and that kind takes >= COLLECTIVES_MEDIUM_PCT of the step. Needs sized calls (PyTorch 2.1+;
    XPlane through the HLO instruction or the TensorFlow op's shapes)."""
    link = ctx.analysis.link
    if not ctx.has_gpu or link is None:
        return None
    slow = [
        row
        for row in ctx.analysis.collective_bandwidth
        if row.best_busbw_link_ratio is not None
        and row.large_calls >= COLLECTIVE_MIN_LARGE_CALLS
        and row.best_busbw_link_ratio < COLLECTIVE_LOW_BUSBW_FRACTION
        and min(100.0, ctx.share_pct(row.total_ms)) >= COLLECTIVES_MEDIUM_PCT
    ]
    if not slow:
        return None
    row = slow[0]
    reachable = COLLECTIVE_REACHABLE_FRACTION * link.gbps
    saved_ms = round(row.total_ms * max(0.0, 1.0 - row.busbw_gbps / reachable), 3)
    exposed_ms = ctx.category_ms("collectives")
    recoverable = min(saved_ms, exposed_ms)
    share = min(100.0, ctx.share_pct(row.total_ms))
    return Finding(
        id="communication.collective_below_link",
        severity="medium" if link.known else "low",
        summary=f"{row.collective} moves data at {row.busbw_gbps:.1f} GB/s bus bandwidth (median of "
        f"{row.large_calls} calls of {row.median_bytes / 2**20:.0f} MiB median; best {row.best_busbw_gbps:.1f}"
        f" GB/s), {100 * row.best_busbw_link_ratio:.0f}% of the {link.gbps:.0f} GB/s "
        f"{'NVLink' if link.kind == 'nvlink' else 'PCIe'} gives at best; it takes {share:.1f}% of the step.",
        evidence=Evidence(
            {
                "collective": row.collective,
                "ranks": row.group_size,
                "calls": row.calls,
                "large_calls": row.large_calls,
                "median_bytes": row.median_bytes,
                "algbw_gbps": row.algbw_gbps,
                "busbw_gbps": row.busbw_gbps,
                "best_busbw_gbps": row.best_busbw_gbps,
                "link": link.kind,
                "link_known": link.known,
                "link_gbps": link.gbps,
                "best_busbw_link_ratio": row.best_busbw_link_ratio,
                "collective_ms": row.total_ms,
                "collective_pct": share,
                "collectives_exposed_ms": round(exposed_ms, 3),
            },
            limit(
                "best_busbw_link_ratio",
                row.best_busbw_link_ratio,
                COLLECTIVE_LOW_BUSBW_FRACTION,
                direction="below",
                large_call_bytes_at_least=LARGE_COLLECTIVE_BYTES,
                collective_pct_above=COLLECTIVES_MEDIUM_PCT,
            ),
            {"devices": [gpu.name for gpu in ctx.active_gpus][:4]},
        ),
        recoverable_ms=recoverable,
        window_ms=ctx.window_ms,
        speedup_basis=f"upper bound: the {row.collective} calls at {100 * COLLECTIVE_REACHABLE_FRACTION:.0f}% of "
        "the link's bus bandwidth, counted only where no compute hides them",
        fix_note=f"Link: {link.basis}. Kernel times include waiting for the slowest rank, so the median is a "
        "lower bound of the bandwidth; the best call shows what the link and NCCL's settings allowed.",
    )
