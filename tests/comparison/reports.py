"""HostReport-shaped dicts built from step times, for exact comparison tests."""

from tb_gpu_advisor.analysis.breakdown import BREAKDOWN_CATEGORIES


def host_from_steps(times_ms, category="input_wait", share=0.5, busy=None, host="h", kernels=(), findings=()):
    """A HostReport dict with the keys comparisons read: each step spends `share` of its time in `category`
    and the rest in compute_32bit; `busy` is the GPU busy % of each step (None: no GPU)."""
    steps = []
    for index, time_ms in enumerate(times_ms):
        breakdown = dict.fromkeys(BREAKDOWN_CATEGORIES, 0.0)
        breakdown[category] = time_ms * share
        breakdown["compute_32bit"] += time_ms * (1 - share)
        steps.append(
            {
                "name": f"step {index}",
                "step_num": index,
                "start_ms": 0.0,
                "time_ms": time_ms,
                "gpu_busy_pct": 0.0 if busy is None else busy,
                "breakdown_ms": breakdown,
            }
        )
    total = sum(times_ms) or 1.0
    pct = {name: round(100 * sum(s["breakdown_ms"][name] for s in steps) / total, 2) for name in BREAKDOWN_CATEGORIES}
    count = len(times_ms)
    mean = sum(times_ms) / count if count else None
    return {
        "host": host,
        "file": f"/{host}.xplane.pb",
        "summary": {
            "gpu_busy_pct": busy,
            "input_wait_pct": pct["input_wait"],
            "step_time_ms": {
                "mean": mean,
                "median": sorted(times_ms)[count // 2] if count else None,
                "stdev": None,
                "count": count,
            },
            "step_source": "host" if count else "none",
            "gpu_count": 0 if busy is None else 1,
            "active_gpu_count": 0 if busy is None else 1,
            "analysis_window_ms": total,
            "breakdown_pct": pct,
        },
        "devices": [] if busy is None else [{"name": "/device:GPU:0", "busy_pct": busy}],
        "kernels": [
            {
                "name": name,
                "total_us": total_us,
                "occurrences": occurrences,
                **dict(zip(("op_name", "grid", "block"), list(more) + [None] * (3 - len(more)))),
            }
            for name, total_us, occurrences, *more in kernels
        ],
        "steps": steps,
        "notes": [],
        "findings": list(findings),
    }
