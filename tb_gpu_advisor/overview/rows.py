"""Overview rows from host reports (pure): a run's summary, and its change against the previous run of its
series (a run directory: the TensorBoard run holding plugins/profile, or a PyTorch run's directory), the series'
runs ordered by capture time."""

SEVERITY_RANK = {"high": 0, "medium": 1, "low": 2}


def run_summary(report):
    """The overview's summary of one HostReport dict: verdict, confidence, step time, GPU busy, top finding."""
    summary = report.get("summary") or {}
    findings = report.get("findings") or []
    top = findings[0] if findings else None
    step_time = summary.get("step_time_ms") or {}
    confidence = summary.get("confidence") or {}
    return {
        "bottleneck": summary.get("bottleneck"),
        "verdict": summary.get("verdict"),
        "confidence": confidence.get("level"),
        "step_time_ms": step_time.get("mean"),
        "step_count": step_time.get("count"),
        "gpu_busy_pct": summary.get("gpu_busy_pct"),
        "top_finding": None
        if top is None
        else {
            "id": top.get("id"),
            "title": top.get("title"),
            "severity": top.get("severity"),
            "estimated_speedup": top.get("estimated_speedup"),
            "speedup_kind": top.get("speedup_kind"),
        },
    }


def series_of(run):
    """The series a run id belongs to: the id without its last component ("" for runs at the logdir's root)."""
    return run.rsplit("/", 1)[0] if "/" in run else ""


def _oldest_first(row):
    """Capture time (`captured_at`, seconds; runs of unknown time first), then the run name (XPlane names are
    times)."""
    captured = row.get("captured_at")
    return (captured is not None, captured or 0.0, row["run"].rsplit("/", 1)[-1], row["run"])


def with_changes(rows):
    """`rows` ({run, summary, series?, captured_at?, ...}) each with `change`: against the next older run of the
    same series (`series` when given, else series_of(run)) that has a summary, {previous_run, step_time_pct,
    gpu_busy_pct_points} (a number is null where a side lacks it), else null."""
    previous = {}
    for row in sorted(rows, key=_oldest_first):
        series = row["series"] if row.get("series") is not None else series_of(row["run"])
        older = previous.get(series)
        row["change"] = _change(older, row) if older is not None and row.get("summary") else None
        if row.get("summary"):
            previous[series] = row
    return rows


def _change(older, newer):
    before, after = older["summary"], newer["summary"]
    step_pct = None
    if before.get("step_time_ms") and after.get("step_time_ms") is not None:
        step_pct = round(100.0 * (after["step_time_ms"] - before["step_time_ms"]) / before["step_time_ms"], 2)
    busy = None
    if before.get("gpu_busy_pct") is not None and after.get("gpu_busy_pct") is not None:
        busy = round(after["gpu_busy_pct"] - before["gpu_busy_pct"], 2)
    return {"previous_run": older["run"], "step_time_pct": step_pct, "gpu_busy_pct_points": busy}
