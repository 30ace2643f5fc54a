"""What every report must satisfy, checked by the tests and the fuzz test: every number finite, and in host and
run reports every share or utilization (a `*_pct` value, or a value inside a `*_pct` mapping) within 0-100
(a comparison's `*_pct` are signed changes: only finite)."""

import math


def report_problems(report, where="report", shares=True):
    """Human-readable violations of the invariants in `report` (a JSON-ready dict); [] when it holds.
    shares=False checks only that numbers are finite (comparisons)."""
    problems = []
    _walk(report, where, False, problems, shares)
    return problems


def _walk(value, where, is_share, problems, shares):
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            problems.append(f"{where} = {value!r} is not finite")
        elif is_share and not 0 <= value <= 100:
            problems.append(f"{where} = {value!r} is a share outside 0-100")
        return
    if isinstance(value, dict):
        for key, item in value.items():
            key = str(key)
            share = shares and (key.endswith("_pct") or (is_share and isinstance(item, (int, float))))
            _walk(item, f"{where}.{key}", share, problems, shares)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            _walk(item, f"{where}[{index}]", is_share, problems, shares)
