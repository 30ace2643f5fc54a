"""The Devices, Launch and Transfers sections: each GPU's model and roofs, kernel launches, and copies."""

from __future__ import annotations

from tb_gpu_advisor.report import units
from tb_gpu_advisor.vocabulary import (
    device_label,
    LAUNCH_PAIRING_WORDS,
    MICRO,
    TRANSFER_LABELS,
)
from tb_gpu_advisor.report.section_model import Section, Table


def corrected_why(d: dict) -> str:
    """Why the HBM roof differs from the trace's figure, in a few words."""
    if (d.get("peak_gbps_source") or "").startswith("published"):
        return "the published figure for this model"
    return "ROCm reports half the HBM peak" if d.get("vendor") == "AMD" else "see peak_gbps_source"


def _device_model(d):
    parts = [d["model_name"] or "GPU"]
    if d["compute_capability"]:
        parts.append(f"cc {d['compute_capability']}")
    elif d.get("arch"):
        parts.append(d["arch"])
    if d["sm_count"]:
        parts.append(f"{d['sm_count']} {'CUs' if d.get('vendor') == 'AMD' else 'SMs'}")
    if d["clock_mhz"]:
        parts.append(f"{d['clock_mhz']:.0f} MHz")
    hbm = d.get("peak_gbps") or d["memory_bandwidth_gbps"]
    if hbm:
        corrected = (
            d.get("peak_gbps")
            and d["memory_bandwidth_gbps"]
            and abs(d["peak_gbps"] - d["memory_bandwidth_gbps"]) > 0.01 * d["peak_gbps"]
        )
        parts.append(
            f"{hbm:.0f} GB/s HBM"
            + (
                f" (the trace says {d['memory_bandwidth_gbps']:.0f}: corrected, {corrected_why(d)})"
                if corrected
                else ""
            )
        )
    if d["memory_bytes"]:
        parts.append(f"{d['memory_bytes'] / 2**30:.0f} GiB")
    return ", ".join(parts)


def devices_section(report: dict) -> Section:
    rows = []
    idle = [d["name"].rsplit(":", 1)[-1] for d in report["devices"] if d["busy_pct"] is None]
    models: dict = {}
    multi = report["summary"]["active_gpu_count"] > 1
    for d in report["devices"]:
        models.setdefault(_device_model(d), []).append(d["name"].rsplit(":", 1)[-1])
        if d["busy_pct"] is None:
            continue
        split = (units.percent(d.get("compute_busy_pct")), units.percent(d.get("collective_busy_pct"))) if multi else ()
        rows.append(
            (device_label(d["name"], report.get("trace_format")), units.percent(d["busy_pct"]))
            + split
            + (
                units.count(d["kernel_count"]),
                units.duration_us(d["kernel_time_us"]),
                units.duration_us(d["memcpy_time_us"]),
                units.duration_us(d["nccl_time_us"]),
                units.duration_us(d["largest_gap_us"]),
            )
        )
    lines = [f"{len(ids)} x {model}" for model, ids in models.items()]
    if idle:
        lines.append(f"No activity on GPU {', '.join(idle)}.")
    headers = (
        ("device", "busy")
        + (("compute", "collectives only") if multi else ())
        + ("kernels", "kernel time", "copies", "NCCL", "largest gap")
    )
    return Section(
        "GPUs",
        lines=tuple(lines),
        table=Table(headers, tuple(rows), (False,) + (True,) * (len(headers) - 1)) if rows else None,
    )


def launch_section(report: dict) -> Section:
    launch = report["launch"]
    latency = launch["latency_us"]
    calls = launch.get("paired_call_count") or 0
    # Graph (command-buffer) launches replay many kernels under one call: those kernels have no launch of their own.
    graph = 0 < calls < launch["count"]
    paired = LAUNCH_PAIRING_WORDS["graph" if graph else "kernels"].format(
        paired=units.count(launch["count"]),
        kernels=units.count(launch["kernel_count"]),
        calls=units.count(calls),
        s="" if calls == 1 else "s",
    ) + ("; launch-to-start latency per call" if graph else "; launch-to-start latency")
    lines: tuple[str, ...] = (
        f"{paired} p50 {units.duration_us(latency['p50'])}, p95 {units.duration_us(latency['p95'])}",
        f"Tiny kernels (< 10 {MICRO}): {units.count(launch['tiny_kernel_count'])} "
        f"({units.percent(launch['tiny_kernel_pct'])})"
        + (f"   kernels per step: {launch['per_step']:,.1f}" if launch["per_step"] is not None else ""),
    )
    blocked = launch.get("queue_full") or {}
    if blocked.get("count"):
        calls = "launch, copy or memset call" + ("" if blocked["count"] == 1 else "s")
        lines += (
            f"{units.count(blocked['count'])} {calls} waited for a full launch queue "
            f"({units.duration_us(blocked['time_us'])}) while the GPU worked through earlier work: host "
            "waits, not launch time.",
        )
    return Section("Kernel launch", lines=lines)


def transfers_section(report: dict) -> Section:
    rows = []
    for key, t in report["transfers"].items():
        if not t["count"]:
            continue
        rows.append(
            (
                TRANSFER_LABELS[key],
                units.count(t["count"]),
                units.size_bytes(t["bytes"]) if t["bytes"] else "not recorded",
                units.duration_us(t["time_us"]),
                units.rate_gbps(t["gbps"]),
                units.count(t["pageable_count"]),
                units.count(t["sync_count"]),
            )
        )
    return Section(
        "Transfers",
        table=Table(
            ("direction", "count", "bytes", "time", "bandwidth", "pageable", "sync"),
            tuple(rows),
            (False,) + (True,) * 6,
        ),
    )
