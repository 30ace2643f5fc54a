import re

import pytest

from tb_gpu_advisor.report import charts


@pytest.mark.parametrize("span,step", [(23.0, 5), (4.22, 1), (100, 20), (0.37, 0.1), (3200, 1000), (0, 1)])
def test_nice_steps(span, step):
    assert charts._nice_step(span) == pytest.approx(step)


def _widths(svg):
    return [float(w) for w in re.findall(r'<rect x="[\d.]+" y="[\d.]+" width="([\d.]+)"', svg)]


def test_horizontal_bars_are_proportional_and_escaped():
    svg = charts.horizontal_bars(
        [("a<b>", 50.0, "t&1"), ("c", 100.0, "t2")], lambda v: f"{v:.0f}%", "busy", max_value=100.0
    )
    track = charts.WIDTH - 300 - 110
    assert _widths(svg) == pytest.approx([track, track / 2, track, track])
    assert "a&lt;b&gt;" in svg and "<title>t&amp;1</title>" in svg and "a<b>" not in svg


def test_stacked_columns_stack_in_series_order():
    svg = charts.stacked_columns(
        [("s0", {"x": 3.0, "y": 1.0})],
        [("x", "X", "#111111"), ("y", "Y", "#222222")],
        lambda v: f"{v:g}",
        "chart",
        "ms",
    )
    rects = re.findall(r'<rect x="[\d.]+" y="([\d.]+)" width="[\d.]+" height="([\d.]+)" fill="(#\d+)"', svg)
    (y_x, h_x, c_x), (y_y, h_y, c_y) = rects
    assert (c_x, c_y) == ("#111111", "#222222")
    assert float(h_x) == pytest.approx(3 * float(h_y))
    assert float(y_y) + float(h_y) == pytest.approx(float(y_x))  # y sits on top of x
    assert "<title>s0: X 3</title>" in svg


def test_share_bar_labels_only_what_fits():
    svg = charts.share_bar(
        [("input wait", 90.0, "#d73027"), ("host busy", 8.0, "#91bfdb"), ("idle", 2.0, "#d0d0d0")], "time"
    )
    assert ">input wait 90%<" in svg and ">8%<" in svg and "host busy 8%<" not in svg and ">2%<" not in svg


def test_legend_escapes():
    assert charts.legend([("<x>", "#fff")]) == (
        '<div class="legend"><span><i style="background:#fff"></i>&lt;x&gt;</span></div>'
    )


def _tick_labels(svg):
    return re.findall(r'<text x="[\d.]+" y="[\d.]+" text-anchor="end" class="label">([^<]+)</text>', svg)


def test_a_time_axis_has_one_unit_and_room_for_its_title():
    from tb_gpu_advisor.report import units

    columns = [(str(i), {"x": value}) for i, value in enumerate((180.0, 230.0, 245.5))]
    svg = charts.stacked_columns(
        columns, [("x", "X", "#111111")], units.duration_ms, "chart", "step time", axis_format=units.duration_axis_ms
    )
    labels = _tick_labels(svg)
    assert labels == ["0 ms", "50 ms", "100 ms", "150 ms", "200 ms", "250 ms"]
    left = float(re.search(r'<line x1="([\d.]+)"', svg).group(1))
    widest = max(len(text) for text in labels) * charts.LABEL_CHAR_PX
    assert left - 6 - widest >= charts.AXIS_TITLE_BAND  # tick labels end before the rotated title's band


@pytest.mark.parametrize(
    "peak,expected", [(0.42, ["0 µs", "100 µs"]), (12.9e3, ["0 s", "5 s"]), (7.5, ["0 ms", "2 ms"])]
)
def test_time_axis_units_follow_the_scale(peak, expected):
    from tb_gpu_advisor.report import units

    svg = charts.stacked_columns(
        [("0", {"x": peak})], [("x", "X", "#111111")], units.duration_ms, "c", "t", axis_format=units.duration_axis_ms
    )
    assert _tick_labels(svg)[:2] == expected
    assert len({text.split(" ")[1] for text in _tick_labels(svg)}) == 1
