"""The assistant's answers, cut from a run report, a comparison or a check result: the verdict, the top findings and
the numbers behind them, never the kernel table; lists come a page at a time (`offset`, `next_offset`) and every
answer is kept under MAX_ANSWER_BYTES of JSON."""

import json

from tb_gpu_advisor.assistant.confine import AdvisorError
from tb_gpu_advisor.constants import SCHEMA_VERSION

MAX_ANSWER_BYTES = 8000
MAX_TEXT = 1500  # characters of one free-text field (a fix with its code) before it is cut
FULL_FIX = "explain_finding with full_text=true"
TOP_BREAKDOWN = 5
NOTES_SHOWN, NOTE_CHARS = 3, 600
MULTI_HOST_KEYS = (
    "host_count",
    "slowest_host",
    "fastest_host",
    "step_time_spread_ms",
    "imbalance_pct",
    "most_compute_host",
    "compute_imbalance_pct",
)


def size(answer):
    """Bytes of the answer as the server sends it (compact JSON)."""
    return len(to_text(answer).encode("utf-8"))


def to_text(answer):
    return json.dumps(answer, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def page(items, offset, limit):
    """(items[offset:offset+limit], {total, offset, next_offset}) with next_offset null on the last page."""
    offset, limit = max(0, int(offset)), max(1, int(limit))
    chunk = list(items[offset : offset + limit])
    end = offset + len(chunk)
    return chunk, {"total": len(items), "offset": offset, "next_offset": end if end < len(items) else None}


def _cut(text, limit=MAX_TEXT, whole=FULL_FIX):
    """`text` cut at `limit` characters, saying how many more there are and where the whole text is."""
    if not isinstance(text, str) or len(text) <= limit:
        return text
    return text[:limit] + f"... [{len(text) - limit} more characters: {whole}]"


def _fitted(answer, key, paging):
    """Drops entries from the end of `answer[key]` until the answer fits MAX_ANSWER_BYTES (next_offset follows)."""
    while size(answer) > MAX_ANSWER_BYTES and len(answer[key]) > 1:
        answer[key].pop()
        paging["next_offset"] = paging["offset"] + len(answer[key])
    return answer


def pick_host(report, host):
    """The HostReport named `host` (the first when None); AdvisorError listing the hosts otherwise."""
    hosts = report.get("hosts", [])
    if host is None and hosts:
        return hosts[0]
    for candidate in hosts:
        if candidate["host"] == host:
            return candidate
    names = ", ".join(h["host"] for h in hosts) or "none could be analyzed"
    raise AdvisorError(f"no host {host!r} in run {report.get('run')!r}; hosts: {names}")


def _finding_row(finding):
    return {
        key: finding.get(key)
        for key in ("id", "severity", "title", "summary", "estimated_speedup", "speedup_kind", "fix_summary")
    }


def verdict_answer(report, host=None, offset=0, limit=5):
    """The verdict of one host of a run report, its headline numbers and a page of its findings."""
    chosen = pick_host(report, host)
    summary = chosen["summary"]
    breakdown = sorted(
        ((k, v) for k, v in (summary.get("breakdown_pct") or {}).items() if v), key=lambda item: -item[1]
    )[:TOP_BREAKDOWN]
    findings, paging = page(chosen.get("findings", []), offset, limit)
    answer = {
        "schema_version": SCHEMA_VERSION,
        "run": report.get("run"),
        "host": chosen["host"],
        "hosts": [h["host"] for h in report.get("hosts", [])],
        "errors": [f"{e.get('file') or e.get('host')}: {e.get('error')}" for e in report.get("errors", [])][:5],
        "verdict": summary.get("verdict"),
        "bottleneck": summary.get("bottleneck"),
        "confidence": summary.get("confidence"),
        "framework": summary.get("framework"),
        "step_time_ms": summary.get("step_time_ms"),
        "gpu_busy_pct": summary.get("gpu_busy_pct"),
        "gpu_compute_busy_pct": summary.get("gpu_compute_busy_pct"),
        "input_wait_pct": summary.get("input_wait_pct"),
        "top_breakdown_pct": dict(breakdown),
        "combined_estimate": summary.get("combined_estimate"),
        "notes": [
            _cut(note, NOTE_CHARS, "tb-gpu-advisor analyze --format json")
            for note in chosen.get("notes", [])[:NOTES_SHOWN]
        ],
        "notes_total": len(chosen.get("notes", [])),
        "findings": [_finding_row(f) for f in findings],
        "findings_page": paging,
        "more": "explain_finding(finding_id) gives one finding's evidence and full fix; offset pages the findings",
    }
    if report.get("multi_host"):
        answer["multi_host"] = {key: report["multi_host"].get(key) for key in MULTI_HOST_KEYS}
    return _fitted(answer, "findings", paging)


def finding_answer(report, finding_id, host=None, offset=0, limit=10, full_text=False):
    """One finding with its evidence: metrics and threshold whole, each pointer list a page at a time."""
    chosen = pick_host(report, host)
    finding = next((f for f in chosen.get("findings", []) if f["id"] == finding_id), None)
    if finding is None:
        ids = ", ".join(f["id"] for f in chosen.get("findings", [])) or "none"
        raise AdvisorError(f"no finding {finding_id!r} on host {chosen['host']!r}; findings: {ids}")
    answer = _finding_answer(report, chosen, finding, offset, limit, full_text)
    while not full_text and size(answer) > MAX_ANSWER_BYTES and limit > 1:
        limit = limit // 2  # fewer pointers a page, the rest a page away
        answer = _finding_answer(report, chosen, finding, offset, limit, full_text)
        answer["fix"] = _cut(finding.get("fix"), 400)
    return answer


def _finding_answer(report, chosen, finding, offset, limit, full_text):
    evidence = finding.get("evidence", {})
    pointers, totals, more = {}, {}, False
    for key, value in (evidence.get("pointers") or {}).items():
        if isinstance(value, list):
            pointers[key], paging = page(value, offset, limit)
            totals[key] = paging["total"]
            more = more or paging["next_offset"] is not None
        else:
            pointers[key] = value
    cut = (lambda text: text) if full_text else _cut
    return {
        "schema_version": SCHEMA_VERSION,
        "run": report.get("run"),
        "host": chosen["host"],
        **_finding_row(finding),
        "category": finding.get("category"),
        "recoverable_ms": finding.get("recoverable_ms"),
        "speedup_basis": finding.get("speedup_basis"),
        "overlaps_with": finding.get("overlaps_with", []),
        "metrics": evidence.get("metrics", {}),
        "threshold": evidence.get("threshold", {}),
        "pointers": pointers,
        "pointers_page": {
            "offset": max(0, int(offset)),
            "totals": totals,
            "next_offset": max(0, int(offset)) + max(1, int(limit)) if more else None,
        },
        "fix": cut(finding.get("fix")),
        "docs": finding.get("docs", []),
    }


def _difference(diff):
    if not diff:
        return None
    return {
        key: diff.get(key)
        for key in ("baseline", "candidate", "delta", "delta_pct", "ci_low_pct", "ci_high_pct", "significant")
    }


def _kernel_names(rows, count=3):
    return [
        {"name": row["name"][:120], "delta_us": row.get("delta_us"), "delta_pct": row.get("delta_pct")}
        for row in rows[:count]
    ]


def _host_comparison(host, offset, limit):
    findings = host.get("findings", {})
    changes = (
        [{"status": "resolved", **f} for f in findings.get("resolved", [])]
        + [{"status": "new", **f} for f in findings.get("new", [])]
        + [{"status": "persisting", **f} for f in findings.get("persisting", [])]
    )
    rows, paging = page(changes, offset, limit)
    predictions = host.get("predictions") or {}
    combined = predictions.get("combined") or {}
    kernels = host.get("kernels") or {}
    return {
        "baseline_host": host.get("baseline_host"),
        "candidate_host": host.get("candidate_host"),
        "change": host.get("change"),
        "speedup": host.get("speedup"),
        "verdict": host.get("verdict"),
        "step_time_mean_ms": _difference((host.get("step_time_ms") or {}).get("mean")),
        "gpu_busy_pct": {k: (host.get("gpu_busy_pct") or {}).get(k) for k in ("baseline", "candidate", "delta_points")},
        "driver": host.get("driver"),
        "configuration_changes": [c.get("text") for c in host.get("configuration_changes", [])],
        "warnings": (host.get("comparability") or {}).get("warnings", []),
        "kernels": {
            "counts": kernels.get("counts"),
            "slower": _kernel_names(kernels.get("slower", [])),
            "faster": _kernel_names(kernels.get("faster", [])),
        },
        "prediction": {
            "measured": (predictions.get("measured") or {}).get("value"),
            "predicted": combined.get("predicted"),
            "score_text": combined.get("score_text"),
        },
        "findings": rows,
        "findings_page": paging,
    }


def comparison_answer(comparison, offset=0, limit=10):
    """The comparison's verdict and, per matched host, the step time change with its interval, what drove it,
    and a page of the findings resolved, new and persisting."""
    hosts = [_host_comparison(host, offset, limit) for host in comparison.get("hosts", [])]
    answer = {
        "schema_version": SCHEMA_VERSION,
        "kind": "comparison",
        "verdict": comparison.get("verdict"),
        "baseline": {k: comparison["baseline"].get(k) for k in ("run", "hosts")},
        "candidate": {k: comparison["candidate"].get(k) for k in ("run", "hosts")},
        "unmatched_hosts": comparison.get("unmatched_hosts"),
        "hosts": hosts,
    }
    while size(answer) > MAX_ANSWER_BYTES and len(answer["hosts"]) > 1:
        answer["hosts"].pop()
        answer["hosts_left_out"] = len(comparison["hosts"]) - len(answer["hosts"])
    for host in answer["hosts"]:
        while size(answer) > MAX_ANSWER_BYTES and len(host["findings"]) > 1:
            host["findings"].pop()
            host["findings_page"]["next_offset"] = host["findings_page"]["offset"] + len(host["findings"])
    return answer
