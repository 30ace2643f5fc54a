"""The precision the report gives its numbers, shared by the report and the rules that quote them."""

PS_PER_US = 1e6
PS_PER_MS = 1e9


def us(ps):
    """Picoseconds as microseconds with 3 decimals (nanosecond precision)."""
    return None if ps is None else round(ps / PS_PER_US, 3)


def ms(ps):
    """Picoseconds as milliseconds with 6 decimals."""
    return None if ps is None else round(ps / PS_PER_MS, 6)


def pct(value):
    """A percentage with 2 decimals."""
    return None if value is None else round(float(value), 2)


def sig(value, digits=6):
    """A float rounded to `digits` significant digits (None stays None)."""
    return None if value is None else float(f"{value:.{digits}g}")
