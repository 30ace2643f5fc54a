"""Helpers that pick the numbers the scenario tests pin out of a HostReport."""


def summary(report):
    """The headline numbers a scenario test pins."""
    s = report["summary"]
    return {
        "busy": s["gpu_busy_pct"],
        "input_wait": s["input_wait_pct"],
        "step_ms": s["step_time_ms"]["mean"],
        "steps": s["step_time_ms"]["count"],
        "stdev": s["step_time_ms"]["stdev"],
        "source": s["step_source"],
        "kernels": report["launch"]["kernel_count"],
        "kernel_rows": len(report["kernels"]),
    }


def breakdown(report):
    """The non-zero categories of the whole-profile breakdown (percent)."""
    return {key: value for key, value in report["summary"]["breakdown_pct"].items() if value}


def transfer(report, direction):
    t = report["transfers"][direction]
    return (t["count"], t["bytes"], t["time_us"], t["pageable_count"], t["sync_count"])


def host_op_names(model):
    """Every host event name of the trace."""
    return set(model.host_activity.op_totals)
