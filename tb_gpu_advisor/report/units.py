"""Human-readable numbers with units for the text and markdown reports."""


def duration_us(value):
    """Microseconds as `850 ns`, `12.3 us`, `4.56 ms` or `1.23 s`."""
    if value is None:
        return "-"
    if value < 1:
        return f"{value * 1000:.0f} ns"
    if value < 1000:
        return f"{value:.1f} us"
    if value < 1_000_000:
        return f"{value / 1000:.2f} ms"
    return f"{value / 1e6:.2f} s"


def duration_ms(value):
    return "-" if value is None else duration_us(value * 1000)


def size_bytes(value):
    if value is None:
        return "-"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if value >= scale:
            return f"{value / scale:.2f} {unit}"
    return f"{value} B"


def percent(value):
    return "-" if value is None else f"{value:.1f}%"


def rate_gbps(value):
    return "-" if value is None else f"{value:.2f} GB/s"


def rate(value):
    """A rate without its unit, 3 significant digits below 1000 and whole above: `0.0017`, `6.71`, `2237`."""
    if value is None:
        return "-"
    if value >= 1000:
        return f"{value:.0f}"
    return f"{value:.3g}" if value >= 0.001 or value == 0 else "<0.001"


def count(value):
    return "-" if value is None else f"{value:,}"


def shorten(name, width):
    """Keeps the start and end of a long (C++ template) name."""
    if len(name) <= width:
        return name
    head = (width - 3) * 2 // 3
    tail = width - 3 - head
    return f"{name[:head]}...{name[-tail:]}"
