"""Matches kernels by name and findings by id between a baseline and a candidate HostReport."""

import re

from tb_gpu_advisor.analysis.kernel_names import is_xla_kernel

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


def _kernel_times(host):
    """{name: [total_us, occurrences]} with the rows of one name (different launch configs) summed."""
    totals = {}
    for row in host["kernels"]:
        entry = totals.setdefault(row["name"], [0.0, 0])
        entry[0] += row["total_us"] or 0.0
        entry[1] += row["occurrences"]
    return totals


def _launches_moved(base, cand, base_div, cand_div):
    base_rate, cand_rate = base[1] / base_div, cand[1] / cand_div
    return bool(base_rate and cand_rate) and not 1 / LAUNCH_CHANGE_RATIO <= cand_rate / base_rate <= \
        LAUNCH_CHANGE_RATIO


def compare_kernels(baseline, candidate):
    """Kernels present on one side only (new, gone), new fused kernels that replace gone ones (fused), and
    matched kernels whose time changed (faster, slower).

    Times are per step (total kernel time in the profile over its step count) when both sides have steps,
    so profiles of different lengths compare; otherwise totals over each profile. A matched kernel launched
    more than LAUNCH_CHANGE_RATIO more or less often per step is compared per launch (`basis` "per_launch").
    """
    base_steps = baseline["summary"]["step_time_ms"]["count"]
    cand_steps = candidate["summary"]["step_time_ms"]["count"]
    per_step = bool(base_steps and cand_steps)
    base_div, cand_div = (base_steps, cand_steps) if per_step else (1, 1)
    base_times, cand_times = _kernel_times(baseline), _kernel_times(candidate)
    any_gone = any(name not in cand_times for name in base_times)
    groups = {"new": [], "fused": [], "gone": [], "faster": [], "slower": []}
    unchanged = 0
    for name in sorted(set(base_times) | set(cand_times)):
        base = base_times.get(name)
        cand = cand_times.get(name)
        per_launch = bool(per_step and base and cand and _launches_moved(base, cand, base_div, cand_div))
        if per_launch:
            base_us, cand_us = base[0] / base[1], cand[0] / cand[1]
        else:
            base_us = base[0] / base_div if base else 0.0
            cand_us = cand[0] / cand_div if cand else 0.0
        entry = {
            "name": name,
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
    """Findings matched on `id`: resolved (baseline only), new (candidate only) and persisting (both)."""
    base = {f["id"]: f for f in baseline.get("findings") or [] if f.get("id") is not None}
    cand = {f["id"]: f for f in candidate.get("findings") or [] if f.get("id") is not None}
    persisting = []
    for key in base:
        if key in cand:
            persisting.append({**_finding_brief(cand[key]), "baseline_severity": base[key].get("severity")})
    return {
        "baseline_count": len(baseline.get("findings") or []),
        "candidate_count": len(candidate.get("findings") or []),
        "resolved": [_finding_brief(f) for key, f in base.items() if key not in cand],
        "new": [_finding_brief(f) for key, f in cand.items() if key not in base],
        "persisting": persisting,
    }
