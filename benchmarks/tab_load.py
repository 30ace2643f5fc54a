"""First paint of the GPU Advisor tab in a real TensorBoard and chromium, at emulated round-trip latencies.

    python benchmarks/tab_load.py [LOGDIR] [--latency 0 20 50] [--loads 6]

Per latency: the median over loads (the first load warms the server and is left out) of the number of
script, stylesheet and font requests of the tab's iframe, when the last script and stylesheet arrived and the
iframe's first contentful paint, in ms from the iframe's navigation start. The browser cache is off and
Chrome's network emulation adds the latency to every request. Figures in docs/performance.md ("The tab's
first paint").
"""

import argparse
import json
import shutil
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.plugin.tb_process import TensorBoardProcess, tensorboard_command  # noqa: E402

MEASURE = """() => {
  const mine = performance.getEntriesByType('resource').filter((e) => e.name.includes('/data/plugin/gpu_advisor/'));
  const js = mine.filter((e) => e.name.endsWith('.js'));
  const css = mine.filter((e) => e.name.endsWith('.css'));
  const fcp = performance.getEntriesByName('first-contentful-paint')[0];
  return {scripts: js.length, stylesheets: css.length,
    fonts: performance.getEntriesByType('resource').filter((e) => e.name.includes('/font-roboto/')).length,
    scripts_done_ms: Math.max(...js.map((e) => e.responseEnd)),
    stylesheets_done_ms: css.length ? Math.max(...css.map((e) => e.responseEnd)) : 0,
    first_paint_ms: fcp ? fcp.startTime : 0};
}"""


def measure(url, browser, latency_ms, loads):
    samples = []
    for index in range(loads):
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        page = context.new_page()
        cdp = context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
        cdp.send(
            "Network.emulateNetworkConditions",
            {"offline": False, "latency": latency_ms, "downloadThroughput": -1, "uploadThroughput": -1},
        )
        page.goto(url + "#gpu_advisor")
        frame = page.wait_for_selector('iframe[src*="name=gpu_advisor"]', timeout=120_000).content_frame()
        frame.wait_for_selector(".toolbar .brand", timeout=120_000)
        frame.wait_for_timeout(300)
        if index:
            samples.append(frame.evaluate(MEASURE))
        context.close()
    return {key: round(statistics.median(s[key] for s in samples), 1) for key in samples[0]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logdir", nargs="?", default=str(REPO / "demo_logs"))
    parser.add_argument("--latency", type=int, nargs="+", default=[0, 20, 50])
    parser.add_argument("--loads", type=int, default=6)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    with TensorBoardProcess(tensorboard_command(args.logdir)) as board, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        for latency in args.latency:
            print(json.dumps({"latency_ms": latency, **measure(board.url, browser, latency, args.loads)}), flush=True)
        browser.close()


if __name__ == "__main__":
    main()
