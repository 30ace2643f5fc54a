"""Inline SVG charts for the HTML report: stacked step bars, horizontal bars, a histogram (no scripts)."""

import math
from html import escape

from tb_gpu_advisor.report.tab_colors import COLORS
from tb_gpu_advisor.vocabulary import BREAKDOWN_LABELS

CATEGORY_COLORS = {key: COLORS[key] for key in BREAKDOWN_LABELS}  # as the tab paints them
BAR_COLOR = COLORS["launch"]
BUSY_COLOR = COLORS["busy"]
WIDTH = 880
_CHAR_WIDTH = 7.5  # about the width of one 12px bold character, to decide whether a label fits


def _attr(value):
    return escape(str(value), quote=True)


AXIS_TITLE_BAND = 24  # px left of the tick labels kept for the rotated axis title
LABEL_CHAR_PX = 7.2  # widest advance of a 12 px label character, digits and units


def _nice_step(span, ticks=5):
    """A 1, 2 or 5 times a power of ten step giving about `ticks` ticks over `span`."""
    raw = span / ticks if span > 0 else 1.0
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if raw <= factor * power:
            return factor * power
    return 10 * power


def _svg(height, body, label):
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {WIDTH} {height}" '
        f'width="{WIDTH}" height="{height}" role="img" aria-label="{_attr(label)}">'
        f"<title>{escape(label)}</title>{''.join(body)}</svg>"
    )


def _text(x, y, text, anchor="start", css="label"):
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" class="{css}">{escape(str(text))}</text>'


def _rect(x, y, width, height, color, title):
    return (
        f'<rect x="{x:.2f}" y="{y:.2f}" width="{max(width, 0):.2f}" height="{max(height, 0):.2f}" '
        f'fill="{color}"><title>{escape(title)}</title></rect>'
    )


def legend(items):
    """An HTML legend: [(label, color)]."""
    return (
        '<div class="legend">'
        + "".join(f'<span><i style="background:{_attr(color)}"></i>{escape(label)}</span>' for label, color in items)
        + "</div>"
    )


def stacked_columns(columns, series, value_format, label, axis_label, axis_format=None):
    """Vertical stacked bars: columns = [(name, {series_key: value})], series = [(key, label, color)].
    `axis_format(scale_max, step)` gives the tick formatter (one unit per axis); else `value_format` is used."""
    height, bottom, top = 280, 36, 12
    plot_h = height - bottom - top
    peak = max((sum(values.values()) for _, values in columns), default=0) or 1.0
    step = _nice_step(peak)
    scale_max = math.ceil(peak / step - 1e-9) * step
    tick_format = axis_format(scale_max, step) if axis_format else value_format
    ticks = [index * step for index in range(round(scale_max / step) + 1)]
    tick_labels = [tick_format(tick) for tick in ticks]
    left = max(60, AXIS_TITLE_BAND + LABEL_CHAR_PX * max(len(text) for text in tick_labels) + 8)
    plot_w = WIDTH - left - 10
    body = [
        _text(14, top + plot_h / 2, axis_label, "middle", "axis-title").replace(
            "<text ", f'<text transform="rotate(-90 14 {top + plot_h / 2:.1f})" ', 1
        )
    ]
    for tick, text in zip(ticks, tick_labels):
        y = top + plot_h * (1 - tick / scale_max)
        body.append(f'<line x1="{left}" x2="{WIDTH - 10}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>')
        body.append(_text(left - 6, y + 4, text, "end"))
    slot = plot_w / max(len(columns), 1)
    bar_w = min(max(slot * 0.75, 1.0), 64.0)
    label_every = max(1, math.ceil(len(columns) / 20))
    for index, (name, values) in enumerate(columns):
        x = left + index * slot + (slot - bar_w) / 2
        y = top + plot_h
        for key, series_label, color in series:
            value = values.get(key) or 0.0
            if value <= 0:
                continue
            h = plot_h * value / scale_max
            y -= h
            body.append(_rect(x, y, bar_w, h, color, f"{name}: {series_label} {value_format(value)}"))
        if index % label_every == 0:
            body.append(_text(x + bar_w / 2, top + plot_h + 16, name, "middle"))
    return _svg(height, body, label)


def horizontal_bars(rows, value_format, label, max_value=None, color=BAR_COLOR):
    """One bar per row: rows = [(label, value, tooltip)]; values scaled to max_value (default: the largest)."""
    bar_h, gap, left, right = 18, 8, 300, 110
    height = len(rows) * (bar_h + gap) + gap
    peak = max_value or max((value for _, value, _ in rows), default=0) or 1.0
    body = []
    for index, (name, value, tooltip) in enumerate(rows):
        y = gap + index * (bar_h + gap)
        width = (WIDTH - left - right) * (value or 0) / peak
        body.append(_rect(left, y, WIDTH - left - right, bar_h, "#f2f2f2", tooltip))
        body.append(_rect(left, y, width, bar_h, color, tooltip))
        body.append(_text(left - 8, y + bar_h - 5, name, "end"))
        body.append(_text(left + width + 6, y + bar_h - 5, value_format(value)))
    return _svg(height, body, label)


def share_bar(shares, label):
    """One 100% bar split by share: shares = [(label, percent, color)]."""
    height = 40
    body, x = [], 0.0
    total = sum(pct for _, pct, _ in shares) or 1.0
    for name, pct, color in shares:
        width = WIDTH * pct / total
        body.append(_rect(x, 4, width, 32, color, f"{name}: {pct:.1f}%"))
        fitting = next(
            (text for text in (f"{name} {pct:.0f}%", f"{pct:.0f}%") if len(text) * _CHAR_WIDTH + 12 < width), None
        )
        if fitting:
            body.append(_text(x + width / 2, 25, fitting, "middle", "on-bar"))
        x += width
    return _svg(height, body, label)


def _decades(low, high):
    return [10.0**e for e in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)]


def roofline(points, roofs, bandwidth_gbps, label):
    """Log-log roofline: x FLOPs per byte, y TFLOP/s. points = [(intensity, tflops, weight, tooltip)] with
    positive values (dot area grows with weight); roofs = [(name, tflops)] flat compute roofs, each meeting
    the memory roof (intensity x bandwidth)."""
    height, left, bottom, top, right = 340, 70, 40, 12, 16
    plot_w, plot_h = WIDTH - left - right, height - bottom - top
    ridges = [tflops * 1e3 / bandwidth_gbps for _, tflops in roofs]
    xs = [p[0] for p in points] + ridges
    ys = [p[1] for p in points] + [t for _, t in roofs]
    x_lo, x_hi = 10 ** math.floor(math.log10(min(xs) / 2)), 10 ** math.ceil(math.log10(max(xs) * 2))
    y_hi = 10 ** math.ceil(math.log10(max(ys) * 1.5))
    y_lo = 10 ** math.floor(math.log10(max(min(ys) / 2, y_hi / 1e7)))

    def px(x):
        return left + plot_w * (math.log10(x) - math.log10(x_lo)) / (math.log10(x_hi) - math.log10(x_lo))

    def py(y):
        y = min(max(y, y_lo), y_hi)
        return top + plot_h * (1 - (math.log10(y) - math.log10(y_lo)) / (math.log10(y_hi) - math.log10(y_lo)))

    body = [
        _text(left + plot_w / 2, height - 6, "arithmetic intensity (FLOPs per logical byte)", "middle", "axis-title"),
        _text(14, top + plot_h / 2, "TFLOP/s", "middle", "axis-title").replace(
            "<text ", f'<text transform="rotate(-90 14 {top + plot_h / 2:.1f})" ', 1
        ),
    ]
    for x in _decades(x_lo, x_hi):
        body.append(f'<line x1="{px(x):.1f}" x2="{px(x):.1f}" y1="{top}" y2="{top + plot_h}" class="grid"/>')
        body.append(_text(px(x), top + plot_h + 16, f"{x:g}", "middle"))
    for y in _decades(y_lo, y_hi):
        body.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{py(y):.1f}" y2="{py(y):.1f}" class="grid"/>')
        body.append(_text(left - 6, py(y) + 4, f"{y:g}", "end"))
    memory_top = max(t for _, t in roofs)
    ridge_top = memory_top * 1e3 / bandwidth_gbps
    x_start = max(x_lo, y_lo * 1e3 / bandwidth_gbps)
    body.append(
        f'<line x1="{px(x_start):.1f}" y1="{py(x_start * bandwidth_gbps / 1e3):.1f}" '
        f'x2="{px(ridge_top):.1f}" y2="{py(memory_top):.1f}" stroke="#59636e" stroke-width="2">'
        f"<title>{escape(f'HBM roof: {bandwidth_gbps:g} GB/s')}</title></line>"
    )
    for name, tflops in roofs:
        ridge = tflops * 1e3 / bandwidth_gbps
        body.append(
            f'<line x1="{px(ridge):.1f}" y1="{py(tflops):.1f}" x2="{left + plot_w}" y2="{py(tflops):.1f}" '
            f'stroke="#59636e" stroke-width="2" stroke-dasharray="{"" if tflops == memory_top else "5 3"}">'
            f"<title>{escape(f'{name} roof: {tflops:g} TFLOP/s')}</title></line>"
        )
        body.append(_text(left + plot_w - 4, py(tflops) - 5, f"{name} {tflops:g} TFLOP/s", "end"))
    heaviest = max((p[2] for p in points), default=1) or 1
    for intensity, tflops, weight, tooltip in sorted(points, key=lambda p: -p[2]):
        radius = 3 + 11 * math.sqrt(weight / heaviest)
        body.append(
            f'<circle cx="{px(intensity):.1f}" cy="{py(tflops):.1f}" r="{radius:.1f}" fill="{COLORS["roof"]}" '
            f'fill-opacity="0.55" stroke="{COLORS["roof"]}"><title>{escape(tooltip)}</title></circle>'
        )
    return _svg(height, body, label)
