"""The HTML report's charts: the steps' breakdown, busy time, kernels and the roofline, as inline SVG figures."""

from tb_gpu_advisor.report import charts, units
from tb_gpu_advisor.report.kernel_sections import kernel_row_labels
from tb_gpu_advisor.report.html_escape import _e
from tb_gpu_advisor.vocabulary import BREAKDOWN_LABELS, MICRO, device_label

STEPS_CHARTED = 60
KERNELS_CHARTED = 10
BAR_LABEL_WIDTH = 44


def _figure(caption, svg, extra=""):
    return f"<figure>{svg}{extra}<figcaption>{_e(caption)}</figcaption></figure>"


def _charts(host):
    s = host["summary"]
    series = [(key, label, charts.CATEGORY_COLORS[key]) for key, label in BREAKDOWN_LABELS.items()]
    out = ["<h3>Charts</h3>"]
    shares = [(BREAKDOWN_LABELS[k], v, charts.CATEGORY_COLORS[k]) for k, v in s["breakdown_pct"].items() if v]
    if shares:
        out.append(
            _figure(
                "Where the time went: share of the analysed time per category.",
                charts.share_bar(shares, "time breakdown"),
            )
        )
    steps = host["steps"][:STEPS_CHARTED]
    if steps:
        used = [(k, label, color) for k, label, color in series if any(st["breakdown_ms"].get(k) for st in steps)]
        columns = [
            (str(st["step_num"] if st["step_num"] is not None else index), st["breakdown_ms"])
            for index, st in enumerate(steps)
        ]
        more = f" (first {STEPS_CHARTED} of {len(host['steps'])})" if len(host["steps"]) > STEPS_CHARTED else ""
        out.append(
            _figure(
                f"Step time breakdown per step{more}.",
                charts.stacked_columns(
                    columns, used, units.duration_ms, "step breakdown", "step time", axis_format=units.duration_axis_ms
                ),
                charts.legend([(label, color) for _, label, color in used]),
            )
        )
    devices = [d for d in host["devices"] if d["busy_pct"] is not None]
    if devices:
        rows = [
            (
                device_label(d["name"], host.get("trace_format")),
                d["busy_pct"],
                f"{device_label(d['name'], host.get('trace_format'))}: busy {units.percent(d['busy_pct'])}, compute "
                f"{units.percent(d.get('compute_busy_pct'))}, collectives only "
                f"{units.percent(d.get('collective_busy_pct'))}",
            )
            for d in devices
        ]
        out.append(
            _figure(
                "GPU busy per device (share of the host's analysis window with a kernel, copy or memset; "
                "hover for compute and collectives-only time).",
                charts.horizontal_bars(rows, units.percent, "GPU busy per device", max_value=100.0),
            )
        )
        if len(devices) > 1:
            rows = [
                (
                    device_label(d["name"], host.get("trace_format")),
                    d.get("compute_busy_pct") or 0.0,
                    f"{device_label(d['name'], host.get('trace_format'))}: compute busy {units.percent(d.get('compute_busy_pct'))}",
                )
                for d in devices
            ]
            out.append(
                _figure(
                    "GPU compute busy per device (busy time outside collectives: a straggler shows least).",
                    charts.horizontal_bars(rows, units.percent, "GPU compute busy per device", max_value=100.0),
                )
            )
    kernels = host["kernels"][:KERNELS_CHARTED]
    if kernels:
        rows = [
            (label, k["total_us"], f"{k['name']}: {units.duration_us(k['total_us'])} in {k['occurrences']} launches")
            for k, label in zip(kernels, kernel_row_labels(kernels, BAR_LABEL_WIDTH))
        ]
        out.append(
            _figure(
                f"Top {len(kernels)} kernels by total time (hover for the full name).",
                charts.horizontal_bars(rows, units.duration_us, "top kernels", color=charts.BUSY_COLOR),
            )
        )
    out += _roofline(host)
    histogram = host["launch"]["latency_histogram"]
    if any(histogram["counts"]):
        edges = histogram["edges_us"]
        columns = [
            (f"<{_compact_us(high)}" if high is not None else f"\u2265{_compact_us(low)}", {"count": count})
            for low, high, count in zip(edges, edges[1:], histogram["counts"])
        ]
        out.append(
            _figure(
                "Kernel launch latency (host launch call start to kernel start), kernels per bin.",
                charts.stacked_columns(
                    columns,
                    [("count", "kernels", charts.BAR_COLOR)],
                    lambda v: f"{v:,.0f}",
                    "launch latency histogram",
                    "kernels",
                ),
            )
        )
    return out if len(out) > 1 else []


def _roofline(host):
    """The roofline of the first active device with known peaks, one dot per costed kernel row."""
    device = next(
        (d for d in host["devices"] if d.get("kernel_count") and d.get("peak_tflops") and d.get("peak_gbps")), None
    )
    placed = [k for k in host["kernels"] if k.get("arithmetic_intensity") and k.get("achieved_tflops")]
    if device is None or not placed:
        return []
    points = [
        (
            k["arithmetic_intensity"],
            k["achieved_tflops"],
            k["total_us"],
            f"{k['name']}: {units.rate(k['achieved_tflops'])} TFLOP/s at {units.rate(k['arithmetic_intensity'])} "
            "FLOP/B, "
            f"{units.percent(k['peak_pct'])} of its roof, {units.duration_us(k['total_us'])}",
        )
        for k in placed
    ]
    roofs = [("matrix 16-bit", device["peak_tflops"])]
    if device.get("peak_vector_tflops"):
        roofs.append(("vector fp32", device["peak_vector_tflops"]))
    left_out = sum(1 for k in host["kernels"] if k.get("flops") is not None) - len(placed)
    more = f" {left_out} costed rows without FLOPs (pure data movement) are not placed." if left_out else ""
    return [
        _figure(
            f"Roofline of {device['name']}: one dot per kernel row, area by total time; roofs are upper "
            f"bounds at boost clock ({device['peak_source']}; HBM {device['peak_gbps']:g} GB/s: "
            f"{device.get('peak_gbps_source') or 'source unknown'}).{more}",
            charts.roofline(points, roofs, device["peak_gbps"], "roofline"),
        )
    ]


def _compact_us(value):
    return f"{value:g} {MICRO}" if value < 1000 else f"{value / 1000:g} ms"
