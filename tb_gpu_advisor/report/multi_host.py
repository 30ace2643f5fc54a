"""The run's multi-host view: each host's step time, the slowest host and how unequal the hosts are.

In synchronous data-parallel training every host's step ends at the same collective, so the hosts' mean step
times are equal but for where each host's step markers fall: a host's step time holds its waits for the others,
and a wait is never evidence that the waiter is slow. When the hosts are ranks joined on one timeline (the run
report's `ranks`), the slowest host and the imbalance are the Ranks verdict's (the rank the others wait for, and
the time they wait for it over the run's step); otherwise the straggler shows in each host's compute per step,
not in its step time.
"""

from __future__ import annotations

from tb_gpu_advisor.report import units
from tb_gpu_advisor.report.section_model import Section, Table


def multi_host_view(host_reports, ranks=None, rank_hosts=None):
    """The `multi_host` object of a run report from its HostReports (meaningful with two hosts or more).

    `ranks`: the run report's `ranks` object when the hosts are ranks joined on one timeline, with `rank_hosts`
    mapping its rank ids to host names: the slowest host and the imbalance are then its verdict's."""
    hosts = []
    for report in host_reports:
        summary = report["summary"]
        steps = summary["step_time_ms"]
        hosts.append(
            {
                "host": report["host"],
                "step_time_ms": steps["mean"],
                "step_time_median_ms": steps["median"],
                "step_count": steps["count"],
                "gpu_busy_pct": summary["gpu_busy_pct"],
                "gpu_compute_busy_pct": summary.get("gpu_compute_busy_pct"),
                "input_wait_pct": summary["input_wait_pct"],
                "compute_ms_per_step": _compute_ms_per_step(report),
            }
        )
    timed = [h for h in hosts if h["step_time_ms"] is not None]
    slowest = max(timed, key=lambda h: h["step_time_ms"], default=None)
    fastest = min(timed, key=lambda h: h["step_time_ms"], default=None)
    spread = slowest["step_time_ms"] - fastest["step_time_ms"] if len(timed) >= 2 else None
    view = {
        "host_count": len(hosts),
        "hosts": hosts,
        "ranks_joined": False,
        "slowest_host": slowest["host"] if len(timed) >= 2 else None,
        "fastest_host": fastest["host"] if len(timed) >= 2 else None,
        "step_time_ms_min": round(fastest["step_time_ms"], 6) if len(timed) >= 2 else None,
        "step_time_ms_max": round(slowest["step_time_ms"], 6) if len(timed) >= 2 else None,
        "step_time_spread_ms": round(spread, 6) if spread is not None else None,
        "imbalance_pct": round(100.0 * spread / slowest["step_time_ms"], 2)
        if spread is not None and slowest["step_time_ms"] > 0
        else None,
        **_compute_view(hosts),
    }
    return _from_ranks(view, ranks, rank_hosts or {}) if ranks else view


def _from_ranks(view, ranks, rank_hosts):
    """The view with the Ranks verdict's slowest host (the rank the others wait for, or none) and imbalance (the
    time the others wait for it per step, over the run's step): never the host with the longest step, which is a
    waiter's as often as not."""
    slow = ranks.get("slowest")
    step = ranks.get("step_time_ms")
    held = slow["held_others_ms_per_step"] if slow else None
    return {
        **view,
        "ranks_joined": True,
        "slowest_host": rank_hosts.get(slow["rank"], slow["host"]) if slow else None,
        "fastest_host": None,
        "imbalance_pct": round(100.0 * held / step, 2) if held is not None and step else None,
    }


def _compute_ms_per_step(report):
    """Non-collective kernel time per step of the host's busiest GPU (kernel time - NCCL time, over the steps)."""
    steps = report["summary"]["step_time_ms"]["count"]
    per_gpu = [
        (d["kernel_time_us"] or 0.0) - (d["nccl_time_us"] or 0.0)
        for d in report["devices"]
        if d.get("busy_pct") is not None and d.get("kernel_time_us") is not None
    ]
    if not steps or not per_gpu:
        return None
    return round(max(per_gpu) / 1000.0 / steps, 3)


def _compute_view(hosts):
    """The host with the most compute per step: the one the others wait for in synchronous training."""
    timed = [h for h in hosts if h["compute_ms_per_step"] is not None]
    if len(timed) < 2:
        return {
            "most_compute_host": None,
            "compute_ms_per_step_min": None,
            "compute_ms_per_step_max": None,
            "compute_spread_ms": None,
            "compute_imbalance_pct": None,
        }
    most = max(timed, key=lambda h: h["compute_ms_per_step"])
    least = min(timed, key=lambda h: h["compute_ms_per_step"])
    spread = most["compute_ms_per_step"] - least["compute_ms_per_step"]
    return {
        "most_compute_host": most["host"],
        "compute_ms_per_step_min": least["compute_ms_per_step"],
        "compute_ms_per_step_max": most["compute_ms_per_step"],
        "compute_spread_ms": round(spread, 3),
        "compute_imbalance_pct": round(100.0 * spread / most["compute_ms_per_step"], 2)
        if most["compute_ms_per_step"] > 0
        else None,
    }


def multi_host_sections(run_report: dict) -> list:
    """Text/markdown sections of the multi-host view (none for a single host)."""
    view = run_report.get("multi_host")
    if not view:
        return []
    lines = []
    if view.get("ranks_joined"):
        lines.append(_joined_line(run_report.get("ranks") or {}, view))
    elif view["slowest_host"] is not None and not view["step_time_spread_ms"]:
        lines.append(
            f"Every host takes {units.duration_ms(view['step_time_ms_max'])} per step (synchronous "
            "training makes step times equal, so they cannot show a straggler)."
        )
    elif view["slowest_host"] is not None:
        lines.append(
            f"Slowest host: {view['slowest_host']} at {units.duration_ms(view['step_time_ms_max'])} per "
            f"step; fastest: {view['fastest_host']} at {units.duration_ms(view['step_time_ms_min'])}; "
            f"imbalance {units.percent(view['imbalance_pct'])} of the slowest host's step (time the "
            "others wait for it at each collective)."
        )
    else:
        lines.append("Fewer than two hosts have step markers: no cross-host comparison of step times.")
    if view.get("most_compute_host") is not None:
        lines.append(
            f"Most compute per step: {view['most_compute_host']} "
            f"({units.duration_ms(view['compute_ms_per_step_max'])} on its busiest GPU, "
            f"{units.percent(view['compute_imbalance_pct'])} more than the least, "
            f"{units.duration_ms(view['compute_ms_per_step_min'])})"
            + (
                ": who the others wait for is the Ranks section's verdict, from each rank's arrivals."
                if view.get("ranks_joined")
                else ": in synchronous training the other hosts wait for it at each collective."
            )
        )
    rows = tuple(
        (
            h["host"],
            units.duration_ms(h["step_time_ms"]),
            units.count(h["step_count"]),
            units.duration_ms(h.get("compute_ms_per_step")),
            units.percent(h.get("gpu_compute_busy_pct")),
            units.percent(h["gpu_busy_pct"]),
            units.percent(h["input_wait_pct"]),
        )
        for h in view["hosts"]
    )
    table = Table(
        ("host", "mean step", "steps", "compute/step", "compute busy", "GPU busy", "input wait"),
        rows,
        (False, True, True, True, True, True, True),
    )
    return [Section(f"Hosts ({view['host_count']})", lines=tuple(lines), table=table)]


def _joined_line(ranks, view):
    """The Hosts section's verdict when the hosts are ranks joined on one timeline: the Ranks section's."""
    spread = view["step_time_spread_ms"]
    steps = (
        f"Their mean step times differ by {units.duration_ms(spread)}: where each rank's step markers fall around "
        "the shared collectives (a rank's step holds its waits for the others), not which rank is slow"
        if spread
        else "Their mean step times are equal (every rank's step ends at the same collective)"
    )
    slow = ranks.get("slowest")
    peer = ranks.get("late_peer")
    if slow is None and peer and peer.get("late"):
        return f"{steps}; the captured hosts wait for a rank that was not captured (the Ranks section's verdict)."
    if slow is None:
        return f"{steps}; no host holds the others back (the Ranks section's verdict)."
    return (
        f"{steps}; the host the others wait for is {view['slowest_host']} (rank {slow['rank']}, the Ranks "
        f"section's verdict): {units.duration_ms(slow['held_others_ms_per_step'])} per step, "
        f"{units.percent(view['imbalance_pct'])} of the run's step."
    )
