"""The verdict of a CPU-only profile that no input or eager-dispatch finding explains, from its time breakdown: a
step that is mostly its own host compute is host-bound (without a GPU the host's compute is the model's work); a
step that is mostly collectives is waiting, on one rank's trace possibly for the other ranks, which is no evidence
that this rank is slow. Otherwise no verdict (None)."""

from __future__ import annotations

from tb_gpu_advisor.analysis.capture_facts import world_size
from tb_gpu_advisor.findings.thresholds import VERDICT_MIN_PCT

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from tb_gpu_advisor.findings.context import Context

# The share of the step its own host compute must take for the verdict to call the step host-bound: most of it.
CPU_WORK_MIN_PCT = 50.0
# Collectives at least this share of the step are named beside a host-bound verdict.
COLLECTIVES_NAMED_MIN_PCT = 1.0


def cpu_verdict(ctx: Context, breakdown: dict, pct: Callable[[float], str]) -> tuple[str, str] | None:
    """(bottleneck, sentence) for `summary.bottleneck` and the verdict ("unknown": the reason after "Unknown: "),
    or None; `pct` writes a share as the verdict does."""
    host = breakdown.get("host") or 0.0
    collectives = breakdown.get("collectives") or 0.0
    world = world_size(ctx.model)
    ranks = (
        f" In a {world}-rank job, peers whose steps are mostly collectives wait for a rank like this one: analyze "
        "the run directory, whose Ranks section shows which rank is late."
        if world > 1
        else ""
    )
    waits = " (time that includes waiting for the other ranks)" if world > 1 else ""
    if host >= CPU_WORK_MIN_PCT and host >= collectives:
        beside = f"; collectives take {pct(collectives)}{waits}" if collectives >= COLLECTIVES_NAMED_MIN_PCT else ""
        return (
            "host",
            f"Host-bound: the step computes on the CPU {pct(host)} of its time (no GPU work in this profile: the "
            f"model's own compute runs on the host){beside}.{ranks}",
        )
    if collectives >= VERDICT_MIN_PCT and collectives > host:
        return (
            "unknown",
            f"the step spends {pct(collectives)} of its time in collectives and computes on the CPU {pct(host)} (no "
            "GPU work in this profile); time in a collective on one rank's trace includes waiting for the other "
            "ranks, which is no evidence that this rank is slow."
            + (" Analyze the run directory: its Ranks section shows which rank is late." if world > 1 else ""),
        )
    return None
