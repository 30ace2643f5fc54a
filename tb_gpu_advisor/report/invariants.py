"""What every host or run report must satisfy, checked by the tests and the fuzz test: every number finite, and
every share or utilization (a `*_pct` value, or a value inside a `*_pct` mapping) within 0-100."""

import math

_SIGNED = ("change_pct", "delta_pct", "diff_pct")  # signed changes between two profiles may be negative


def report_problems(report, where="report"):
    """Human-readable violations of the invariants in `report` (a JSON-ready dict); [] when it holds."""
    problems = []
    _walk(report, where, False, problems)
    return problems


def _walk(value, where, is_share, problems):
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
            share = key.endswith("_pct") and not key.endswith(_SIGNED)
            _walk(item, f"{where}.{key}", share or (is_share and isinstance(item, (int, float))), problems)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            _walk(item, f"{where}[{index}]", is_share, problems)
