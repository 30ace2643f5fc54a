"""The Kernels and Roofline sections, and the short labels that tell a table's kernel names apart."""

from __future__ import annotations

import itertools
from tb_gpu_advisor.report import units
from tb_gpu_advisor.vocabulary import (
    device_label,
    matrix_unit_labels,
    OCCUPANCY_LABELS,
    occupancy_kind,
)
from tb_gpu_advisor.report.section_model import Section, Table


KERNELS_LISTED = 10


KERNEL_WIDTH = 37  # characters of a kernel name in the text table


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


def kernels_section(report: dict) -> Section:
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


def _shared_by(kernel: dict) -> str:
    return kernel.get("cost_shared_by") or "module"


def lost_time_us(kernel: dict) -> float | None:
    """Kernel time not spent at the roof that binds: total x (1 - peak share); None if the share is unknown."""
    if kernel.get("peak_pct") is None or kernel.get("total_us") is None:
        return None
    return kernel["total_us"] * max(0.0, 1.0 - kernel["peak_pct"] / 100.0)


def roofline_section(report):
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
                f"Peaks of {device_label(d['name'], report.get('trace_format'))}: {d['peak_tflops']:g} TFLOP/s matrix, {d['peak_gbps']:g} GB/s "
                f"HBM ({d['peak_source']}"
                + (f"; HBM: {d['peak_gbps_source']}" if "corrected" in (d.get("peak_gbps_source") or "") else "")
                + "; upper bounds at boost clock)."
            )
            break
    rows = []
    listed = sorted(placed, key=lambda k: -lost_time_us(k))[:KERNELS_LISTED]
    shared = {_shared_by(k) for k in listed if k.get("cost_shared")}
    if "module" in shared:
        lines.append(
            'Lost "module avg": library kernels replayed in a command buffer share their module\'s library-call '
            "FLOPs by time, so their TFLOP/s, GB/s and roof share are the module's average, not each kernel's."
        )
    if "op" in shared:
        lines.append(
            'Lost "op avg": the kernels of one op, none known by name to be its matrix kernel, share its FLOPs by '
            "time, so their TFLOP/s, GB/s and roof share are the op's average, not each kernel's."
        )
    for k in listed:
        rows.append(
            (
                units.shorten(k["name"], 22),
                units.duration_us(k["total_us"]),
                units.rate(k["achieved_tflops"]),
                units.rate(k["achieved_gbps"]),
                k["bound"],
                units.percent(k["peak_pct"]),
                f"{_shared_by(k)} avg" if k.get("cost_shared") else units.duration_us(round(lost_time_us(k), 3)),
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
