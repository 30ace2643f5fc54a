"""Sharing end to end: `tb-gpu-advisor serve s3://...` on a real S3-compatible server process (moto) on
loopback, Debian's chromium on the tab: a run, a comparison, and a copied link opened in a fresh browser
context showing the same view (run, host, baseline, open finding, kernel filter)."""

import shutil
from pathlib import Path

import pytest

pytest.importorskip("s3fs", reason="s3:// logdirs need s3fs (pip install -e '.[remote]')")
pytest.importorskip("moto.server", reason="the S3 test server is moto (pip install -e '.[test]')")

from tests.plugin.tb_process import TensorBoardProcess, serve_command  # noqa: E402
from tests.plugin.test_plugin_browser import Tab  # noqa: E402  (skips the module without playwright/chromium)
from tests.remote.s3_server import (
    FOREIGN_AWS_VARIABLES,
    bucket_client,
    client_environment,
    objects,  # noqa: E402
    s3_server,
)

REPO = Path(__file__).resolve().parents[2]
BUCKET = "team-profiles"
LOGDIR = f"s3://{BUCKET}/bert"
RUNS = {
    "input_bound": "2026_01_15_09_30_00",
    "input_bound_fixed": "2026_01_15_09_29_00",
    "launch_bound": "2026_01_15_09_28_00",
}
BOUND, FIXED, LAUNCH = (f"{name}/{stamp}" for name, stamp in RUNS.items())


@pytest.fixture(scope="module")
def bucket(tmp_path_factory):
    """Three demo runs in s3://team-profiles/bert; the process environment points at the server."""
    with s3_server(tmp_path_factory.mktemp("moto") / "server.log") as endpoint, pytest.MonkeyPatch.context() as env:
        for name, value in client_environment(endpoint, tmp_path_factory.mktemp("cache"), base={}).items():
            env.setenv(name, value)
        for name in FOREIGN_AWS_VARIABLES:
            env.delenv(name, raising=False)
        local = tmp_path_factory.mktemp("upload")
        for name, stamp in RUNS.items():
            source = REPO / "demo_logs" / name / "plugins" / "profile" / stamp
            target = local / name / "plugins" / "profile" / stamp
            target.mkdir(parents=True)
            for path in source.glob("*.xplane.pb"):
                shutil.copy(path, target / path.name)
        fs = bucket_client(endpoint)
        fs.mkdir(BUCKET)
        fs.put(str(local) + "/", f"{BUCKET}/bert", recursive=True)
        yield fs


@pytest.fixture(scope="module")
def board(bucket):
    before = objects(bucket, BUCKET)
    with TensorBoardProcess(serve_command(LOGDIR)) as process:
        yield process
    assert objects(bucket, BUCKET) == before  # nothing was written to the bucket


@pytest.fixture(scope="module")
def browser():
    from tests.plugin.test_plugin_browser import CHROMIUM, CHROMIUM_ARGS, sync_api

    with sync_api.sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


def _open(browser, board, address=None):
    return Tab(browser, board.url, address=address)


def _copied_link(tab):
    tab.frame.click("[data-testid=copy-link]")
    tab.frame.wait_for_selector("[data-testid=copy-link]:has-text('Link copied')")
    link = tab.page.evaluate("navigator.clipboard.readText()")
    assert link == tab.page.evaluate("location.href")  # the address bar follows the view too
    return link


def _finding_ids(tab):
    return tab.frame.eval_on_selector_all("details[data-finding-id]", "ds => ds.map(d => d.dataset.findingId)")


def _open_findings(tab):
    return tab.frame.eval_on_selector_all(
        "details[data-finding-id]", "ds => ds.filter(d => d.open).map(d => d.dataset.findingId)"
    )


def test_a_copied_link_opens_the_same_run_finding_and_kernel_filter(browser, board):
    tab = _open(browser, board)
    try:
        assert tab.frame.eval_on_selector_all("[data-testid=run-select] option", "os => os.map(o => o.value)") == [
            BOUND,
            FIXED,
            LAUNCH,
        ]
        assert tab.show(LAUNCH) == "ready"
        findings = _finding_ids(tab)
        assert len(findings) >= 3
        tab.frame.click(f"details[data-finding-id='{findings[2]}'] > summary")
        tab.frame.fill("input[aria-label='Filter kernels']", "gemm")
        tab.frame.wait_for_selector(".pager-status:has-text('filtered from')")
        link = _copied_link(tab)
        assert "p.gpu_advisor.kernel_filter=gemm" in link and f"p.gpu_advisor.finding={findings[2]}" in link
    finally:
        tab.close()
    fresh = _open(browser, board, address=link)
    try:
        fresh.frame.wait_for_function(
            "run => { const c = document.querySelector('main.content'); "
            "return c.dataset.run === run && c.dataset.state === 'ready'; }",
            arg=LAUNCH,
        )
        assert fresh.frame.eval_on_selector("[data-testid=run-select]", "s => s.value") == LAUNCH
        assert _open_findings(fresh) == [findings[2]]
        assert fresh.frame.eval_on_selector("input[aria-label='Filter kernels']", "i => i.value") == "gemm"
        fresh.frame.wait_for_selector(".pager-status:has-text('filtered from')")
        assert fresh.errors == [] and fresh.failed == []
    finally:
        fresh.close()


def test_a_copied_comparison_link_opens_the_same_comparison(browser, board):
    tab = _open(browser, board)
    try:
        assert tab.show(FIXED) == "ready"
        assert tab.compare(BOUND) == "ready"
        verdict = tab.text("main.content")
        assert "faster" in verdict
        link = _copied_link(tab)
    finally:
        tab.close()
    fresh = _open(browser, board, address=link)
    try:
        fresh.frame.wait_for_function(
            "key => { const c = document.querySelector('main.content'); return c.dataset.view === 'comparison' && "
            "c.dataset.baseline === key && c.dataset.state === 'ready'; }",
            arg=f"{BOUND}|v100-train-01",
        )
        assert fresh.frame.eval_on_selector("[data-testid=baseline-select]", "s => s.value") == BOUND
        assert fresh.frame.eval_on_selector("[data-testid=run-select]", "s => s.value") == FIXED
        assert fresh.errors == [] and fresh.failed == []
    finally:
        fresh.close()


def test_the_profile_link_says_why_it_is_missing_on_a_bucket(browser, board):
    tab = _open(browser, board)
    try:
        assert tab.show(BOUND) == "ready"
        tab.frame.wait_for_selector("[data-testid=profile-note]:not([hidden])")
        note = tab.text("[data-testid=profile-note]")
        assert "Profile tab cannot show these runs" in note and "--" not in note  # no command-line flag
        assert tab.frame.is_hidden("a.profile-link")
        # the note wraps below the toolbar: the toolbar stays one line, the page never scrolls sideways
        assert tab.frame.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
        toolbar = tab.frame.eval_on_selector(".toolbar", "t => t.getBoundingClientRect().height")
        assert toolbar < 60, toolbar
        tab.screenshot("bucket_profile_note", full=False)
    finally:
        tab.close()


def _overview_rows(tab):
    return tab.frame.eval_on_selector_all(
        "[data-testid=overview-table] tbody tr",
        "rows => rows.map(r => [r.dataset.run, r.dataset.state, ...[...r.cells].map(c => c.innerText.trim())])",
    )


def test_the_overview_is_the_first_view_and_a_link_reopens_it(browser, board):
    tab = _open(browser, board)
    try:
        tab.frame.wait_for_selector("main.content[data-view=overview]")
        tab.frame.wait_for_selector("[data-testid=overview-status]:has-text('3 runs, all analyzed')")
        rows = {row[0]: row for row in _overview_rows(tab)}
        assert set(rows) == {BOUND, FIXED, LAUNCH}
        assert rows[BOUND][3] == "Input-bound" and rows[LAUNCH][3] == "Launch-bound"
        assert rows[BOUND][4] in ("high", "medium", "low")
        assert rows[BOUND][5].endswith("ms") and rows[BOUND][6].endswith("%")
        assert "faster" in rows[BOUND][7]
        # input_bound_fixed is another series (its own TensorBoard run): no previous run to compare with
        assert rows[FIXED][8] == ""
        tab.frame.click("button[data-sort=step_time_ms]")  # descending: the slowest first
        order = [row[0] for row in _overview_rows(tab)]
        times = [float(row[5].replace("\u00a0", " ").split()[0]) for row in _overview_rows(tab)]
        assert times == sorted(times, reverse=True), order
        tab.frame.fill("input[aria-label='Filter runs']", "launch")
        assert [row[0] for row in _overview_rows(tab)] == [LAUNCH]
        link = _copied_link(tab)
        assert "p.gpu_advisor.view=overview" in link
        tab.frame.click(f"tr[data-run='{LAUNCH}'] a")
        tab.frame.wait_for_function(
            "run => { const c = document.querySelector('main.content'); "
            "return c.dataset.view === 'report' && c.dataset.run === run && "
            "c.dataset.state === 'ready'; }",
            arg=LAUNCH,
        )
    finally:
        tab.close()
    fresh = _open(browser, board, address=link)
    try:
        fresh.frame.wait_for_selector("main.content[data-view=overview]")
        fresh.frame.wait_for_selector("[data-testid=overview-status]:has-text('3 runs, all analyzed')")
        assert len(_overview_rows(fresh)) == 3
        assert fresh.errors == [] and fresh.failed == []
    finally:
        fresh.close()
