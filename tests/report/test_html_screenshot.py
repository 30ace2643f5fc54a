"""The HTML report in a real browser: headless Chromium, no network, screenshot, chart colours on screen."""

import os
import shutil
import subprocess

import pytest

from tb_gpu_advisor.files.discovery import resolve_target
from tb_gpu_advisor.report.charts import BUSY_COLOR, CATEGORY_COLORS
from tb_gpu_advisor.report.html import render_html
from tb_gpu_advisor.pipeline import run_report
from tb_gpu_advisor.testing.pairs import write_launch_pair

Image = pytest.importorskip("PIL.Image", reason="Pillow reads the screenshot (pip install -e '.[test]')")
BROWSER = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
WIDTH, HEIGHT = 1280, 2000


def _rgb(color):
    return tuple(int(color[i : i + 2], 16) for i in (1, 3, 5))


@pytest.mark.skipif(BROWSER is None, reason="no chromium (scripts/test.sh installs it with apt-get)")
def test_report_renders_its_charts_offline(tmp_path):
    report = run_report(*resolve_target(write_launch_pair(str(tmp_path / "logdir"), fixed=False)))
    page = tmp_path / "report.html"
    page.write_text(render_html(report), encoding="utf-8")
    shot = tmp_path / "out.png"
    command = [
        BROWSER,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        f"--user-data-dir={tmp_path / 'profile'}",
        f"--screenshot={shot}",
        f"--window-size={WIDTH},{HEIGHT}",
        page.as_uri(),
    ]
    env = dict(os.environ, HOME=str(tmp_path))
    result = subprocess.run(command, capture_output=True, text=True, timeout=180, env=env, cwd=tmp_path)
    assert shot.exists(), f"no screenshot; chromium said: {result.stderr[-2000:]}"
    assert shot.stat().st_size > 30_000
    with Image.open(shot) as image:
        assert image.size == (WIDTH, HEIGHT)
        counts = {color: count for count, color in image.convert("RGB").getcolors(WIDTH * HEIGHT)}
    # Solid chart fills: the launch share and step bars (blue), compute (its kernels name no type: the
    # other/unknown green), the kernel bars.
    for color in (CATEGORY_COLORS["launch"], CATEGORY_COLORS["compute_unknown"], BUSY_COLOR):
        assert counts.get(_rgb(color), 0) > 2_000, f"{color} barely on screen: {counts.get(_rgb(color), 0)} px"
    assert counts.get((255, 255, 255), 0) < 0.9 * WIDTH * HEIGHT
