"""`report LOGDIR --all -o DIR`: an index of every run (sortable, filterable in a real browser) and one
self-contained page per run; a run that cannot be analyzed is a row with its error."""

import io
import os
import shutil

import pytest

from tb_gpu_advisor import cli
from tb_gpu_advisor.testing.pairs import write_input_pair


@pytest.fixture
def logdir(tmp_path):
    """Series `train`: input-bound, then prefetch-fixed a day later; `broken`: a corrupt file."""
    root = tmp_path / "logs"
    write_input_pair(str(root), fixed=False, run="train")
    fixed = write_input_pair(str(tmp_path / "other"), fixed=True, seed=1, run="train")
    target = root / "train" / "plugins" / "profile" / "2026_01_02_00_00_00"
    target.mkdir(parents=True)
    shutil.copy(fixed, target / "localhost.xplane.pb")
    bad = root / "broken" / "plugins" / "profile" / "2026_01_03_00_00_00"
    bad.mkdir(parents=True)
    (bad / "h.xplane.pb").write_bytes(b"not a profile")
    return root


def _site(logdir, out):
    err = io.StringIO()
    code = cli.main(["report", str(logdir), "--all", "-o", str(out)], out=io.StringIO(), err=err)
    return code, err.getvalue()


def test_the_site_has_an_index_and_a_page_per_run(logdir, tmp_path):
    code, err = _site(logdir, tmp_path / "site")
    assert code == 0, err
    assert "[3/3]" in err and err.count("error: ") == 1 and "h.xplane.pb" in err
    pages = sorted(os.listdir(tmp_path / "site" / "runs"))
    assert pages == [
        "0000_broken_2026_01_03_00_00_00.html",
        "0001_train_2026_01_02_00_00_00.html",
        "0002_train_2026_01_01_00_00_00.html",
    ]
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert 'href="runs/0001_train_2026_01_02_00_00_00.html"' in index
    assert "Input-bound" in index and "not a valid XSpace" in index
    assert "−" in index and "% step" in index  # the fixed run against the input-bound one of its series
    page = (tmp_path / "site" / "runs" / pages[2]).read_text(encoding="utf-8")
    assert "<script" not in page and "Input-bound" in page


def test_each_page_links_back_to_the_index_and_prints_no_local_path(logdir, tmp_path):
    code, err = _site(logdir, tmp_path / "site")
    assert code == 0, err
    for name in os.listdir(tmp_path / "site" / "runs"):
        page = (tmp_path / "site" / "runs" / name).read_text(encoding="utf-8")
        assert '<a href="../index.html">' in page and "All runs" in page
        assert str(tmp_path) not in page
    broken = (tmp_path / "site" / "runs" / "0000_broken_2026_01_03_00_00_00.html").read_text(encoding="utf-8")
    assert "Error: broken/plugins/profile/2026_01_03_00_00_00/h.xplane.pb: not a valid XSpace" in broken
    assert str(tmp_path) not in (tmp_path / "site" / "index.html").read_text(encoding="utf-8")


def test_a_path_outside_the_logdir_shows_only_its_file_name():
    from tb_gpu_advisor.report.site import shown_path

    assert shown_path("/data/logs/run/h.xplane.pb", "/data/logs") == "run/h.xplane.pb"
    assert shown_path("/elsewhere/h.xplane.pb", "/data/logs") == "h.xplane.pb"
    assert shown_path("s3://bucket/logs/run/h.xplane.pb", "s3://bucket/logs/") == "run/h.xplane.pb"
    assert shown_path("/data/logs-old/h.xplane.pb", "/data/logs") == "h.xplane.pb"


def test_all_needs_an_output_directory(logdir):
    err = io.StringIO()
    assert cli.main(["report", str(logdir), "--all"], out=io.StringIO(), err=err) == 2
    assert err.getvalue() == "error: --all writes a directory of pages: name it with -o DIR\n"


def test_the_index_sorts_and_filters_in_a_browser(logdir, tmp_path):
    from tests.plugin.test_plugin_browser import CHROMIUM, CHROMIUM_ARGS, sync_api  # skips without chromium

    assert _site(logdir, tmp_path / "site")[0] == 0
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            errors = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto((tmp_path / "site" / "index.html").as_uri())
            runs = (
                "() => [...document.querySelectorAll('tbody tr')].filter(r => !r.hidden).map(r => r.cells[0].innerText)"
            )
            page.click("th:has-text('Step time')")  # numeric columns sort descending first
            assert page.evaluate(runs) == [
                "train/2026_01_01_00_00_00",
                "train/2026_01_02_00_00_00",
                "broken/2026_01_03_00_00_00",
            ]
            page.fill("input[type=search]", "input-bound")
            assert page.evaluate(runs) == ["train/2026_01_01_00_00_00"]
            page.fill("input[type=search]", "")
            page.click("a:has-text('train/2026_01_02_00_00_00')")
            page.wait_for_selector("h1:has-text('train/2026_01_02_00_00_00')")
            assert errors == []
        finally:
            browser.close()
