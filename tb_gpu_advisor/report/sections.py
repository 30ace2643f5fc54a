"""Turns a HostReport dict into titled sections of lines and tables, shared by the text and markdown renderers."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from tb_gpu_advisor.report import units
from tb_gpu_advisor.report.busy import busy_figures
from tb_gpu_advisor.report.configuration_section import configuration_rows
from tb_gpu_advisor.vocabulary import (
    BREAKDOWN_LABELS,
    BREAKDOWN_SHORT_LABELS,
    COLLECTIVE_BANDWIDTH_GAPS,
    COLLECTIVE_HEADERS,
    COLLECTIVE_SIZE_SOURCES,
    IDLE_CAUSE_LABELS,
    MICRO,
    TRANSFER_LABELS,
    collective_bandwidth_gap,
    in_sentence,
    listed,
    matrix_unit_labels,
    OCCUPANCY_LABELS,
    occupancy_kind,
)

KERNELS_LISTED = 10
KERNEL_WIDTH = 37  # characters of a kernel name in the text table
STEPS_LISTED = 10
# How the Steps line names a step left out of the step statistics (summary.steps_left_out[].reason).
LEFT_OUT_WORDS = {"cut": "cut by the capture:", "warm-up": "warm-up:"}
# How the Time line's 16-bit/32-bit split is read (analysis.kernel_names.kernel_precision): a comparison writes
# bool, so it counts by the type it compares (as XProf counts it, docs/report.md).
PRECISION_BASIS = "16-bit/32-bit by the float type a kernel writes, or compares"


@dataclass(frozen=True)
class Table:
    headers: tuple
    rows: tuple
    numeric: tuple  # per column: right-align


@dataclass(frozen=True)
class Section:
    title: str
    lines: tuple = ()
    table: Table | None = None
    terminal_hint: str | None = None  # a last line for the text report only


def host_sections(report: dict) -> list[Section]:
    """Sections of one host, in reading order: verdict and findings first."""
    sections = [_summary(report)]
    findings = _findings(report)
    if findings:
        sections.append(findings)
    if report["notes"]:
        sections.append(Section("Notes", lines=tuple(report["notes"])))
    if report.get("configuration"):
        sections.append(
            Section(
                "Configuration",
                table=Table(("setting", "value"), configuration_rows(report["configuration"]), (False, False)),
            )
        )
    if report["steps"]:
        sections.append(_steps(report))
    if report["devices"]:
        sections.append(_devices(report))
    if report["kernels"]:
        sections.append(_kernels(report))
    roofline = _roofline(report)
    if roofline:
        sections.append(roofline)
    if report["launch"]["kernel_count"]:
        sections.append(_launch(report))
    if any(t["count"] for t in report["transfers"].values()):
        sections.append(_transfers(report))
    if report.get("collectives"):
        sections.append(_collectives(report))
    return sections


def _collectives(report):
    rows = tuple(
        (
            row["source"],
            row["collective"],
            units.count(row["calls"]),
            f"{row['calls_per_step']:g}" if row.get("calls_per_step") is not None else "-",
            units.duration_us(row["time_us"]),
            units.size_bytes(row["in_bytes"]) if row["in_bytes"] is not None else "-",
            listed(row["dtypes"]) or "-",
            listed(row["group_sizes"]) or "-",
            COLLECTIVE_SIZE_SOURCES.get(row.get("size_source"), row.get("size_source") or "-"),
            issued_by_text(row),
        )
        for row in report["collectives"]
    )
    groups = {row["collective"]: row["group_sizes"] for row in report["collectives"] if row["source"] == "kernel"}
    return Section(
        "Collectives",
        lines=_bandwidth_lines(report.get("collective_bandwidth"), groups),
        table=Table(COLLECTIVE_HEADERS, rows, (False, False, True, True, True, True, False, True, False, False)),
    )


def issued_by_text(row: dict) -> str:
    """The op that issued a collectives row's calls (the most frequent), "kernel name" where only the kernel's
    name told the kind, "-" where nothing did."""
    if row.get("issued_by"):
        return row["issued_by"][0]
    return "kernel name" if "kernel_name" in (row.get("named_from") or ()) else "-"


def _ranks_from(row):
    """Where a bandwidth row's rank count comes from, when not the calls' own args."""
    source = row.get("group_size_source")
    words = {"world_size": "the trace's world size", "process_groups": "the trace's process groups"}
    return f"; {row['group_size']} ranks from {words[source]}" if source in words else ""


def _bandwidth_lines(bandwidth, groups):
    """NCCL-tests bandwidths of the large calls of each collective kind, the link they are judged against, and
    why a kind has none."""
    if not bandwidth:
        return ()
    lines = []
    gaps = []
    for row in bandwidth["collectives"]:
        gap = collective_bandwidth_gap(row, groups.get(row["collective"], ()))
        if gap is not None:
            reason = COLLECTIVE_BANDWIDTH_GAPS[gap]
            gaps.append(
                f"{row['collective']}: {units.count(row['large_calls'])} calls of 8 MiB or more: algbw "
                f"{row['algbw_gbps']:.1f} GB/s, no busbw ({reason})."
                if row.get("algbw_gbps") is not None
                else f"{row['collective']}: no bandwidth ({reason})."
            )
            continue
        ratio = (
            f", {units.percent(100.0 * row['best_busbw_link_ratio'])} of the link"
            if row.get("best_busbw_link_ratio") is not None
            else ""
        )
        lines.append(
            f"{row['collective']}: {units.count(row['large_calls'])} calls of 8 MiB or more: algbw "
            f"{row['algbw_gbps']:.1f} GB/s, busbw {row['busbw_gbps']:.1f} GB/s (median; best "
            f"{row['best_busbw_gbps']:.1f} GB/s{ratio}{_ranks_from(row)})."
        )
    link = bandwidth.get("link")
    if lines and link:
        outran = not link.get("known") and any(
            (row.get("best_busbw_gbps") or 0) > link["gbps"] for row in bandwidth["collectives"]
        )
        lines.append(
            f"Link: {link['gbps']:g} GB/s {'NVLink' if link['kind'] == 'nvlink' else 'PCIe'} per GPU "
            f"({link['basis']})."
            + (
                " The best busbw above is faster: these ranks use a faster link than that, so no share of it is given."
                if outran
                else ""
            )
        )
    return tuple(lines + gaps)


def _summary(report):
    s = report["summary"]
    st = s["step_time_ms"]
    lines = []
    if s.get("verdict"):
        lines.append(f"Verdict: {s['verdict']}")
    elif s.get("bottleneck"):
        lines.append(f"Verdict: {s['bottleneck']}")
    lines.extend(confidence_lines(s))
    gpus = f"GPUs: {s['active_gpu_count']} active of {s['gpu_count']}" if s["gpu_count"] else "GPUs: none"
    (label, value), *others = busy_figures(s)
    busy = f"{label}: {units.percent(value)}"
    if others:
        busy += " (" + ", ".join(f"{other} {units.percent(pct)}" for other, pct in others) + ")"
    prep = f", host batch prep: {units.percent(s['batch_prep_pct'])}" if s.get("batch_prep_pct") else ""
    lines.append(f"{gpus}   {busy}   input wait: {units.percent(s['input_wait_pct'])}{prep}")
    if st["count"]:
        mean, median, stdev = units.durations_ms(st["mean"], st["median"], st["stdev"])
        spread = f", stdev {stdev}" if st["stdev"] is not None else ""
        timed = ", timed on the device" if s.get("step_timing") == "device" and s["step_source"] != "device" else ""
        left = s.get("steps_left_out") or []
        gone = "".join(
            f"; {LEFT_OUT_WORDS[step['reason']]} {step['name']} ({units.duration_ms(step['time_ms'])}) left out"
            for step in left
        )
        lines.append(
            f"Steps: {st['count']} ({s['step_source']} markers{timed}{gone})   mean {mean}, median {median}{spread}"
        )
    else:
        lines.append(f"Steps: none found; measured over {units.duration_ms(s['analysis_window_ms'])} of activity")
    shares = [(BREAKDOWN_LABELS[k], v) for k, v in s["breakdown_pct"].items() if v]
    shares.sort(key=lambda item: -item[1])
    if shares:
        basis = ""
        if s["breakdown_pct"].get("compute_unknown"):
            basis = f"   ({PRECISION_BASIS}; other: no float type in the name)"
        elif s["breakdown_pct"].get("compute_16bit"):
            basis = f"   ({PRECISION_BASIS})"
        lines.append(
            "Time: " + ", ".join(f"{in_sentence(label)} {units.percent(value)}" for label, value in shares) + basis
        )
    lines.extend(idle_lines(report.get("idle_attribution")))
    return Section(f"{report['host']}", lines=tuple(lines))


IDLE_GPUS_LISTED = 4


def idle_lines(idle):
    """One line per GPU (at most IDLE_GPUS_LISTED): its idle share and why, largest cause first."""
    if not idle:
        return []
    lines = []
    for gpu in idle["gpus"][:IDLE_GPUS_LISTED]:
        causes = sorted(((IDLE_CAUSE_LABELS[k], v) for k, v in gpu["cause_pct"].items() if v), key=lambda c: -c[1])
        why = ", ".join(f"{in_sentence(label)} {units.percent(value)}" for label, value in causes)
        lines.append(f"Idle {gpu['device']}: {units.percent(gpu['idle_pct'])}" + (f" ({why})" if why else ""))
    hidden = len(idle["gpus"]) - IDLE_GPUS_LISTED
    if hidden > 0:
        lines.append(f"  ... {hidden} more GPUs in the JSON report (idle_attribution)")
    return lines


def confidence_lines(summary: dict) -> list[str]:
    """`Confidence: low (framework: tensorflow)` and each reason as an indented line; none for older reports."""
    confidence = summary.get("confidence")
    if not isinstance(confidence, dict) or not confidence.get("level"):
        return []
    framework = summary.get("framework")
    head = f"Confidence: {confidence['level']}" + (f"   Framework: {framework}" if framework else "")
    return [head] + [f"   - {reason}" for reason in confidence.get("reasons") or []]


def _findings(report):
    findings = report.get("findings") or []
    if not findings:
        return None
    lines = []
    number = {finding.get("id"): index for index, finding in enumerate(findings, 1)}
    for index, finding in enumerate(findings, 1):
        speedup = finding.get("estimated_speedup")
        shared = [f"#{number[other]}" for other in finding.get("overlaps_with") or [] if other in number]
        overlap = f"; shares time with {', '.join(shared)}" if shared else ""
        phrase = units.speedup_phrase(speedup, finding.get("speedup_kind"))
        gain = f" ({phrase}{overlap})" if phrase else ""
        lines.append(f"{index}. [{finding['severity']}] {finding['title']}{gain}")
        if finding.get("summary"):
            lines.append(f"   {finding['summary']}")
        if finding.get("fix_summary"):
            lines.append(f"   Fix: {finding['fix_summary']}")
    return Section(
        "Findings",
        lines=tuple(lines),
        terminal_hint="Fixes with code to paste: --format markdown (or json, findings[].fix).",
    )


STEP_COLUMNS = 3


def _steps(report):
    totals = {k: sum(step["breakdown_ms"].get(k, 0.0) for step in report["steps"]) for k in BREAKDOWN_LABELS}
    keys = [k for k in sorted(totals, key=lambda k: -totals[k]) if totals[k] > 0][:STEP_COLUMNS]
    keys.sort(key=list(BREAKDOWN_LABELS).index)
    rest = [k for k in BREAKDOWN_LABELS if k not in keys]
    shown = report["steps"][:STEPS_LISTED]
    times = [
        [step["time_ms"]]
        + [step["breakdown_ms"][k] for k in keys]
        + ([sum(step["breakdown_ms"].get(k, 0.0) for k in rest)] if any(totals[k] for k in rest) else [])
        for step in shown
    ]
    texts = iter(units.durations_ms(*(value for row in times for value in row)))  # one unit for the table
    gpu = bool(report["summary"]["gpu_count"])  # no GPU busy column on a trace without a GPU
    rows = []
    for step, row in zip(shown, times):
        cells = [next(texts) for _ in row]
        busy = (units.percent(step["gpu_busy_pct"]),) if gpu else ()
        rows.append((units.shorten(step["name"], 18), cells[0]) + busy + tuple(cells[1:]))
    title = (
        "Steps" if len(report["steps"]) <= STEPS_LISTED else f"Steps (first {STEPS_LISTED} of {len(report['steps'])})"
    )
    headers = (
        ("step", "time")
        + (("GPU busy",) if gpu else ())
        + tuple(BREAKDOWN_SHORT_LABELS[k] for k in keys)
        + (("other",) if any(totals[k] for k in rest) else ())
    )
    return Section(title, table=Table(headers, tuple(rows), (False,) + (True,) * (len(headers) - 1)))


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


def _devices(report):
    rows = []
    idle = [d["name"].rsplit(":", 1)[-1] for d in report["devices"] if d["busy_pct"] is None]
    models = {}
    multi = report["summary"]["active_gpu_count"] > 1
    for d in report["devices"]:
        models.setdefault(_device_model(d), []).append(d["name"].rsplit(":", 1)[-1])
        if d["busy_pct"] is None:
            continue
        split = (units.percent(d.get("compute_busy_pct")), units.percent(d.get("collective_busy_pct"))) if multi else ()
        rows.append(
            (d["name"], units.percent(d["busy_pct"]))
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


def kernel_row_labels(kernels, width):
    """A label of at most `width` characters per kernel row, its function name kept (units.kernel_label). Rows are
    XProf's (name, launch configuration, op) groups: rows of one kernel get what tells them apart: their template
    arguments' distinctive words inside its `<...>`, then in brackets the grid / block, the op; rows still alike
    are numbered."""
    names = [units.kernel_name(k["name"], 10_000) for k in kernels]
    groups = {}
    for index, name in enumerate(names):
        groups.setdefault(name, []).append(index)
    parts = [("", "")] * len(kernels)  # (detail, bracket) of each row
    for indexes in groups.values():
        if len(indexes) < 2:
            continue
        launches = [units.launch_dims(kernels[i]["grid"], kernels[i]["block"]) for i in indexes]
        ops = [kernels[i]["op_name"] or "no op" for i in indexes]
        for launch in set(launches):  # the op only has to tell apart rows of the same launch configuration
            same = [position for position, other in enumerate(launches) if other == launch]
            for position, part in zip(same, _distinct_parts([ops[p] for p in same])):
                ops[position] = part
        details = _distinct_words([units.kernel_detail(kernels[i]["name"]) for i in indexes])
        columns = _fewest_that_tell_apart([details, launches, ops])
        for position, index in enumerate(indexes):
            detail = details[position] if any(column is details for column in columns) else ""
            rest = ", ".join(column[position] for column in columns if column is not details and column[position])
            parts[index] = (detail, rest)
    labels = [units.kernel_label(k["name"], width, *part) for k, part in zip(kernels, parts)]
    return _numbered(labels, width, lambda index, room: units.kernel_label(kernels[index]["name"], room, *parts[index]))


def _distinct_words(details):
    """Template-argument words without those every row of the group has."""
    words = [detail.split(" \u00b7 ") if detail else [] for detail in details]
    common = set.intersection(*(set(w) for w in words)) if words else set()
    return [" \u00b7 ".join(w for w in row if w not in common) for row in words]


def _fewest_that_tell_apart(columns):
    """The fewest of `columns` (each a value per row), in their order, whose values together tell the most rows
    apart: one column if one is enough."""
    rows = len(columns[0])
    best, best_count = [], 1
    for size in range(1, len(columns) + 1):
        for chosen in itertools.combinations(columns, size):
            count = len(set(zip(*chosen)))
            if count > best_count:
                best, best_count = list(chosen), count
        if best_count == rows:
            break
    return best


def _distinct_parts(ops):
    """Op names without the path segments they all share at the start and the end: `Adam/update_5/Apply` and
    `Adam/update_7/Apply` become `update_5` and `update_7`."""
    paths = [op.split("/") for op in ops]
    if len(set(ops)) < 2 or min(len(p) for p in paths) < 2:
        return ops
    head = 0
    while all(len(p) > head + 1 and p[head] == paths[0][head] for p in paths):
        head += 1
    tail = 0
    while all(len(p) - tail - 1 > head and p[-1 - tail] == paths[0][-1 - tail] for p in paths):
        tail += 1
    return ["/".join(p[head : len(p) - tail]) for p in paths]


def _numbered(labels, width, relabel):
    """Labels still alike after all that get `(2)`, `(3)`... so that no two rows read the same, within `width`:
    `relabel(index, room)` writes row `index`'s label again in the room the number leaves."""
    seen = {}
    out = []
    for index, label in enumerate(labels):
        seen[label] = seen.get(label, 0) + 1
        number = f" ({seen[label]})"
        out.append(label if seen[label] == 1 else relabel(index, width - len(number)) + number)
    return out


def _kernels(report):
    listed = report["kernels"][:KERNELS_LISTED]
    occupancy = occupancy_kind(report["kernels"])
    occupancy_key = "occupancy_pct" if occupancy == "theoretical" else "achieved_occupancy_pct"
    rows = []
    # The share of its roof each kernel reaches is in the Roofline section: the name gets the room.
    for k, name in zip(listed, kernel_row_labels(listed, KERNEL_WIDTH)):
        rows.append(
            (
                name,
                units.count(k["occurrences"]),
                units.duration_us(k["total_us"]),
                units.duration_us(k["avg_us"]),
                units.percent(k.get(occupancy_key)),
                "yes" if k["uses_tensor_cores"] else "no",
            )
        )
    title = (
        "Kernels"
        if len(report["kernels"]) <= KERNELS_LISTED
        else f"Kernels (top {KERNELS_LISTED} of {len(report['kernels'])} by total time)"
    )
    matrix_units = matrix_unit_labels(report["devices"])[0]
    return Section(
        title,
        table=Table(
            ("kernel", "count", "total", "avg", OCCUPANCY_LABELS[occupancy][0].lower(), matrix_units),
            tuple(rows),
            (False, True, True, True, True, False),
        ),
    )


def lost_time_us(kernel: dict) -> float | None:
    """Kernel time not spent at the roof that binds: total x (1 - peak share); None if the share is unknown."""
    if kernel.get("peak_pct") is None or kernel.get("total_us") is None:
        return None
    return kernel["total_us"] * max(0.0, 1.0 - kernel["peak_pct"] / 100.0)


def _roofline(report):
    """Peaks, the FLOP utilization and the kernels that lose the most time below their roof."""
    s = report["summary"]
    placed = [k for k in report["kernels"] if lost_time_us(k) is not None]
    if not placed and s.get("flops_utilization_pct") is None:
        return None
    lines = []
    if s.get("flops_utilization_pct") is not None:
        lines.append(
            f"FLOP utilization: {units.percent(s['flops_utilization_pct'])} of the dense 16-bit matrix "
            "peak (the GPU's headline peak, whatever precision the kernels use) "
            f"over the window ({units.percent(s['costed_kernel_time_pct'])} of kernel time costed)."
        )
    for d in report["devices"]:
        if d.get("peak_tflops") is not None and d.get("kernel_count"):
            lines.append(
                f"Peaks of {d['name']}: {d['peak_tflops']:g} TFLOP/s matrix, {d['peak_gbps']:g} GB/s "
                f"HBM ({d['peak_source']}"
                + (f"; HBM: {d['peak_gbps_source']}" if "corrected" in (d.get("peak_gbps_source") or "") else "")
                + "; upper bounds at boost clock)."
            )
            break
    rows = []
    for k in sorted(placed, key=lambda k: -lost_time_us(k))[:KERNELS_LISTED]:
        rows.append(
            (
                units.shorten(k["name"], 22),
                units.duration_us(k["total_us"]),
                units.rate(k["achieved_tflops"]),
                units.rate(k["achieved_gbps"]),
                k["bound"],
                units.percent(k["peak_pct"]),
                units.duration_us(round(lost_time_us(k), 3)),
            )
        )
    return Section(
        "Roofline (kernels by time lost below their roof)",
        lines=tuple(lines),
        table=Table(
            ("kernel", "total", "TFLOP/s", "GB/s", "bound", "of roof", "lost"),
            tuple(rows),
            (False, True, True, True, False, True, True),
        )
        if rows
        else None,
    )


def _launch(report):
    launch = report["launch"]
    latency = launch["latency_us"]
    lines = (
        f"{units.count(launch['count'])} of {units.count(launch['kernel_count'])} kernels paired with their host "
        f"launch; launch-to-start latency p50 {units.duration_us(latency['p50'])}, "
        f"p95 {units.duration_us(latency['p95'])}",
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


def _transfers(report):
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
