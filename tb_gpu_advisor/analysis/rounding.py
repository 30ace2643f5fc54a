"""The precision the report gives its numbers, shared by the report and the rules that quote them."""

from __future__ import annotations

PS_PER_US = 1e6
PS_PER_MS = 1e9


def us(ps: float | None) -> float | None:
    """Picoseconds as microseconds with 3 decimals (nanosecond precision)."""
    return None if ps is None else round(ps / PS_PER_US, 3)


def ms(ps: float, decimals: int = 6) -> float:
    """Picoseconds as milliseconds with 6 decimals (evidence times in findings: 3); None stays None."""
    return None if ps is None else round(float(ps) / PS_PER_MS, decimals)


def pct(value: float | None) -> float | None:
    """A percentage with 2 decimals."""
    return None if value is None else round(float(value), 2)


def sig(value: float | None, digits: int = 6) -> float | None:
    """A float rounded to `digits` significant digits (None stays None)."""
    return None if value is None else float(f"{value:.{digits}g}")
