"""What a user sees off the happy path is true at a glance (issue 31), in a real TensorBoard and Debian's chromium
at 1280 px: a PyTorch run names its trace file instead of a dead Profile link, a linked finding lands below the
sticky toolbar, a missing roofline says why, the page never scrolls sideways (light and dark)."""

import shutil

import pytest

from tb_gpu_advisor.demo import write_demo_logdir
from tests.readers.kineto.real import real_kineto
from tests.plugin.tb_process import TensorBoardProcess, tensorboard_command
from tests.plugin.test_plugin_browser import Tab, browser  # noqa: F401 (fixture; skips without chromium)

OVERFLOW = "document.documentElement.scrollWidth - document.documentElement.clientWidth"


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """Two TensorFlow demo runs and a two-rank PyTorch run."""
    logdir = tmp_path_factory.mktemp("truth_logdir")
    runs = {run["name"]: run["run"] for run in write_demo_logdir(str(logdir), names=["launch_bound", "healthy"])}
    ddp = logdir / "ddp"
    ddp.mkdir()
    shutil.copy(real_kineto("a100_2rank_nccl"), ddp / "rank0.1716398122000.pt.trace.json.gz")
    shutil.copy(real_kineto("v100_2rank_test"), ddp / "rank1.1716398122007.pt.trace.json.gz")
    with TensorBoardProcess(tensorboard_command(logdir)) as process:
        yield process, runs


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_pytorch_run_names_its_trace_file_instead_of_a_dead_profile_link(browser, mixed, scheme):  # noqa: F811
    board, runs = mixed
    tab = Tab(browser, board.url, color_scheme=scheme)
    try:
        assert tab.show("ddp", "rank1") == "ready"
        tab.frame.wait_for_selector("[data-testid=profile-note]:not([hidden])")
        note = tab.text("[data-testid=profile-note]")
        assert "ddp/rank1.1716398122007.pt.trace.json.gz" in note and "Perfetto" in note
        assert tab.frame.is_hidden("a.profile-link")
        tab.frame.wait_for_selector("#roofline")  # drawn (ops recorded with shapes) or saying why not: never absent
        assert tab.frame.evaluate(OVERFLOW) <= 0, "the page scrolls sideways at 1280 px"
        tab.screenshot(f"truth_pytorch_{scheme}", full=False)
        assert tab.show(runs["launch_bound"]) == "ready"  # an XPlane run: the link is back, the note gone
        assert tab.frame.is_visible("a.profile-link") and tab.frame.is_hidden("[data-testid=profile-note]")
        assert tab.errors == []
    finally:
        tab.close()


def test_a_missing_roofline_says_why_on_a_tensorflow_run(browser, mixed):  # noqa: F811
    board, runs = mixed
    tab = Tab(browser, board.url)
    try:
        assert tab.show(runs["healthy"]) == "ready"
        text = tab.text("[data-testid=roofline-missing]")
        assert text.startswith("No roofline: no kernel of this profile has known FLOPs and bytes")
        # XLA is on in this run: the empty state names the capture that carries its programs, not jit_compile.
        assert "XLA is on in this run" in text and "tf.profiler.experimental.start" in text
        assert "jit_compile=True" not in text
        tab.frame.eval_on_selector("#roofline", "e => e.scrollIntoView()")
        tab.screenshot("truth_roofline_missing", full=False)
    finally:
        tab.close()


def test_a_linked_finding_lands_below_the_sticky_toolbar(browser, mixed):  # noqa: F811
    board, runs = mixed
    first = Tab(browser, board.url)
    try:
        assert first.show(runs["launch_bound"]) == "ready"
        ids = first.frame.eval_on_selector_all("details[data-finding-id]", "ds => ds.map(d => d.dataset.findingId)")
    finally:
        first.close()
    assert len(ids) >= 4
    run, host = runs["launch_bound"], "a100-train-03"
    address = (
        f"{board.url}#gpu_advisor&p.gpu_advisor.view=run&p.gpu_advisor.run={run}"
        f"&p.gpu_advisor.host={host}&p.gpu_advisor.finding={ids[-1]}"
    )
    tab = Tab(browser, board.url, address=address)
    try:
        tab.frame.wait_for_selector(f"details[data-finding-id='{ids[-1]}'][open]")
        tab.page.wait_for_timeout(300)
        toolbar = tab.frame.eval_on_selector(".toolbar", "t => t.getBoundingClientRect().bottom")
        top = tab.frame.eval_on_selector(f"details[data-finding-id='{ids[-1]}']", "d => d.getBoundingClientRect().top")
        scrolled = tab.frame.evaluate("document.scrollingElement.scrollTop")
        assert scrolled > 0 and top >= toolbar, (top, toolbar)
        tab.screenshot("truth_linked_finding", full=False)
    finally:
        tab.close()


def test_an_empty_logdir_says_what_to_capture_and_links_nowhere(browser, tmp_path):  # noqa: F811
    from tests.plugin.test_plugin_browser import TIMEOUT_MS

    with TensorBoardProcess(tensorboard_command(tmp_path)) as board:
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        try:
            page = context.new_page()
            page.set_default_timeout(TIMEOUT_MS)
            page.goto(board.url + "#gpu_advisor")
            frame = page.wait_for_selector('iframe[src*="name=gpu_advisor"]').content_frame()
            frame.wait_for_selector("main.content[data-state=empty]")
            message = frame.inner_text("[data-testid=info-message]")
            assert "No profiles in this logdir" in message and ".pt.trace.json" in message and ".xplane.pb" in message
            assert frame.is_hidden("a.profile-link") and frame.is_hidden("[data-testid=profile-note]")
            assert frame.evaluate(OVERFLOW) <= 0
        finally:
            context.close()
