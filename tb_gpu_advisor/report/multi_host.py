"""The run's multi-host view: each host's step time, the slowest host and how unequal the hosts are.

In synchronous data-parallel training every host waits for the slowest one at each collective, so the spread
of mean step times across hosts is time the faster hosts spend waiting.
"""

from tb_gpu_advisor.report import units
from tb_gpu_advisor.report.sections import Section, Table


def multi_host_view(host_reports):
    """The `multi_host` object of a run report from its HostReports (meaningful with two hosts or more)."""
    hosts = []
    for report in host_reports:
        summary = report["summary"]
        steps = summary["step_time_ms"]
        hosts.append({
            "host": report["host"],
            "step_time_ms": steps["mean"],
            "step_time_median_ms": steps["median"],
            "step_count": steps["count"],
            "gpu_busy_pct": summary["gpu_busy_pct"],
            "gpu_compute_busy_pct": summary.get("gpu_compute_busy_pct"),
            "input_wait_pct": summary["input_wait_pct"],
        })
    timed = [h for h in hosts if h["step_time_ms"] is not None]
    slowest = max(timed, key=lambda h: h["step_time_ms"], default=None)
    fastest = min(timed, key=lambda h: h["step_time_ms"], default=None)
    spread = slowest["step_time_ms"] - fastest["step_time_ms"] if len(timed) >= 2 else None
    return {
        "host_count": len(hosts),
        "hosts": hosts,
        "slowest_host": slowest["host"] if len(timed) >= 2 else None,
        "fastest_host": fastest["host"] if len(timed) >= 2 else None,
        "step_time_ms_min": round(fastest["step_time_ms"], 6) if len(timed) >= 2 else None,
        "step_time_ms_max": round(slowest["step_time_ms"], 6) if len(timed) >= 2 else None,
        "step_time_spread_ms": round(spread, 6) if spread is not None else None,
        "imbalance_pct": round(100.0 * spread / slowest["step_time_ms"], 2)
        if spread is not None and slowest["step_time_ms"] > 0 else None,
    }


def multi_host_sections(run_report):
    """Text/markdown sections of the multi-host view (none for a single host)."""
    view = run_report.get("multi_host")
    if not view:
        return []
    lines = []
    if view["slowest_host"] is not None:
        lines.append(f"Slowest host: {view['slowest_host']} at {units.duration_ms(view['step_time_ms_max'])} per "
                     f"step; fastest: {view['fastest_host']} at {units.duration_ms(view['step_time_ms_min'])}; "
                     f"imbalance {units.percent(view['imbalance_pct'])} of the slowest host's step (time the "
                     "others wait for it at each collective).")
    else:
        lines.append("Fewer than two hosts have step markers: no cross-host comparison of step times.")
    rows = tuple((h["host"], units.duration_ms(h["step_time_ms"]), units.count(h["step_count"]),
                  units.percent(h.get("gpu_compute_busy_pct")), units.percent(h["gpu_busy_pct"]),
                  units.percent(h["input_wait_pct"])) for h in view["hosts"])
    table = Table(("host", "mean step", "steps", "compute busy", "GPU busy", "input wait"), rows,
                  (False, True, True, True, True, True))
    return [Section(f"Hosts ({view['host_count']})", lines=tuple(lines), table=table)]
