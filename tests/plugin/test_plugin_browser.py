"""End to end: a real `tensorboard` process and Debian's chromium (Playwright) drive the GPU Advisor tab.

Screenshots go to artifacts/browser/ (git-ignored). Skips with the reason when playwright or chromium is
missing; scripts/test.sh installs both.
"""

import gzip
import json
import os
import shutil
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.plugin.scenarios import (
    CORRUPT,
    CPU_ONLY,
    INPUT_BOUND,
    MULTI_HOST,
    PREFETCH,
    QUICKSTART,
    REAL_V100,
    ROOFLINE_MI300X,
    XSS,
    XSS_KERNEL,
    write_plugin_logdir,
)
from tests.plugin.tb_process import TensorBoardProcess, tensorboard_command

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (scripts/test.sh does)")

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "artifacts" / "browser"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
TIMEOUT_MS = 60_000

if not os.path.exists(CHROMIUM):
    pytest.skip("chromium is not installed (scripts/test.sh installs it with apt-get as root)", allow_module_level=True)


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    path = tmp_path_factory.mktemp("browser_logdir")
    runs = write_plugin_logdir(str(path))
    return path, runs


@pytest.fixture(scope="module")
def board(logdir):
    with TensorBoardProcess(tensorboard_command(logdir[0])) as process:
        yield process


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


# The tab has settled: no spinner (report, timeline, kernel table) and no kernel pager still loading.
SETTLED = (
    "() => !document.querySelector('.spinner') && "
    "![...document.querySelectorAll('.pager-status')].some((s) => s.textContent.startsWith('Loading'))"
)
MAX_SHOT_PX = 16000  # the tallest single capture Chromium paints reliably; taller pages are split into parts


class Tab:
    """The TensorBoard page opened on #gpu_advisor, and our iframe inside it."""

    def __init__(self, browser, url, color_scheme="light", address=None, width=1280):
        """`address`: a full URL to open (a copied link) instead of the tab's own; `width`: the viewport's."""
        self.width = width
        self.context = browser.new_context(viewport={"width": width, "height": 800}, color_scheme=color_scheme)
        self.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=url.rstrip("/"))
        self.page = self.context.new_page()
        self.page.set_default_timeout(TIMEOUT_MS)
        self.dialogs, self.errors, self.failed = [], [], []
        self.page.on("dialog", lambda dialog: (self.dialogs.append(dialog.message), dialog.dismiss()))
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("response", self._record_failure)
        self.page.goto(address or url + "#gpu_advisor")
        self.frame = self.page.wait_for_selector('iframe[src*="name=gpu_advisor"]').content_frame()
        self.frame.wait_for_selector("[data-testid=run-select] option", state="attached")

    def _record_failure(self, response):
        if response.status >= 400 and "/data/plugin/gpu_advisor/" in response.url:
            self.failed.append((response.status, response.url))

    def show(self, run, host=None):
        """Picks run (and host) in the picker and waits until the report or an error is shown."""
        self.frame.select_option("[data-testid=run-select]", run)
        current = self.frame.eval_on_selector("[data-testid=host-select]", "s => s.value")
        if host and host != current:  # a run with one host has its host picker disabled
            self.frame.select_option("[data-testid=host-select]", host)
        host = host or current
        self.frame.wait_for_function(
            "([run, host]) => { const c = document.querySelector('main.content'); "
            "return c.dataset.run === run && c.dataset.host === host && c.dataset.state !== 'loading'; }",
            arg=[run, host],
        )
        return self.frame.eval_on_selector("main.content", "c => c.dataset.state")

    def compare(self, baseline_run, baseline_host=None):
        """Picks a baseline in "Compare with" (and its host) and waits until the comparison or an error shows."""
        self.frame.select_option("[data-testid=baseline-select]", baseline_run)
        if baseline_host:
            self.frame.select_option("[data-testid=baseline-host-select]", baseline_host)
        host = self.frame.eval_on_selector("[data-testid=baseline-host-select]", "s => s.value")
        self.frame.wait_for_function(
            "key => { const c = document.querySelector('main.content'); "
            "return c.dataset.view === 'comparison' && c.dataset.baseline === key && c.dataset.state !== 'loading'; }",
            arg=f"{baseline_run}|{host}",
        )
        return self.frame.eval_on_selector("main.content", "c => c.dataset.state")

    def text(self, selector):
        """The element's text, non-breaking spaces (between numbers and units) read as spaces."""
        return self.frame.inner_text(selector).replace("\xa0", " ")

    def settle(self):
        """Waits until every view has loaded (no spinner: the kernel table shows its rows or its empty state,
        not "Loading the kernels…"; no pager still "Loading…"), so a screenshot shows views, not placeholders."""
        self.frame.wait_for_function(SETTLED)

    def screenshot(self, name, full=True):
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.settle()
        if full:  # the iframe's own document, whole length, as the user scrolls through it
            # Measured after the views settle and again after the resize (the page reflows at the new height),
            # until the height holds: never cut at a fixed cap or before the kernel table grows the page.
            height = 0
            for _ in range(5):
                measured = self.frame.evaluate("document.documentElement.scrollHeight")
                if measured + 64 <= height:
                    break
                height = max(measured + 64, 800)
                self.page.set_viewport_size({"width": self.width, "height": min(height, MAX_SHOT_PX)})
                self.settle()
            if height > MAX_SHOT_PX:  # past what one capture holds: the rest as further shots, none left out
                self.page.set_viewport_size({"width": self.width, "height": MAX_SHOT_PX})
                for part, top in enumerate(range(0, height, MAX_SHOT_PX)):
                    self.frame.evaluate("y => window.scrollTo(0, y)", top)
                    suffix = f"_{part + 1}" if part else ""
                    self.page.screenshot(path=str(ARTIFACTS / f"{name}{suffix}.png"))
                self.frame.evaluate("window.scrollTo(0, 0)")
                self.page.set_viewport_size({"width": self.width, "height": 800})
                return
        self.page.screenshot(path=str(ARTIFACTS / f"{name}.png"))
        self.page.set_viewport_size({"width": self.width, "height": 800})

    def close(self):
        self.context.close()


@pytest.fixture
def tab(browser, board):
    opened = Tab(browser, board.url)
    yield opened
    assert opened.errors == [], opened.errors
    assert opened.dialogs == [], opened.dialogs
    opened.close()


def _profile_tab_runs(url):
    with urllib.request.urlopen(url + "data/plugin/profile/runs", timeout=60) as response:
        body = response.read()
        if response.headers.get("Content-Encoding") == "gzip":  # xprof gzips whatever the request accepts
            body = gzip.decompress(body)
    return json.loads(body)


def test_the_picker_lists_the_profile_tabs_runs(tab, board, logdir):
    options = tab.frame.eval_on_selector_all("[data-testid=run-select] option", "os => os.map(o => o.value)")
    assert options == sorted(logdir[1], key=lambda run: run.rsplit("/", 1)[-1], reverse=True)  # newest first
    assert sorted(options) == sorted(_profile_tab_runs(board.url))
    listing = tab.page.evaluate("fetch('data/plugins_listing').then(r => r.json())")
    assert listing["gpu_advisor"]["enabled"] is True and listing["gpu_advisor"]["tab_name"] == "GPU Advisor"


def test_every_run_and_host_shows_its_report_or_a_clear_error(tab, logdir):
    for run, hosts in logdir[1].items():
        for host in hosts:
            state = tab.show(run, host)
            name = f"run_{run.split('/')[0]}_{host}"
            tab.screenshot(name)
            if run == CORRUPT or host == "worker2":
                assert state == "error", name
                assert "cannot be analyzed" in tab.text("[data-testid=error-message]")
                continue
            assert state == "ready", name
            assert tab.text("[data-testid=verdict]").strip()
            assert tab.frame.query_selector("[data-testid=findings]") is not None
            if run == CPU_ONLY:
                assert "No GPU in this profile" in tab.text("[data-testid=notes]")
                assert "No GPU in this profile, so no kernels." in tab.text("#kernels")
            else:
                tab.frame.wait_for_selector("[data-testid=kernel-table] tbody tr")
                tab.frame.wait_for_selector("[data-testid=timeline]")
    assert sorted({code for code, _ in tab.failed}) == [422]


def test_quickstart_shows_verdict_charts_and_no_findings_message(tab):
    assert tab.show(QUICKSTART) == "ready"
    verdict = tab.text("[data-testid=verdict]")
    assert "Input wait (60%)" in verdict or "input" in verdict.lower()
    assert tab.text("[data-testid=confidence]").startswith("confidence: high")
    assert tab.frame.query_selector("[data-testid=verdict-caution]") is None  # a strong verdict needs no caution
    tiles = tab.text("#summary .tiles")
    assert "13.5%" in tiles and "60%" in tiles and "10 ms" in tiles
    findings = tab.text("[data-testid=findings]")
    if not tab.frame.query_selector_all("[data-testid=finding]"):
        assert "No findings" in findings
    assert len(tab.frame.query_selector_all("#steps svg .step-bar")) == 8
    assert len(tab.frame.query_selector_all("#launch svg rect.cat-launch")) == 12
    assert "Host→device" in tab.text("[data-testid=transfers]")
    overflow = tab.frame.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, "the tab scrolls sideways at 1280x800"
    tab.screenshot("quickstart_viewport", full=False)


def _first_cells(tab):
    return tab.frame.eval_on_selector_all(
        "[data-testid=kernel-table] tbody tr td.kernel-name", "tds => tds.map(td => td.getAttribute('title'))"
    )


def _wait_first_cell(tab, name):
    tab.frame.wait_for_function(
        "name => { const td = document.querySelector('[data-testid=kernel-table] tbody td.kernel-name'); "
        "return td && td.getAttribute('title') === name; }",
        arg=name,
    )


def test_kernel_table_sorts_pages_and_filters(tab):
    assert tab.show(MULTI_HOST, "worker1") == "ready"
    tab.frame.wait_for_selector("[data-testid=kernel-table] tbody tr")
    assert _first_cells(tab)[0] == "kernel_059"  # most total time first
    assert "1–25 of 60" in tab.text(".pager-status")
    tab.frame.click("button.sort[data-sort=name]")
    _wait_first_cell(tab, "kernel_000")
    assert _first_cells(tab)[:3] == ["kernel_000", "kernel_001", "kernel_002"]
    assert tab.frame.get_attribute("th:has(button[data-sort=name])", "aria-sort") == "ascending"
    tab.frame.click("button.sort[data-sort=name]")
    _wait_first_cell(tab, "kernel_059")
    tab.frame.click("text=Next ›")
    _wait_first_cell(tab, "kernel_034")
    assert "26–50 of 60" in tab.text(".pager-status")
    tab.frame.fill("[aria-label='Filter kernels']", "kernel_00")
    _wait_first_cell(tab, "kernel_009")
    tab.frame.wait_for_function("() => document.querySelector('.pager-status').textContent.includes('of 10')")
    assert "1–10 of 10 (filtered from 60)" in tab.text(".pager-status")
    occupancy = tab.frame.query_selector_all("[data-testid=kernel-table] td .occupancy svg.meter")
    assert len(occupancy) == 9  # kernel_000 records occupancy 0, which no kernel that ran has: shown as n/a
    tab.screenshot("kernel_table_filtered", full=False)


def test_tensor_core_badge_and_full_name_on_hover(tab):
    assert tab.show(MULTI_HOST, "worker0") == "ready"
    tab.frame.wait_for_selector("[data-testid=kernel-table] tbody tr")
    badges = tab.frame.eval_on_selector_all("[data-testid=kernel-table] .badge.tc", "bs => bs.length")
    rows = tab.frame.eval_on_selector_all("[data-testid=kernel-table] tbody tr", "rs => rs.length")
    assert badges == rows == 9  # two Tensor Core GEMMs under nine distinct ops
    titles = _first_cells(tab)
    assert any(title.startswith("void cutlass::Kernel<cutlass_80_tensorop") for title in titles)


def test_multi_gpu_run_leads_with_compute_busy(tab):
    assert tab.show(MULTI_HOST, "worker0") == "ready"
    tiles = tab.text("#summary .tiles")
    # Copies add to the busy share; no collective kernel was captured, so no "with collectives" tile.
    assert "GPU compute busy" in tiles and "with copies" in tiles and "with collectives" not in tiles
    hints = tab.frame.eval_on_selector_all("#gpus .gpu-hint", "hs => hs.map(h => h.textContent)")
    assert len(hints) == 2 and all(hint.startswith("collectives only 0%") for hint in hints)
    values = tab.frame.eval_on_selector_all("#gpus .gpu-value", "vs => vs.map(v => v.textContent)")
    assert len(values) == 2 and all(value.endswith(" compute") for value in values)


def _finding(fix):
    return {
        "id": "GA-TEST-001",
        "category": "input",
        "severity": "high",
        "title": "GPU idle waiting for input",
        "summary": "The host waits for tf.data while every GPU idles.",
        "evidence": {"input_wait_pct": 60.0, "steps": ["0", "1"], "threshold_pct": 10},
        "estimated_speedup": 2.5,
        "fix_summary": "Parallelize and prefetch the input pipeline.",
        "fix": fix,
        "docs": ["https://www.tensorflow.org/guide/data_performance", "javascript:alert(1)"],
    }


def test_roofline_card_and_kernel_column_on_the_real_mi300x_trace(tab):
    """The hipBLASLt GEMMs of the real MI300X JAX trace as dots under the gfx942 roofs; 'Of roof' in the table."""
    assert tab.show(ROOFLINE_MI300X) == "ready"
    tab.frame.wait_for_selector("#roofline svg.roofline")
    dots = tab.frame.eval_on_selector_all("#roofline circle.roof-dot", "cs => cs.map(c => c.textContent)")
    assert len(dots) == 6  # five GEMM custom-calls and the Triton GEMM fusion; pure copies have no intensity
    assert any("900 TFLOP/s" in d for d in dots), dots
    roofs = tab.frame.eval_on_selector_all("#roofline line.roof", "ls => ls.map(l => l.textContent)")
    assert "matrix 16-bit roof: 1307.44 TFLOP/s" in roofs and "HBM roof: 5324.8 GB/s" in roofs
    assert "21.7% of the 1307.44 TFLOP/s peak" in tab.text("#roofline .facts")
    tab.frame.wait_for_selector("[data-testid=kernel-table] tbody tr")
    first = tab.frame.eval_on_selector("[data-testid=kernel-table] tbody tr", "tr => tr.lastElementChild.textContent")
    assert first == "69%"
    tab.screenshot("roofline_mi300x")


def test_copy_a_fix_to_the_clipboard(tab):
    """Uses the report's own findings when it has some; else the same report with one finding added."""
    fix = (
        "Parse in parallel and prefetch, so that the input is ready before the step asks for it " * 8 + "\n\n"
        "    dataset = dataset.map(parse, num_parallel_calls=tf.data.AUTOTUNE)\n"
        "    dataset = dataset.prefetch(tf.data.AUTOTUNE)  # <script>alert(1)</script> & done"
        + ", with a comment long enough to pass the card's right edge at 1280 px"
        * 3
    )
    shown = []

    def add_finding(route):
        response = route.fetch()
        report = response.json()
        if not report.get("findings"):
            report["findings"] = [_finding(fix)]
        shown.append(report["findings"][0]["fix"])
        if "bottleneck" not in report["summary"]:
            report["summary"].update(bottleneck="input", verdict="The GPUs wait for the input pipeline <i>60%</i>.")
        route.fulfill(response=response, body=json.dumps(report))

    tab.page.route("**/data/plugin/gpu_advisor/report?*", add_finding)
    assert tab.show(QUICKSTART) == "ready"
    card = tab.frame.wait_for_selector("[data-testid=finding]")
    code = tab.frame.eval_on_selector("[data-testid=finding] .fix code", "c => c.textContent")
    expected = shown[-1]
    if expected == fix:
        # prose wraps inside the card; code keeps its lines (without the indent) unwrapped and scrolls sideways
        # inside the card: no line cut at the right or the bottom (review: comments and the key line clipped at
        # 1280 px; a wrapped code line reads as two statements)
        assert code.startswith("dataset = dataset.map(") and "\n" in code
        prose = tab.frame.eval_on_selector("[data-testid=finding] .fix-prose", "p => [p.scrollWidth, p.clientWidth]")
        assert prose[0] <= prose[1]
        pre = tab.frame.eval_on_selector(
            "[data-testid=finding] .fix pre",
            "p => [getComputedStyle(p).whiteSpace, getComputedStyle(p).overflowX, p.scrollHeight - p.clientHeight, "
            "p.getBoundingClientRect().right <= p.closest('[data-testid=finding]').getBoundingClientRect().right]",
        )
        assert pre == ["pre", "auto", 0, True], pre
        assert "up to 2.5× faster" in card.inner_text()
        tab.frame.click("[data-testid=finding] .evidence-fold > summary")  # the evidence is folded
        assert "Input wait" in card.inner_text() and "60" in card.inner_text()
        links = tab.frame.eval_on_selector_all("[data-testid=finding] .docs a", "as => as.map(a => a.href)")
        assert links == ["https://www.tensorflow.org/guide/data_performance"]
    verdict = tab.text("[data-testid=verdict]")
    assert "Input-bound" in verdict
    if "<i>" in verdict:  # our injected verdict: markup in it stays text
        assert tab.frame.query_selector("[data-testid=verdict] i") is None
    tab.frame.click("[data-testid=finding] button.copy")
    tab.frame.wait_for_selector("[data-testid=finding] button.copy.copied")
    assert tab.frame.evaluate("navigator.clipboard.readText()") == expected
    assert tab.frame.query_selector("[data-testid=finding] script") is None
    tab.screenshot("finding_copied", full=False)


def test_a_corrupt_run_shows_its_error_and_the_others_still_work(tab):
    assert tab.show(CORRUPT) == "error"
    message = tab.text("[data-testid=error-message]")
    assert "cannot be analyzed" in message and "not a valid XSpace protobuf" in message
    assert "Other runs and hosts are not affected" in message
    tab.screenshot("corrupt_run", full=False)
    assert tab.show(QUICKSTART) == "ready"


def test_html_in_kernel_names_renders_as_text(tab):
    assert tab.show(XSS) == "ready"
    tab.frame.wait_for_selector("[data-testid=kernel-table] tbody tr")
    assert XSS_KERNEL in _first_cells(tab)
    assert tab.frame.query_selector_all("img") == []
    assert tab.frame.query_selector_all("[data-testid=kernel-table] b") == []
    assert "<b>op</b>" in tab.text("[data-testid=kernel-table] .op")
    on_attributes = tab.frame.evaluate(
        "Array.from(document.querySelectorAll('*')).flatMap(e => Array.from(e.attributes))"
        ".filter(a => a.name.startsWith('on')).length"
    )
    assert on_attributes == 0
    assert tab.frame.query_selector_all("script") == []  # the app adds none (and replaces TB's loader)
    assert tab.dialogs == []


def test_the_tab_runs_under_tensorboards_strict_script_policy(tab):
    entry = tab.page.evaluate(
        "fetch('data/plugin_entry.html?name=gpu_advisor').then(async r => "
        "({csp: r.headers.get('content-security-policy'), html: await r.text()}))"
    )
    script_src = next(part for part in entry["csp"].split(";") if part.strip().startswith("script-src"))
    assert "'unsafe-inline'" not in script_src and "sha256-" in script_src
    assert entry["html"].count("<script") == 1 and 'import("./static/index.js")' in entry["html"]
    loaded = tab.frame.evaluate("performance.getEntriesByType('resource').map(e => e.name)")
    assert any(name.endswith("/data/plugin/gpu_advisor/static/index.js") for name in loaded)
    origin = tab.page.url.split("#")[0]
    assert all(name.startswith(origin) for name in loaded), "the tab loaded something from another origin"


def test_follows_tensorboards_dark_mode(browser, board):
    dark = Tab(browser, board.url, color_scheme="dark")
    try:
        assert dark.show(QUICKSTART) == "ready"
        assert dark.page.evaluate("document.body.classList.contains('dark-mode')")
        assert dark.frame.evaluate("document.documentElement.dataset.theme") == "dark"
        background = dark.frame.evaluate("getComputedStyle(document.body).backgroundColor")
        assert background == "rgb(48, 48, 48)"
        dark.screenshot("quickstart_dark", full=False)
        dark.page.evaluate("document.body.classList.remove('dark-mode')")
        dark.frame.wait_for_function("() => document.documentElement.dataset.theme === 'light'")
    finally:
        dark.close()


def test_profile_link_opens_the_profile_tab_on_the_same_run_and_host(tab):
    assert tab.show(INPUT_BOUND) == "ready"
    assert INPUT_BOUND in tab.frame.get_attribute("a.profile-link", "title")
    assert tab.frame.is_hidden("[data-testid=profile-note]")
    href = tab.frame.get_attribute("a.profile-link", "href")
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(href).query)
    assert (query["run"], query["host"], query["tag"]) == ([INPUT_BOUND], ["localhost"], ["trace_viewer"])
    assert href.endswith("#profile")
    with tab.context.expect_page() as opened:
        tab.frame.click("a.profile-link")
    profile = opened.value
    profile.set_default_timeout(TIMEOUT_MS)
    xprof = profile.wait_for_selector('iframe[src*="name=profile"]').content_frame()
    # XProf reads run, tool and host from TensorBoard's query string: its pickers show them
    xprof.wait_for_function(
        "([run, host]) => document.body.innerText.includes(run) && "
        "document.body.innerText.includes('Trace Viewer') && document.body.innerText.includes(host)",
        arg=[INPUT_BOUND, "localhost"],
    )
    profile.close()


def test_real_v100_trace(tab, logdir):
    assert tab.show(REAL_V100) == "ready"
    assert "72.4%" in tab.text("#summary .tiles")
    assert len(tab.frame.query_selector_all("#gpus .gpu-row")) == 8
    tab.frame.wait_for_selector("[data-testid=timeline]")
    assert "each GPU row spans its own step markers" in tab.text("[data-testid=timeline]")
    tab.frame.wait_for_selector("[data-testid=kernel-table] tbody tr")
    assert "1–15 of 15" in tab.text(".pager-status")
    configuration = tab.text("[data-testid=configuration]")
    assert (
        "8 x Tesla V100-SXM2-16GB (identified from its properties), cc 7.0" in configuration
        and "TF_GPU_THREAD_MODE=gpu_private" in configuration
    )
    tab.screenshot("real_v100x8")


@pytest.fixture(scope="module")
def demo_board():
    demo = REPO / "demo_logs"
    with TensorBoardProcess(tensorboard_command(demo)) as process:
        yield process


def test_demo_logdir(browser, demo_board):
    demo = Tab(browser, demo_board.url)
    try:
        runs = demo.frame.eval_on_selector_all("[data-testid=run-select] option", "os => os.map(o => o.value)")
        assert runs
        for run in runs:
            assert demo.show(run) == "ready", run
            demo.frame.wait_for_selector("[data-testid=timeline]")
            demo.screenshot(f"demo_{run.split('/')[0]}")  # docs/gpu_advisor_tab.png is made from these
        assert demo.errors == [] and demo.dialogs == []
    finally:
        demo.close()


def test_the_inline_loader_demo_shows_its_input_preparation(browser, demo_board):
    """The step thread's batch preparation is its own breakdown category, painted in its own colour in the verdict
    card's bar and in each step's bar (light theme: --c-input-prep #c2185b)."""
    demo = Tab(browser, demo_board.url)
    try:
        runs = demo.frame.eval_on_selector_all("[data-testid=run-select] option", "os => os.map(o => o.value)")
        assert demo.show(next(run for run in runs if run.split("/")[0] == "jax_inline_loader")) == "ready"
        assert "Input preparation 43%" in demo.text("#summary .breakdown-overall")
        fill = demo.frame.eval_on_selector(
            "#summary .breakdown-bar rect.cat-input_prep", "r => getComputedStyle(r).fill"
        )
        assert fill == "rgb(194, 24, 91)"
        assert len(demo.frame.query_selector_all("#steps svg rect.cat-input_prep")) == 5
        assert demo.errors == []
    finally:
        demo.close()


def _compare_json(tab, **params):
    return tab.frame.evaluate("p => fetch('compare?' + new URLSearchParams(p)).then(r => r.json())", params)


def test_compare_with_a_baseline_shows_the_comparison_and_clears_back(tab):
    assert tab.show(PREFETCH) == "ready"
    options = tab.frame.eval_on_selector_all("[data-testid=baseline-select] option", "os => os.map(o => o.value)")
    assert options[0] == "" and INPUT_BOUND in options and PREFETCH not in options
    assert tab.frame.is_disabled("[data-testid=clear-comparison]")
    assert tab.compare(INPUT_BOUND) == "ready"
    assert tab.frame.is_hidden("[data-testid=baseline-host-select]")  # the baseline run has one host
    expected = _compare_json(tab, run=PREFETCH, host="localhost", baseline_run=INPUT_BOUND, baseline_host="localhost")
    speedup = expected["hosts"][0]["speedup"]
    verdict = tab.text("[data-testid=compare-verdict]")
    assert f"{speedup:.2f}× faster" in verdict and "input wait fell from" in verdict
    assert f"{speedup:.2f}× faster" in tab.text("[data-testid=compare-verdict] .badge")
    assert tab.text("[data-testid=noise-statement]").startswith("Beyond noise: the 95% confidence interval")
    tiles = tab.text("#compare-summary .tiles")
    assert "Mean step time" in tiles and "Median step time" in tiles and "95% CI" in tiles and "→" in tiles
    input_row = tab.frame.wait_for_selector("#compare-breakdown svg .delta-row[data-category=input_wait]")
    assert "fell" in input_row.get_attribute("class")
    zero = float(tab.frame.get_attribute("#compare-breakdown svg line.zero", "x1"))
    bar = tab.frame.query_selector("#compare-breakdown svg .delta-row[data-category=input_wait] rect")
    assert float(bar.get_attribute("x")) + float(bar.get_attribute("width")) <= zero + 1e-6
    assert input_row.evaluate("g => g.querySelector('.row-label').textContent") == "Input wait"
    assert input_row.evaluate("g => g.querySelector('.row-value').textContent").startswith("\u2212")
    assert "78.4%" in tab.text("#compare-gpus") and "+63.4 pts" in tab.text("#compare-gpus")
    persisting = [f["title"] for f in expected["hosts"][0]["findings"]["persisting"]]
    for title in persisting:
        assert title in tab.text("#compare-findings")
    checks = expected["hosts"][0]["predictions"]["findings"]
    assert checks, "the fix resolved the input findings: their predictions are checked"
    predictions = tab.text("#compare-predictions")
    assert f"measured {speedup:.2f}× faster (95% CI" in predictions
    for check in checks:
        assert check["title"] in predictions and f"{check['ratio']:.2f}" in predictions
        assert check["score_text"] in predictions  # the CLI's words: a bound held or exceeded, a model within
    assert "No kernel appeared, disappeared or changed" in tab.text("#compare-kernels")
    overflow = tab.frame.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, "the comparison scrolls sideways at 1280x800"
    tab.screenshot("compare_prefetch_vs_input_bound_viewport", full=False)
    tab.screenshot("compare_prefetch_vs_input_bound")
    tab.frame.focus("[data-testid=clear-comparison]")
    tab.frame.press("[data-testid=clear-comparison]", "Enter")
    tab.frame.wait_for_function(
        "() => { const c = document.querySelector('main.content'); "
        "return c.dataset.view === 'report' && c.dataset.state === 'ready'; }"
    )
    assert tab.frame.eval_on_selector("[data-testid=baseline-select]", "s => s.value") == ""
    assert tab.frame.evaluate("document.activeElement.dataset.testid") == "baseline-select"
    assert tab.frame.query_selector("#compare-summary") is None and tab.frame.query_selector("#summary")


def test_compare_with_a_multi_host_baseline_lists_kernel_changes(tab):
    assert tab.show(QUICKSTART) == "ready"
    tab.frame.select_option("[data-testid=baseline-select]", MULTI_HOST)
    assert tab.frame.is_visible("[data-testid=baseline-host-select]")  # several hosts, none named localhost
    assert tab.frame.eval_on_selector("[data-testid=baseline-host-select]", "s => s.value") == "worker0"
    assert tab.compare(MULTI_HOST, "worker1") == "ready"
    kinds = tab.frame.eval_on_selector_all("[data-testid=kernel-changes] tbody tr", "rs => rs.map(r => r.dataset.kind)")
    assert set(kinds) == {"new", "gone"}
    tab.frame.click("button.kind-filter[data-kind=new]")
    new = tab.frame.eval_on_selector_all("[data-testid=kernel-changes] tbody tr", "rs => rs.map(r => r.dataset.kind)")
    assert new and set(new) == {"new"}
    assert tab.frame.get_attribute("button.kind-filter[data-kind=new]", "aria-pressed") == "true"
    assert "ampere_sgemm_128x64_tn" in tab.text("[data-testid=kernel-changes]")
    tab.screenshot("compare_quickstart_vs_multi_host_worker1")
    tab.show(CPU_ONLY)  # another candidate: the baseline stays
    assert tab.frame.eval_on_selector("main.content", "c => [c.dataset.view, c.dataset.baseline]") == [
        "comparison",
        f"{MULTI_HOST}|worker1",
    ]
    tab.show(MULTI_HOST, "worker0")  # the baseline's own run: back to the single-run view
    assert tab.frame.eval_on_selector("main.content", "c => [c.dataset.view, c.dataset.state]") == ["report", "ready"]
    assert tab.frame.eval_on_selector("[data-testid=baseline-select]", "s => s.value") == ""


def test_a_corrupt_baseline_is_a_clear_error_and_clearing_recovers(tab):
    assert tab.show(PREFETCH) == "ready"
    assert tab.compare(CORRUPT, "tpu_mangled") == "error"  # the committed real corrupt trace, a second host
    message = tab.text("[data-testid=error-message]")
    assert "These runs cannot be compared" in message and "cannot analyze tpu_mangled.xplane.pb" in message
    tab.frame.click("[data-testid=clear-comparison]")
    tab.frame.wait_for_function(
        "() => { const c = document.querySelector('main.content'); "
        "return c.dataset.view === 'report' && c.dataset.state === 'ready'; }"
    )


def test_the_comparison_in_dark_mode(browser, board):
    dark = Tab(browser, board.url, color_scheme="dark")
    try:
        assert dark.show(PREFETCH) == "ready"
        assert dark.compare(INPUT_BOUND) == "ready"
        assert dark.frame.evaluate("document.documentElement.dataset.theme") == "dark"
        color = dark.frame.evaluate("getComputedStyle(document.querySelector('#compare-breakdown .row-label')).fill")
        assert color == "rgb(238, 238, 238)"
        dark.screenshot("compare_dark", full=False)
        assert dark.errors == [] and dark.dialogs == []
    finally:
        dark.close()


def test_the_confidence_shows_beside_the_verdict_with_its_reasons(tab):
    """A low confidence with a reason carrying markup, which stays text."""
    REASON = "A reason set by this test, with <b>markup</b> that stays text."

    def low(route):
        response = route.fetch()
        report = response.json()
        # a reason true of any run (the screenshot must not show a sentence false for its run), with markup
        report["summary"]["confidence"] = {"level": "low", "reasons": [REASON]}
        route.fulfill(response=response, body=json.dumps(report))

    tab.page.route("**/data/plugin/gpu_advisor/report?*", low)
    assert tab.show(QUICKSTART) == "ready"
    shown = tab.text("[data-testid=confidence]")
    assert "confidence: low" in shown and REASON in shown
    assert tab.frame.query_selector("[data-testid=confidence] b") is None
    assert tab.frame.query_selector("#summary [data-testid=verdict] + [data-testid=confidence]") is not None
    # the verdict itself looks weak: a caution badge in it, its bottleneck badge dashed
    assert tab.text("[data-testid=verdict] [data-testid=verdict-caution]").startswith("tentative")
    assert (
        tab.frame.eval_on_selector("[data-testid=verdict] .badge.bottleneck", "b => getComputedStyle(b).borderTopStyle")
        == "dashed"
    )
    # and the whole verdict is boxed in dashes, its sentence muted: a low one never reads like a strong one
    assert tab.frame.eval_on_selector("[data-testid=verdict]", "v => getComputedStyle(v).borderTopStyle") == "dashed"
    assert tab.frame.eval_on_selector("[data-testid=verdict] .verdict-text", "t => getComputedStyle(t).fontStyle") == (
        "italic"
    )
    tab.screenshot("verdict_low_confidence", full=False)


def test_the_overview_shows_the_scan_progress_until_the_logdir_is_read(browser, board):
    """A partial /overview (the background scan of a large logdir) reads as progress, not as an empty logdir;
    the tab keeps asking until the scan is complete."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    partial = {
        "runs": [],
        "total": 10000,
        "done": 0,
        "errors": 0,
        "pending": 10000,
        "scanning": {"done": 1200, "total": 10000},
    }
    route = "**/data/plugin/gpu_advisor/overview*"
    context.route(
        route, lambda request: request.fulfill(status=200, content_type="application/json", body=json.dumps(partial))
    )
    try:
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        errors = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(board.url + "#gpu_advisor")
        frame = page.wait_for_selector('iframe[src*="name=gpu_advisor"]').content_frame()
        status = "[data-testid=overview-status]"
        frame.wait_for_selector(f"{status}:has-text('Scanning the logdir')")
        assert frame.inner_text(status) == "Scanning the logdir: 1,200 of 10,000 runs read"
        assert frame.query_selector("#overview p.empty") is None  # not "No runs in this logdir."
        context.unroute(route)
        frame.wait_for_selector(f"{status}:has-text('runs, all analyzed')")
        assert errors == []
    finally:
        context.close()
