"""Matches kernels (by name, op and launch shape) and findings (by id) between a baseline and a candidate
HostReport."""

import re

from tb_gpu_advisor.analysis.kernel_names import is_xla_kernel
from tb_gpu_advisor.comparison.causes import cause_still_present

KERNELS_LISTED = 50
# A matched kernel is faster or slower only when its time moved by at least this share and this many us.
KERNEL_CHANGE_PCT = 5.0
KERNEL_CHANGE_US = 1.0
# A matched kernel launched this much more (or less) often per step is compared per launch.
LAUNCH_CHANGE_RATIO = 1.10
# Names of kernels that fuse several operations (XLA's fusions, cuDNN/PyTorch `fused_*`, Triton kernels).
_FUSED = re.compile(r"fus(ed|ion)", re.IGNORECASE)


def is_fused_kernel(name):
    """A kernel that does the work of several (a fusion): XLA-generated, or named fused/fusion."""
    return bool(_FUSED.search(name)) or is_xla_kernel(name)


def _kernel_rows(host):
    """[(name, op_name, grid, block, total_us, occurrences)] of a report's kernel rows."""
    return [
        (
            row["name"],
            row.get("op_name"),
            tuple(row.get("grid") or ()),
            tuple(row.get("block") or ()),
            row["total_us"] or 0.0,
            row["occurrences"],
        )
        for row in host["kernels"]
    ]


# Keys kernels are matched on, most specific first: the same kernel for the same op with the same launch shape;
# then the same kernel for the same op (a new batch size changes the grid); then the name alone (ops renamed).
_MATCH_KEYS = (lambda row: row[:4], lambda row: row[:2], lambda row: row[:1])


def _matched_kernels(base_rows, cand_rows):
    """[(name, op_name, [total_us, occurrences] or None, [...] or None)]: kernel rows of the two sides matched
    on the most specific key of _MATCH_KEYS both have, so a kernel the candidate runs for a new op (a MatMul
    moved to the GPU) is new work, not a slowdown of another op's kernel of the same name."""
    pairs = []
    for key_of in _MATCH_KEYS:
        base_groups, cand_groups = {}, {}
        for rows, groups in ((base_rows, base_groups), (cand_rows, cand_groups)):
            for row in rows:
                groups.setdefault(key_of(row), []).append(row)
        matched = set(base_groups) & set(cand_groups)
        for key in matched:
            base, cand = base_groups[key], cand_groups[key]
            ops = {row[1] for row in base + cand}
            pairs.append((key[0], ops.pop() if len(ops) == 1 else None, _summed(base), _summed(cand)))
        base_rows = [row for row in base_rows if key_of(row) not in matched]
        cand_rows = [row for row in cand_rows if key_of(row) not in matched]
    for side, rows in ((0, base_rows), (1, cand_rows)):
        groups = {}
        for row in rows:
            groups.setdefault(row[:2], []).append(row)
        for (name, op), group in groups.items():
            pairs.append((name, op, _summed(group), None) if side == 0 else (name, op, None, _summed(group)))
    return pairs


def _summed(rows):
    return [sum(row[4] for row in rows), sum(row[5] for row in rows)]


def _launches_moved(base, cand, base_div, cand_div):
    base_rate, cand_rate = base[1] / base_div, cand[1] / cand_div
    return bool(base_rate and cand_rate) and not 1 / LAUNCH_CHANGE_RATIO <= cand_rate / base_rate <= LAUNCH_CHANGE_RATIO


def compare_kernels(baseline, candidate):
    """Kernels present on one side only (new, gone), new fused kernels that replace gone ones (fused), and
    matched kernels whose time changed (faster, slower); kernels are matched as _matched_kernels says.

    Times are per step (total kernel time in the profile over its step count) when both sides have steps,
    so profiles of different lengths compare; otherwise totals over each profile. A matched kernel launched
    more than LAUNCH_CHANGE_RATIO more or less often per step is compared per launch (`basis` "per_launch").
    """
    base_steps = baseline["summary"]["step_time_ms"]["count"]
    cand_steps = candidate["summary"]["step_time_ms"]["count"]
    per_step = bool(base_steps and cand_steps)
    base_div, cand_div = (base_steps, cand_steps) if per_step else (1, 1)
    pairs = sorted(
        _matched_kernels(_kernel_rows(baseline), _kernel_rows(candidate)), key=lambda pair: (pair[0], pair[1] or "")
    )
    any_gone = any(cand is None for _, _, _, cand in pairs)
    groups = {"new": [], "fused": [], "gone": [], "faster": [], "slower": []}
    unchanged = 0
    for name, op_name, base, cand in pairs:
        per_launch = bool(per_step and base and cand and _launches_moved(base, cand, base_div, cand_div))
        if per_launch:
            base_us, cand_us = base[0] / base[1], cand[0] / cand[1]
        else:
            base_us = base[0] / base_div if base else 0.0
            cand_us = cand[0] / cand_div if cand else 0.0
        entry = {
            "name": name,
            "op_name": op_name,
            "basis": "per_launch" if per_launch else ("per_step" if per_step else "total"),
            "baseline_us": round(base_us, 3) if base else None,
            "candidate_us": round(cand_us, 3) if cand else None,
            "delta_us": round(cand_us - base_us, 3),
            "delta_pct": round(100.0 * (cand_us - base_us) / base_us, 2) if base and base_us else None,
            "baseline_occurrences": base[1] if base else 0,
            "candidate_occurrences": cand[1] if cand else 0,
        }
        if base is None:
            groups["fused" if any_gone and is_fused_kernel(name) else "new"].append(entry)
        elif cand is None:
            groups["gone"].append(entry)
        elif abs(cand_us - base_us) >= max(KERNEL_CHANGE_US, KERNEL_CHANGE_PCT / 100 * base_us):
            groups["faster" if cand_us < base_us else "slower"].append(entry)
        else:
            unchanged += 1
    for entries in groups.values():
        entries.sort(key=lambda e: (-abs(e["delta_us"]), e["name"]))
    return {
        "basis": "per_step" if per_step else "total",
        "counts": {**{key: len(entries) for key, entries in groups.items()}, "unchanged": unchanged},
        **{key: entries[:KERNELS_LISTED] for key, entries in groups.items()},
    }


def _finding_brief(finding):
    return {key: finding.get(key) for key in ("id", "severity", "title")}


def compare_findings(baseline, candidate):
    """Findings matched on `id`: resolved (baseline only; `cause_still_present` where the candidate's trace
    still shows the cause, causes.cause_still_present), new (candidate only) and persisting (both)."""
    base = {f["id"]: f for f in baseline.get("findings") or [] if f.get("id") is not None}
    cand = {f["id"]: f for f in candidate.get("findings") or [] if f.get("id") is not None}
    persisting = []
    for key in base:
        if key in cand:
            persisting.append({**_finding_brief(cand[key]), "baseline_severity": base[key].get("severity")})
    return {
        "baseline_count": len(baseline.get("findings") or []),
        "candidate_count": len(candidate.get("findings") or []),
        "resolved": [
            {**_finding_brief(f), "cause_still_present": cause_still_present(key, candidate)}
            for key, f in base.items()
            if key not in cand
        ],
        "new": [_finding_brief(f) for key, f in cand.items() if key not in base],
        "persisting": persisting,
    }
