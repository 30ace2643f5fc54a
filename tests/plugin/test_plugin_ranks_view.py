"""The Ranks card (static/views/ranks.js) in a real TensorBoard and chromium, at 1280 and 1440 px, light and dark:
the real 4-rank gloo run with one rank given more work, a two-rank A100 run and a session of four XPlane hosts,
each read as a whole above the rank's report; an empty state for several hosts that are not ranks of one job; no
card for a run of one host."""

import os
import shutil

import pytest

from tb_gpu_advisor.testing.rank_sets import write_rank_set, write_straggler_set
from tb_gpu_advisor.testing.xplane_hosts import write_host_session
from tests.data import REAL
from tests.plugin.tb_process import TensorBoardProcess, tensorboard_command
from tests.plugin.test_plugin_browser import ARTIFACTS, Tab, browser  # noqa: F401 (fixture; skips without chromium)
from tests.plugin.test_plugin_views import AUDIT, VIEWS
from tests.readers.kineto.real import real_kineto

READY = "[data-testid=ranks-slot][data-state=ready]"
DOCS = ARTIFACTS.parents[1] / "docs"


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    logdir = tmp_path_factory.mktemp("ranks_logdir")
    shutil.copytree(REAL / "ddp_cpu" / "slow_compute", logdir / "slow_compute")
    write_rank_set([real_kineto("a100_2rank_nccl")], logdir / "a100_2rank", 2, clock_us=lambda rank: 2500.0 * rank)
    for worker in ("worker0", "worker1"):  # two traces that name no rank: separate processes, not one job
        (logdir / "two_workers").mkdir(exist_ok=True)
        shutil.copy(real_kineto("mi250_minitoy_train"), logdir / "two_workers" / f"{worker}.1.pt.trace.json.gz")
    write_host_session(str(logdir), extra_us={2: 4000.0}, clock_us=lambda k: 500.0 * k, run="jax_hosts")
    write_straggler_set(REAL / "ddp_cpu" / "slow_compute", logdir / "ranks128", 128, (37, 90, 101))
    (logdir / "one_host").mkdir()
    shutil.copy(real_kineto("a100_alexnet_sync"), logdir / "one_host" / "worker0.1.pt.trace.json.gz")
    with TensorBoardProcess(tensorboard_command(logdir)) as process:
        yield process


def _audit(tab, what):
    problems = tab.frame.evaluate(AUDIT)
    assert problems == [], f"{what} at {tab.width} px: {problems}"


def _shot(tab, name):
    """The card alone, whole, in artifacts/browser/ (git-ignored): to look at."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    # Its table (or empty state) rendered, and a viewport tall enough to paint the whole card (review issue 31 K3:
    # the 128-rank shot was two thirds blank below its heat maps).
    tab.frame.wait_for_selector("#ranks [data-testid=rank-table], #ranks [data-testid=ranks-unjoined], #ranks .empty")
    bottom = tab.frame.eval_on_selector("#ranks", "e => e.getBoundingClientRect().bottom + window.scrollY")
    tab.page.set_viewport_size({"width": tab.width, "height": min(max(int(bottom) + 64, 800), 16000)})
    tab.frame.locator("#ranks [data-testid=rank-table], #ranks .empty").first.wait_for()
    tab.frame.locator("#ranks").screenshot(path=str(ARTIFACTS / f"ranks_{name}_{tab.width}_{tab.scheme}.png"))
    tab.page.set_viewport_size({"width": tab.width, "height": 800})


def _cells(tab, testid):
    return tab.frame.eval_on_selector_all(f"[data-testid={testid}] svg rect[data-rank]", "rs => rs.length")


@pytest.mark.parametrize("width, scheme", VIEWS)
def test_the_ranks_card(browser, board, width, scheme):  # noqa: F811
    tab = Tab(browser, board.url, color_scheme=scheme, width=width)
    tab.scheme = scheme
    try:
        # the gloo run, rank 2 given more work: named with its cause, the evidence, the heat maps, the what-ifs
        assert tab.show("slow_compute", "rank0") == "ready"
        tab.frame.wait_for_selector(READY)
        first = tab.frame.eval_on_selector("main.content > section.card", "c => c.id")
        assert first == "ranks", "the run-level view comes above the rank's own report"
        assert tab.text("[data-testid=rank-slowest]").startswith(
            "Slowest rank: 2 (vm: rank2), last to arrive in 10 of 10"
        )
        assert "more compute (more work per step" in tab.text("[data-testid=rank-why]")
        assert _cells(tab, "rank-step-time") == 40 and _cells(tab, "rank-step-cause") == 40
        causes = tab.frame.eval_on_selector_all(
            "[data-testid=rank-step-cause] .legend li", "ls => ls.map(l => l.textContent)"
        )
        assert "peer wait" in causes
        slow_row = tab.frame.eval_on_selector(
            "[data-testid=rank-table] tr[aria-current=true] td", "td => td.textContent"
        )
        assert slow_row == "2"
        assert tab.text("[data-testid=rank-work] tbody tr td").startswith("aten::")
        median = tab.text("[data-what-if=rank_at_median]")
        assert median.startswith("What-if (a model) if rank 2 matched the median rank: 9.95 ms per step instead of")
        assert "4.052\u00d7" in median and "Assumes the rank's extra time" in median
        assert "not estimated; the trace shows no link" in tab.text("[data-what-if=collectives_at_link_peak]")
        assert "not in the trace (a CPU run)" in tab.text("[data-testid=rank-link]")
        _audit(tab, "ranks of slow_compute")
        _shot(tab, "slow_compute")
        if (width, scheme) == (1280, "light"):  # docs/gpu_advisor_tab_ranks.png, with the other docs screenshots
            tab.frame.eval_on_selector("#ranks", "e => e.scrollIntoView()")
            tab.screenshot("gpu_advisor_tab_ranks", full=False)
            if os.environ.get("TB_GPU_ADVISOR_WRITE_DOCS_SCREENSHOTS"):
                shutil.copy(ARTIFACTS / "gpu_advisor_tab_ranks.png", DOCS / "gpu_advisor_tab_ranks.png")
        # two A100 ranks (one real rank, its copy 2.5 ms later): the NCCL collectives and their bus bandwidth
        assert tab.show("a100_2rank", "rank1") == "ready"
        tab.frame.wait_for_selector(READY)
        assert tab.text("#ranks .ranks-body > p").startswith("2 ranks, nccl, NVIDIA A100")
        rows = tab.frame.eval_on_selector_all(
            "[data-testid=rank-collectives] tbody tr", "rs => rs.map(r => [...r.cells].map(c => c.textContent))"
        )
        assert rows and all(row[2] == "2" for row in rows), rows
        assert any(row[6].endswith("GB/s") for row in rows), rows
        assert tab.text("[data-testid=rank-link]").startswith("Link: ")
        _audit(tab, "ranks of a100_2rank")
        _shot(tab, "a100_2rank")
        # a JAX/TensorFlow session, one XPlane per host: the hosts are the ranks
        assert tab.show("jax_hosts/2026_01_01_00_00_00", "worker1") == "ready"
        tab.frame.wait_for_selector(READY)
        assert tab.text("[data-testid=rank-slowest]").startswith("Slowest host: worker2, last to arrive in 6 of 6")
        assert tab.text("[data-testid=rank-link]").startswith("Link: not in the traces: the hosts name no rank")
        _audit(tab, "ranks of XPlane hosts")
        # several hosts, no rank of one job: the card says why it has nothing to join
        assert tab.show("two_workers", "worker0") == "ready"
        tab.frame.wait_for_selector("[data-testid=ranks-slot][data-state=empty]")
        assert "names its rank in a distributed job" in tab.text("#ranks .empty")
        _audit(tab, "two workers that are not ranks")
        # one host: no card at all
        assert tab.show("one_host") == "ready"
        assert tab.frame.query_selector("#ranks") is None
        assert tab.errors == [] and tab.dialogs == [] and tab.failed == []
    finally:
        tab.close()


def test_128_ranks(browser, board):  # noqa: F811
    """A 128-rank run (three slow copies among them): every rank in the heat maps, the slowest outlined and
    listed in the table though it is not among the first 32, the page no wider than the screen."""
    tab = Tab(browser, board.url, color_scheme="dark", width=1280)
    tab.scheme = "dark"
    try:
        assert tab.show("ranks128", "rank0") == "ready"
        tab.frame.wait_for_selector(READY, timeout=300_000)
        assert _cells(tab, "rank-step-time") == 128 * 10 and _cells(tab, "rank-step-cause") == 128 * 10
        assert tab.frame.eval_on_selector_all("svg .rank-slowest-row", "rs => rs.length") == 2
        assert tab.text("[data-testid=rank-slowest]").startswith("Slowest rank: 37 (vm: rank37)")
        assert tab.text("[data-testid=rank-as-late]").startswith("Ranks 90, 101 arrive as late")
        listed = tab.frame.eval_on_selector_all(
            "[data-testid=rank-table] tbody tr td:first-child", "ts => ts.map(t => t.textContent)"
        )
        assert listed == [str(r) for r in range(32)] + ["37", "90", "101"]
        assert "if ranks 37, 90, 101 matched the median rank" in tab.text("[data-what-if=rank_at_median]")
        _audit(tab, "128 ranks")
        _shot(tab, "ranks128")
        assert tab.errors == [] and tab.failed == []
    finally:
        tab.close()
