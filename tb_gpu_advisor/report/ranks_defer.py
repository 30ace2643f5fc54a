"""The slowest rank's own findings in a joined run: their speedups are of its own step alone, and the run-level
what-if (the Ranks section's) says what fixing its cause would give the run, so each finding on its cause says so
and quotes it, rather than leaving a smaller per-rank figure to stand for the same fix."""

from __future__ import annotations

from tb_gpu_advisor.report import units

# The finding categories that speak to each straggler cause (ranks.slowest.cause).
CAUSE_CATEGORIES = {
    "input": ("input",),
    "host": ("host", "launch", "sync", "threading"),
    "more_compute": ("kernel", "fusion", "precision", "occupancy", "placement", "batch"),
    "slower_compute": ("kernel", "fusion", "precision", "occupancy", "placement"),
}


def defer_to_run(hosts, ranks, rank_hosts):
    """Adds to each finding of the slowest rank's host report (in `hosts`, named by `rank_hosts[rank]`) on the
    straggler's cause, with a speedup, the run-level what-if of that rank at the median; changes nothing when no
    rank holds the others back or the what-if has no step time."""
    slow = ranks.get("slowest")
    what_if = next((w for w in ranks.get("what_if", ()) if w["name"] == "rank_at_median"), None)
    if not slow or not what_if or what_if.get("step_ms") is None:
        return
    name = rank_hosts.get(slow["rank"], slow["host"])
    host = next((h for h in hosts if h.get("host") == name), None)
    categories = CAUSE_CATEGORIES.get(slow["cause"], ())
    for finding in (host or {}).get("findings", ()):
        if finding.get("category") not in categories or not finding.get("estimated_speedup"):
            continue
        phrase = units.speedup_phrase(finding["estimated_speedup"], finding.get("speedup_kind"))
        finding["summary"] = f"{finding['summary']} {_words(slow, what_if, phrase)}"
        finding["speedup_basis"] = (
            f"{finding.get('speedup_basis') or 'this rank'}; of this rank's own step alone: the run's step, which "
            "the other ranks wait on it for, is ranks.what_if rank_at_median's"
        )


def _words(slow, what_if, phrase):
    movers = what_if.get("ranks") or [slow["rank"]]
    who = f"rank {movers[0]}" if len(movers) == 1 else "ranks " + ", ".join(str(r) for r in movers)
    own = f"the {phrase} here is this rank's own step alone" if phrase else "the figure here is this rank's own step"
    return (
        f"The other ranks wait for this rank ({units.duration_ms(slow['held_others_ms_per_step'])} per step): "
        f"{own}; for the run, the Ranks section's what-if if {who} matched the median rank (a model) gives "
        f"{units.duration_ms(what_if['step_ms'])} per step instead of {units.duration_ms(what_if['baseline_ms'])} "
        f"(about {what_if['speedup']:.2f}{units.TIMES})."
    )
