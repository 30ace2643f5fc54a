"""Layout of the tab in a real TensorBoard and Debian's chromium: labels never cut, numbers never wrapped, one-line
toolbar at 1280 px, the first run shown, the multi-GPU view, distinct colours in dark mode."""

import json

import pytest

from tests.plugin.scenarios import MULTI_HOST, QUICKSTART, REAL_V100
from tests.plugin.test_plugin_browser import Tab, board, browser, demo_board, logdir  # noqa: F401 (fixtures)

STRAGGLER = "multi_gpu_straggler/2026_01_15_09_20_00"

# Every text of each chart, with its box and the box of its SVG, in page pixels.
CHART_TEXTS = """() => Array.from(document.querySelectorAll('svg.chart')).flatMap((svg) => {
  const box = svg.getBoundingClientRect();
  return Array.from(svg.querySelectorAll('text')).map((text) => {
    const r = text.getBoundingClientRect();
    return {card: svg.closest('section').id, text: text.textContent, inside: r.left >= box.left - 0.5 &&
      r.right <= box.right + 0.5 && r.top >= box.top - 0.5 && r.bottom <= box.bottom + 0.5};
  });
})"""

# Numeric cells whose text lays out on more than one line.
WRAPPED_CELLS = """() => Array.from(document.querySelectorAll('td.num, .gpu-value, .tile-value')).filter((cell) => {
  const range = document.createRange();
  range.selectNodeContents(cell);
  const tops = new Set(Array.from(range.getClientRects()).filter((r) => r.width > 0 && r.height > 0)
    .map((r) => Math.round(r.top + r.height / 2)));
  const lines = Array.from(tops).sort((a, b) => a - b).filter((t, i, all) => i === 0 || t - all[i - 1] > 4);
  return lines.length > 1;
}).map((cell) => cell.textContent)"""


def _newest_first(options):
    return max(options, key=lambda run: run.rsplit("/", 1)[-1])


def _large_launch_counts(route):
    """The report with a launch histogram past 100k launches a bin: its axis must still show whole labels."""
    response = route.fetch()
    report = response.json()
    histogram = report.get("launch", {}).get("latency_histogram") or {}
    if histogram.get("counts"):
        histogram["counts"] = [123_456 * (i + 1) for i in range(len(histogram["counts"]))]
    route.fulfill(response=response, body=json.dumps(report))


@pytest.mark.parametrize("run", [QUICKSTART, MULTI_HOST, REAL_V100])
def test_chart_labels_stay_inside_their_svg(browser, board, run):  # noqa: F811
    tab = Tab(browser, board.url)
    try:
        tab.page.route("**/data/plugin/gpu_advisor/report?*", _large_launch_counts)
        assert tab.show(run, "worker0" if run == MULTI_HOST else None) == "ready"
        tab.frame.wait_for_selector("#launch svg.chart")
        y_labels = tab.frame.eval_on_selector_all("#launch svg .y-label", "ts => ts.map(t => t.textContent)")
        assert y_labels[-1].endswith(("k", "M")) and all(len(label) <= 5 for label in y_labels), y_labels
        texts = tab.frame.evaluate(CHART_TEXTS)
        assert {t["card"] for t in texts} >= {"steps", "launch"}
        assert [t for t in texts if not t["inside"]] == [], [t for t in texts if not t["inside"]]
    finally:
        tab.close()


def test_step_axis_fits_the_data_in_one_unit(browser, board):  # noqa: F811
    tab = Tab(browser, board.url)
    try:
        assert tab.show(QUICKSTART) == "ready"
        labels = tab.frame.eval_on_selector_all("#steps svg .y-label", "ts => ts.map(t => t.textContent)")
        assert len({label.split(" ")[-1] for label in labels}) == 1, labels  # "0 ms" beside "10 ms", never "0 ns"
        top = float(labels[-1].split(" ")[0])
        assert 10 <= top < 12.5, labels  # 10 ms steps on a 10 ms axis, not 20 ms
    finally:
        tab.close()


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_numbers_never_wrap_at_1280(browser, demo_board, theme):  # noqa: F811
    tab = Tab(browser, demo_board.url, color_scheme=theme)
    try:
        for run in (STRAGGLER, "input_bound/2026_01_15_09_30_00", "launch_bound/2026_01_15_09_28_00"):
            assert tab.show(run) == "ready"
            tab.frame.wait_for_selector("[data-testid=kernel-table] tbody tr")
            tab.frame.wait_for_selector("[data-testid=timeline]")
            assert tab.frame.evaluate(WRAPPED_CELLS) == [], run
            assert tab.frame.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    finally:
        tab.close()


def test_the_toolbar_is_one_line_at_1280_with_full_run_names(browser, demo_board):  # noqa: F811
    tab = Tab(browser, demo_board.url)
    try:
        assert tab.show(STRAGGLER) == "ready"
        tab.frame.select_option("[data-testid=baseline-select]", "multi_gpu_straggler_fixed/2026_01_15_09_19_00")
        tab.frame.wait_for_function("() => document.querySelector('main.content').dataset.state !== 'loading'")
        layout = tab.frame.evaluate("""() => {
          const bar = document.querySelector('.toolbar');
          const kids = Array.from(bar.children).filter((e) => e.offsetParent !== null);
          const tops = kids.map((e) => e.getBoundingClientRect().top);
          const fits = (select) => { const c = document.createElement('canvas').getContext('2d');
            c.font = getComputedStyle(select).font;
            return c.measureText(select.selectedOptions[0].textContent).width <= select.clientWidth; };
          return {rows: Math.max(...tops) - Math.min(...tops), overflow: bar.scrollWidth - bar.clientWidth,
            height: bar.getBoundingClientRect().height, run: fits(document.querySelector('[data-testid=run-select]')),
            baseline: fits(document.querySelector('[data-testid=baseline-select]')),
            search: !document.querySelector('[data-testid=run-search]').hidden};
        }""")
        assert layout["rows"] < 8 and layout["overflow"] <= 0 and layout["height"] < 60, layout
        assert layout["run"] and layout["baseline"], layout  # the full run names show
        assert layout["search"], "22 runs: the run search shows"
        tab.frame.fill("[data-testid=run-search]", "host_bound_fi")
        tab.frame.press("[data-testid=run-search]", "Enter")
        tab.frame.wait_for_function(
            "() => document.querySelector('main.content').dataset.run.startsWith('host_bound_fixed/')"
        )
    finally:
        tab.close()


def test_the_first_run_is_the_newest_whatever_the_url(browser, demo_board):  # noqa: F811
    urls = [demo_board.url, demo_board.url.replace("127.0.0.1", "localhost")]
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        shown = []
        for url in urls + urls[:1]:
            page = context.new_page()
            page.goto(url + "#gpu_advisor")
            frame = page.wait_for_selector('iframe[src*="name=gpu_advisor"]').content_frame()
            frame.wait_for_function("() => document.querySelector('main.content')?.dataset.run")
            options = frame.eval_on_selector_all("[data-testid=run-select] option", "os => os.map(o => o.value)")
            shown.append((frame.eval_on_selector("main.content", "c => c.dataset.run"), _newest_first(options)))
            if len(shown) == 1:  # another pick in this page is kept across its reloads, not by other pages
                frame.select_option("[data-testid=run-select]", "healthy/2026_01_15_09_16_00")
                page.reload()
                frame = page.wait_for_selector('iframe[src*="name=gpu_advisor"]').content_frame()
                frame.wait_for_function("() => document.querySelector('main.content')?.dataset.run")
                assert frame.eval_on_selector("main.content", "c => c.dataset.run") == "healthy/2026_01_15_09_16_00"
            page.close()
        assert all(run == newest == "input_bound/2026_01_15_09_30_00" for run, newest in shown), shown
    finally:
        context.close()


def test_the_straggler_and_its_per_gpu_table(browser, demo_board):  # noqa: F811
    tab = Tab(browser, demo_board.url)
    try:
        assert tab.show(STRAGGLER) == "ready"
        tab.frame.wait_for_selector("[data-testid=timeline]")
        marked = tab.frame.eval_on_selector_all(".is-straggler", "es => es.map(e => e.dataset.device || e.textContent)")
        assert marked and all("GPU:2" in m for m in marked), marked
        table = tab.text("[data-testid=per-gpu]")
        assert "GPU:0" in table and "GPU:3" in table and "straggler" in table
        rows = tab.frame.eval_on_selector_all(
            "[data-testid=timeline] svg.strip",
            "ss => ss.map(s => "
            "[s.querySelectorAll('.cat-busy').length, s.querySelectorAll('.cat-collectives').length])",
        )
        assert len(rows) == 5 and all(busy and collectives for busy, collectives in rows[:4]), rows
        assert "Collectives only" in tab.text("[data-testid=timeline] .legend")
    finally:
        tab.close()


def test_kernel_share_and_op_type_filter(browser, board):  # noqa: F811
    tab = Tab(browser, board.url)
    try:
        # A run with several kernel kinds to filter by (the real V100 trace's kernels are all element-wise).
        assert tab.show(QUICKSTART) == "ready"
        tab.frame.wait_for_selector("[data-testid=op-rollup] button.op-filter")
        shares = tab.frame.eval_on_selector_all(
            "[data-testid=kernel-table] td.share", "ts => ts.map(t => t.textContent)"
        )
        assert shares and all(share.endswith("%") for share in shares)
        types = tab.frame.eval_on_selector_all(
            "[data-testid=op-rollup] button.op-filter", "bs => bs.map(b => b.dataset.opType)"
        )
        assert len(types) >= 2, types
        tab.frame.click(f"[data-testid=op-rollup] button.op-filter[data-op-type={types[-1]}]")
        tab.frame.wait_for_function(
            "t => Array.from(document.querySelectorAll('[data-testid=kernel-table] tbody tr'))"
            ".every(r => r.dataset.opType === t) && document.querySelector('.pager-status')"
            ".textContent.includes('only')",
            arg=types[-1],
        )
    finally:
        tab.close()


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_every_category_has_its_own_colour(browser, board, theme):  # noqa: F811
    tab = Tab(browser, board.url, color_scheme=theme)
    try:
        assert tab.show(QUICKSTART) == "ready"
        colours = tab.frame.evaluate("""() => ['compute_16bit', 'compute_32bit', 'collectives', 'd2h', 'd2d', 'h2d',
            'input_wait', 'launch', 'host', 'idle'].map((key) => { const e = document.createElement('span');
            e.className = `cat-${key}`; document.body.append(e); const c = getComputedStyle(e).backgroundColor;
            e.remove(); return c.match(/\\d+/g).slice(0, 3).map(Number); })""")
        for i, a in enumerate(colours):
            for b in colours[i + 1 :]:
                assert sum((x - y) ** 2 for x, y in zip(a, b)) ** 0.5 > 60, (a, b)
    finally:
        tab.close()
