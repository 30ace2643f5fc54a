"""Every view of the tab tells the truth at a glance (issue 31, round 2), in a real TensorBoard and Debian's
chromium at 1280 and 1440 px, light and dark: every run of the demo logdir (22), a folder of PyTorch runs (the H200
captures and the Kineto traces), AMD runs (MI250 PyTorch, MI300X JAX), an empty run, a bucket and an empty logdir.
No sideways scrolling, every card titled and never blank, every chart's axes titled and no label cut off, no
legend entry or change row at 0%, one duration unit per table and per chart, each busy figure defined on hover,
no all-clear verdict beside a speedup, the occupancy the trace records, a PyTorch run's findings in PyTorch's
words and links, the GPU vendor's links only, and weak verdicts marked."""

import os
import re
import shutil

import pytest

from tb_gpu_advisor.demo import write_demo_logdir
from tests.data import real_trace
from tests.readers.kineto.real import real_kineto
from tests.plugin.tb_process import TensorBoardProcess, serve_command, tensorboard_command
from tests.plugin.test_plugin_browser import ARTIFACTS, REPO, Tab, browser  # noqa: F401 (fixture; skips without chromium)

DOCS = ARTIFACTS.parents[1] / "docs"
VIEWS = [(1280, "light"), (1280, "dark"), (1440, "light"), (1440, "dark")]
AMD_JAX, EMPTY = "amd_jax/2026_01_09_00_00_00", "empty/2026_01_10_00_00_00"
H200_TORCH = (REPO / "tests/data/real/h200/torch", REPO / "tests/data/real/h200_heldout/torch")
KINETO_RUNS = ("a100_8rank_control", "a100_alexnet_sync")
# PyTorch captures of one program before and after its fix (tests/data/real/h200*/torch): compared in the tab.
TORCH_PAIRS = {
    "torch/transfer_pageable": "torch/transfer_pinned",
    "torch/precision_fp32": "torch/precision_bf16",
    "torch/attention_unfused": "torch/attention_sdpa",
    "torch/allocator_churn": "torch/allocator_cached",
    "torch/optimizer_per_tensor": "torch/optimizer_fused",
    "torch/input_inline_loader": "torch/input_worker_loader",
    "torch/launch_eager": "torch/launch_compiled",
}

# Everything a view must not show, found in the iframe's document: a list of sentences, empty when all is well.
AUDIT = r"""() => {
  const problems = [];
  const root = document.documentElement;
  if (root.scrollWidth - root.clientWidth > 0) problems.push('the page scrolls sideways');
  const content = document.querySelector('main.content');
  if (!content || !content.textContent.trim()) problems.push('the content is blank');
  for (const card of content.querySelectorAll('section.card')) {
    const title = card.querySelector('h2')?.textContent.trim();
    if (!title) problems.push('a card without a title');
    const body = card.querySelector('.card-body');
    if (body && !body.textContent.trim() && !body.querySelector('svg, table')) problems.push(`card "${title}" is blank`);
  }
  for (const item of content.querySelectorAll('.legend li')) {
    if (/(^|[^\d.])0(\.0+)?\u00a0?%$/.test(item.textContent.trim())) problems.push(`legend at 0%: ${item.textContent}`);
  }
  for (const svg of content.querySelectorAll('svg.chart')) {
    const name = svg.getAttribute('aria-label');
    if (!svg.querySelector('.axis-title')) problems.push(`chart without axis titles: ${name}`);
    const box = svg.getBoundingClientRect();
    if (!box.width) continue;
    for (const text of svg.querySelectorAll('text')) {
      const r = text.getBoundingClientRect();
      if (r.width && (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1)) {
        problems.push(`label cut off in ${name}: ${text.textContent}`);
      }
    }
  }
  const UNIT = /^[-\u2212+]?[\d,.]+\u00a0(ns|\u00b5s|ms|s)$/;
  for (const table of content.querySelectorAll('table')) {
    const units = new Set();
    for (const cell of table.querySelectorAll('tbody td')) {
      const match = cell.textContent.trim().match(UNIT);
      if (match) units.add(match[1]);
    }
    if (units.size > 1) problems.push(`durations in ${[...units].join(' and ')} in one table (${table.dataset.testid || table.className})`);
  }
  const CHART_UNIT = /^[-\u2212+\u00b1]?[\d,.]+[\u00a0 ](ns|\u00b5s|ms|s)$/;
  for (const svg of content.querySelectorAll('svg.chart')) {
    const units = new Set();
    for (const text of svg.querySelectorAll('text')) {
      const match = text.textContent.trim().match(CHART_UNIT);
      if (match) units.add(match[1]);
    }
    if (units.size > 1) problems.push(`durations in ${[...units].join(' and ')} in one chart (${svg.getAttribute('aria-label')?.slice(0, 40)})`);
  }
  for (const share of content.querySelectorAll('.row-share')) {
    if (/^0%\s*\u2192\s*0%$/.test(share.textContent.trim())) problems.push(`a change row at 0% \u2192 0%: ${share.parentNode.dataset.category}`);
  }
  const verdict = content.querySelector('[data-testid=verdict]');
  if (verdict?.querySelector('.badge.bottleneck-none') && /faster/.test(verdict.textContent)) {
    problems.push('an all-clear badge beside a speedup');
  }
  for (const tile of content.querySelectorAll('.tile')) {
    const label = tile.querySelector('.tile-label')?.textContent || '';
    if (/busy/i.test(label) && !tile.title) problems.push(`a busy figure without its definition: ${label}`);
  }
  for (const hint of content.querySelectorAll('.hint')) {
    if (/busy/i.test(hint.textContent) && !hint.title) problems.push(`a busy figure without its definition: ${hint.textContent}`);
  }
  for (const prose of content.querySelectorAll('.fix-prose')) {
    if (prose.scrollWidth > prose.clientWidth + 1) problems.push(`a fix text that does not wrap: ${prose.textContent.slice(0, 60)}`);
  }
  for (const pre of content.querySelectorAll('.fix pre')) {
    const style = getComputedStyle(pre);
    const card = pre.closest('section.card').getBoundingClientRect();
    if (style.whiteSpace !== 'pre' || style.overflowX !== 'auto' || pre.scrollHeight > pre.clientHeight + 1 ||
      pre.getBoundingClientRect().right > card.right + 1) problems.push(`a fix code block that wraps or is cut: ${pre.textContent.slice(0, 60)}`);
  }
  if ((content.querySelector('[data-testid=framework]')?.textContent || '').endsWith('pytorch')) {
    const OTHER = /TensorFlow|Keras|\btf\.|\bJAX\b|\bjax\.|\bXLA\b|jit_compile|Trace Viewer/i;
    for (const text of content.querySelectorAll('#findings :is(.finding-title, .fix-summary, [data-testid=fix])')) {
      const match = text.textContent.match(OTHER);
      if (match) problems.push(`a PyTorch finding says "${match[0]}": ${text.textContent.slice(0, 60)}`);
    }
    for (const link of content.querySelectorAll('#findings a[href]')) {
      if (/tensorflow\.org|keras\.io|docs\.jax\.dev/.test(link.href)) problems.push(`a PyTorch finding links ${link.href}`);
    }
  }
  return problems;
}"""
LINKS = "() => [...document.querySelectorAll('#findings a[href^=http]')].map((a) => a.href)"


@pytest.fixture(scope="module")
def views(tmp_path_factory):
    """The whole demo logdir (22 runs) beside a two-rank PyTorch run, PyTorch on AMD, JAX on AMD, the H200
    PyTorch captures, two more Kineto traces and an empty run."""
    logdir = tmp_path_factory.mktemp("views_logdir")
    runs = {run["name"]: run["run"] for run in write_demo_logdir(str(logdir))}
    ddp = logdir / "ddp"
    ddp.mkdir()
    shutil.copy(real_kineto("a100_2rank_nccl"), ddp / "rank0.1716398122000.pt.trace.json.gz")
    shutil.copy(real_kineto("v100_2rank_test"), ddp / "rank1.1716398122007.pt.trace.json.gz")
    (logdir / "amd_torch").mkdir()
    shutil.copy(real_kineto("mi250_minitoy_train"), logdir / "amd_torch" / "worker0.1716398122000.pt.trace.json.gz")
    for name in KINETO_RUNS:
        (logdir / name).mkdir()
        shutil.copy(real_kineto(name), logdir / name / "worker0.1716398122000.pt.trace.json.gz")
    for folder in H200_TORCH:
        for run in folder.iterdir():
            if run.is_dir():
                shutil.copytree(run, logdir / "torch" / run.name)
    for run, host, data in (
        (AMD_JAX, "mi300x", real_trace("amd_mi300x_jax08_gemm.xplane.pb").read_bytes()),
        (EMPTY, "host", b""),
    ):
        name, stamp = run.split("/")
        directory = logdir / name / "plugins" / "profile" / stamp
        directory.mkdir(parents=True)
        (directory / f"{host}.xplane.pb").write_bytes(data)
    with TensorBoardProcess(tensorboard_command(logdir)) as process:
        yield process, runs


def _audit(tab, what):
    tab.frame.wait_for_timeout(300)  # the timeline and kernel pages arrive after the report
    problems = tab.frame.evaluate(AUDIT)
    assert problems == [], f"{what} at {tab.width} px: {problems}"


PROBE = r"""() => {
  const box = document.createElement('div');
  box.id = 'audit-probe';
  const legend = document.createElement('ul');
  legend.className = 'legend';
  legend.innerHTML = '<li>Idle 0%</li>';
  const table = document.createElement('table');
  table.innerHTML = '<tbody><tr><td>1\u00a0ms</td><td>20\u00a0µs</td></tr></tbody>';
  const svg = document.querySelector('main.content svg.chart').cloneNode(true);
  svg.querySelector('.axis-title').setAttribute('x', '-400');
  for (const [text, cls] of [['+1\u00a0ms', 'row-value'], ['\u221225\u00a0µs', 'row-value'], ['0% \u2192 0%', 'row-share']]) {
    const label = document.createElementNS('http://www.w3.org/2000/svg', 'text');
    label.setAttribute('class', cls);
    label.setAttribute('x', '100');
    label.setAttribute('y', '20');
    label.textContent = text;
    svg.append(label);
  }
  const tile = document.createElement('div');
  tile.className = 'tile';
  tile.innerHTML = '<div class="tile-label">GPU busy</div>';
  box.append(legend, table, svg, tile);
  document.querySelector('main.content').append(box);
}"""


def _audit_can_fail(tab):
    """The audit finds what it looks for: a 0% legend entry, two units in one table and in one chart, a label cut
    off, a change row at 0% on both sides, a busy figure with no definition."""
    tab.frame.evaluate(PROBE)
    found = " | ".join(tab.frame.evaluate(AUDIT))
    tab.frame.evaluate("() => document.getElementById('audit-probe').remove()")
    for problem in (
        "legend at 0%: Idle 0%",
        "durations in ms and \u00b5s in one table",
        "in one chart",
        "label cut off",
        "a change row at 0% \u2192 0%",
        "a busy figure without its definition: GPU busy",
    ):
        assert problem in found, (problem, found)


def _clear(tab):
    """Back from a comparison to the single-run view (the baseline would stay picked for the next run)."""
    tab.frame.click("[data-testid=clear-comparison]")
    tab.frame.wait_for_function(
        "() => { const c = document.querySelector('main.content'); "
        "return c.dataset.view === 'report' && c.dataset.state !== 'loading'; }"
    )


def _busy_titles(tab):
    return tab.frame.eval_on_selector_all("#summary .tile[title]", "ts => ts.map((t) => t.title)")


@pytest.mark.parametrize("width, scheme", VIEWS)
def test_every_view_of_every_kind_of_run(browser, views, width, scheme):  # noqa: F811
    board, runs = views
    tab = Tab(browser, board.url, color_scheme=scheme, width=width)
    try:
        # TensorFlow: idle time per step charted with titled axes; busy defined on hover; TensorFlow's pages only
        assert tab.show(runs["input_bound"]) == "ready"
        assert tab.frame.query_selector("[data-testid=breakdown-definition]") is None  # one GPU: one figure
        tab.frame.wait_for_selector("[data-testid=idle-step-chart] svg .y-title")
        tab.frame.wait_for_selector("#steps svg.chart .y-title")  # the step chart: step_bars.js's geometry too
        assert any("averaged over the GPUs" in title for title in _busy_titles(tab))
        assert not [url for url in tab.frame.evaluate(LINKS) if "pytorch.org" in url or "docs.jax.dev" in url]
        _audit(tab, "TensorFlow input_bound")
        _audit_can_fail(tab)
        if (width, scheme) == (1280, "light"):
            tab.frame.eval_on_selector("#idle", "e => e.scrollIntoView()")
            tab.screenshot("views_idle", full=False)
        # JAX: no TensorFlow or PyTorch pages
        assert tab.show(runs["jax_inline_loader"]) == "ready"
        links = tab.frame.evaluate(LINKS)
        assert links and not [url for url in links if "tensorflow.org" in url or "pytorch.org" in url]
        _audit(tab, "JAX jax_inline_loader")
        # the demo's JAX run with its HLO: the roofline drawn
        assert tab.show(runs["jax_decoder_roofline"]) == "ready"
        tab.frame.wait_for_selector("svg.roofline circle.roof-dot")
        _audit(tab, "JAX jax_decoder_roofline")
        if (width, scheme) == (1280, "light"):
            tab.frame.eval_on_selector("#roofline", "e => e.scrollIntoView()")
            tab.screenshot("views_roofline", full=False)
        # several GPUs: one chart per step for the GPU picked, among all
        assert tab.show(runs["multi_gpu_straggler"]) == "ready"
        assert tab.frame.eval_on_selector_all("#idle select option", "os => os.length") == 4
        # the bar counts an instant once (any GPU), the busy tiles are means over the GPUs: the bar says so
        definition = tab.frame.eval_on_selector("[data-testid=breakdown-definition]", "p => p.title")
        assert "any GPU computes" in definition and "means over the GPUs" in definition
        _audit(tab, "TensorFlow multi_gpu_straggler")
        # PyTorch, two ranks: the profiler's estimate of achieved occupancy, PyTorch's pages, a marked verdict
        for host in ("rank0", "rank1"):
            assert tab.show("ddp", host) == "ready"
            tab.frame.wait_for_selector("[data-testid=kernel-table] tbody tr")
            header = tab.frame.inner_text("[data-testid=kernel-table] th[title^='Estimated achieved']")
            assert header.startswith("Est. occupancy")
            cells = tab.frame.eval_on_selector_all(
                "[data-testid=kernel-table] tbody .occupancy", "cs => cs.map((c) => c.textContent)"
            )
            assert cells, "no occupancy shown on a PyTorch run whose kernels carry the estimate"
            links = tab.frame.evaluate(LINKS)
            assert not [url for url in links if "tensorflow.org" in url or "docs.jax.dev" in url], links
            assert tab.text("[data-testid=verdict-caution]") == "likely: medium confidence"
            _audit(tab, f"PyTorch ddp {host}")
        # rank1 (v100_2rank_test): no cause costs 10% alone, yet the findings together claim a gain: the badge is
        # never the all-clear one, its hover names that gain, the same as the sentence where it gives one
        badge = tab.frame.eval_on_selector("[data-testid=bottleneck]", "b => [b.textContent, b.className, b.title]")
        assert badge[0] == "No bottleneck" and "bottleneck-none-gains" in badge[1], badge
        claimed = re.compile(r"(up to|about|over) [\d.]+\u00d7 faster")
        assert claimed.search(badge[2]), badge
        said = claimed.search(tab.text("[data-testid=verdict] .verdict-text"))
        assert said is None or said.group(0) in badge[2], (said, badge)
        # PyTorch on AMD: ROCm's pages, never NVIDIA's; one complete step: tentative, boxed in dashes
        assert tab.show("amd_torch") == "ready"
        links = tab.frame.evaluate(LINKS)
        assert links and not [url for url in links if "nvidia.com" in url or "tensorflow.org" in url], links
        assert tab.text("[data-testid=verdict-caution]") == "tentative: low confidence"
        assert (
            tab.frame.eval_on_selector("[data-testid=verdict]", "v => getComputedStyle(v).borderTopStyle") == "dashed"
        )
        _audit(tab, "PyTorch on AMD")
        # JAX on AMD: the roofline drawn from the HLO, titled axes
        assert tab.show(AMD_JAX) == "ready"
        tab.frame.wait_for_selector("svg.roofline .axis-title")
        assert not [url for url in tab.frame.evaluate(LINKS) if "nvidia.com" in url]
        _audit(tab, "JAX on AMD")
        # an empty run: its own message, never a blank page
        state = tab.show(EMPTY)
        assert state in ("ready", "error")
        assert tab.frame.inner_text("main.content").strip()
        _audit(tab, "an empty run")
        # a PyTorch comparison: where the time went in one unit, no row at 0% on both sides, the step busy named
        assert tab.show("torch/transfer_pageable") == "ready"
        assert tab.compare("torch/transfer_pinned") == "ready"
        values = tab.frame.eval_on_selector_all("#compare-breakdown .row-value", "ts => ts.map((t) => t.textContent)")
        assert values and {value.split("\xa0")[-1] for value in values} == {"ms"}, values
        categories = tab.frame.eval_on_selector_all(
            "#compare-breakdown .delta-row", "rs => rs.map((r) => r.dataset.category)"
        )
        assert "h2d" in categories and "launch" not in categories  # kernel launch: 0% -> 0%
        step_busy = tab.frame.eval_on_selector("[data-testid=step-busy-change]", "p => [p.textContent, p.title]")
        assert (
            step_busy[0].startswith("GPU busy in a step (any GPU), mean over the steps:")
            and "at least one" in step_busy[1]
        )
        _audit(tab, "a PyTorch comparison")
        # a TensorFlow comparison and the overview
        assert tab.show(runs["input_bound"]) == "ready"
        assert tab.compare(runs["input_bound_fixed"]) == "ready"
        assert any(
            "averaged over the GPUs" in title
            for title in tab.frame.eval_on_selector_all("[title]", "ts => ts.map((t) => t.title)")
        )
        _audit(tab, "the comparison")
        tab.frame.click("[data-testid=overview-button]")
        tab.frame.wait_for_selector("#overview tbody tr")
        _audit(tab, "the overview")
        assert tab.errors == [] and tab.dialogs == []
    finally:
        tab.close()


@pytest.mark.parametrize("width, scheme", VIEWS)
def test_each_item_of_the_issue_in_every_view(browser, views, width, scheme):  # noqa: F811
    """Issue 31's items 1-3, 6 and 8 at each width and scheme (item 4 above, 5 in the bucket test, 7 in the
    audit): one quantity per comparison badge, a PyTorch run directory its own series, no dead Profile link, a
    missing roofline says why, a linked finding lands below the sticky toolbar."""
    board, runs = views
    tab = Tab(browser, board.url, color_scheme=scheme, width=width)
    try:
        # 1. different work per step: the badge is the per-example change the verdict leads with, and says so (the
        # fixed straggler run accumulates 2 micro-batches per step; the H200 transfer pair is the same work)
        assert tab.show(runs["multi_gpu_straggler"]) == "ready"
        assert tab.compare(runs["multi_gpu_straggler_fixed"]) == "ready"
        badge = tab.frame.eval_on_selector(
            "[data-testid=compare-verdict] .badge", "b => [b.textContent, b.dataset.basis]"
        )
        assert badge[0].endswith("slower per example") and badge[1] == "per_example", badge
        assert tab.text("[data-testid=compare-verdict] .verdict-text").startswith("Per example " + badge[0].split()[0])
        _clear(tab)
        # 3. a PyTorch trace: where to look instead of a dead Profile link
        assert tab.show("ddp", "rank1") == "ready"
        tab.frame.wait_for_selector("[data-testid=profile-note]:not([hidden])")
        assert "Perfetto" in tab.text("[data-testid=profile-note]") and tab.frame.is_hidden("a.profile-link")
        # 6. no FLOPs in the trace: the roofline card says why and what capture gives it
        assert tab.show(runs["healthy"]) == "ready"
        assert tab.text("[data-testid=roofline-missing]").startswith("No roofline: no kernel of this profile has")
        # 8. (below) a linked finding opens below the sticky toolbar: the ids of a run with several findings
        assert tab.show(runs["launch_bound"]) == "ready"
        ids = tab.frame.eval_on_selector_all("details[data-finding-id]", "ds => ds.map(d => d.dataset.findingId)")
        assert len(ids) >= 3
        # 2. the overview: each PyTorch run directory is its own series, never "changed" against another
        tab.frame.click("[data-testid=overview-button]")
        tab.frame.wait_for_function(
            "() => /all analyzed/.test(document.querySelector('[data-testid=overview-status]').textContent)"
        )
        changes = tab.frame.eval_on_selector_all(
            "[data-testid=overview-table] tbody tr",
            "rs => rs.map((r) => [r.cells[0].textContent, r.cells[r.cells.length - 1].textContent])",
        )
        torch = [(run, change) for run, change in changes if run.startswith("torch/")]
        assert len(torch) == 15 and all(change == "" for _, change in torch), torch
        _audit(tab, "the overview")
    finally:
        tab.close()
    run, host = runs["launch_bound"], "a100-train-03"
    address = (
        f"{board.url}#gpu_advisor&p.gpu_advisor.view=run&p.gpu_advisor.run={run}"
        f"&p.gpu_advisor.host={host}&p.gpu_advisor.finding={ids[-1]}"
    )
    linked = Tab(browser, board.url, color_scheme=scheme, width=width, address=address)
    try:
        linked.frame.wait_for_selector(f"details[data-finding-id='{ids[-1]}'][open]")
        linked.page.wait_for_timeout(300)
        toolbar = linked.frame.eval_on_selector(".toolbar", "t => t.getBoundingClientRect().bottom")
        top = linked.frame.eval_on_selector(
            f"details[data-finding-id='{ids[-1]}']", "d => d.getBoundingClientRect().top"
        )
        assert linked.frame.evaluate("document.scrollingElement.scrollTop") > 0 and top >= toolbar, (top, toolbar)
        assert linked.errors == []
    finally:
        linked.close()


# The fill of each bar of the comparison's breakdown chart and of each swatch of its legend.
FILLS = """() => [
  [...new Set([...document.querySelectorAll('#compare-breakdown .delta-bar')].map((b) => getComputedStyle(b).fill))],
  [...document.querySelectorAll('[data-testid=compare-breakdown-legend] .swatch')]
    .map((s) => getComputedStyle(s).backgroundColor),
]"""
UNITS_TITLES = "cs => cs.map((c) => [c.textContent, c.title])"
DOT_FILLS = "() => [...new Set([...document.querySelectorAll('svg.roofline circle.roof-dot')].map((c) => getComputedStyle(c).fill))]"
LEGEND_FILLS = "() => [...document.querySelectorAll('LEGEND .swatch')].map((s) => getComputedStyle(s).backgroundColor)"
SPEEDUP_CI = re.compile(r"95% CI ([\d.]+)\u00d7 to ([\d.]+)\u00d7")
PCT_CI = re.compile(r"\(([\u2212-][\d.]+)% to ([\u2212-][\d.]+)%\)")


def _pct(text):
    return float(text.replace("\u2212", "-"))


def test_what_the_screenshot_review_found_reads_true(browser, views):  # noqa: F811
    """The tab review's findings (issue 31, round 3) at 1280 px: where a per-example change comes from, one
    confidence interval per change, a legend that names the colors its chart draws, one tile per busy name, a
    no-bottleneck verdict that names a large category of the bar, the collectives table's total beside the bar's
    exposed share."""
    board, runs = views
    tab = Tab(browser, board.url)
    try:
        # the same program is the same work: both H200 transfer runs launch 78 kernels per step (their 1.21x was
        # the pinned capture's kernels past its 8 timed steps, 10 steps' worth against 8.5, counted as in them)
        assert tab.show("torch/transfer_pinned") == "ready"
        assert tab.compare("torch/transfer_pageable") == "ready"
        assert tab.frame.query_selector("[data-testid=per-example-tile]") is None
        _clear(tab)
        # per example: the per-step change and the measure of the work beside the per-example figure (the fixed
        # straggler run accumulates 2 micro-batches per step: each compute kernel launched twice as often)
        assert tab.show(runs["multi_gpu_straggler_fixed"]) == "ready"
        assert tab.compare(runs["multi_gpu_straggler"]) == "ready"
        tile = tab.frame.eval_on_selector("[data-testid=per-example-tile]", "t => [t.textContent, t.title]")
        assert "Change per example" in tile[0] and "per step 1.38\u00d7 faster" in tile[0], tile
        assert "2.00\u00d7 the work per step (by its kernel launches per step)" in tile[0], tile
        assert "median, over the compute kernels both runs launch" in tile[1], tile
        assert "per step, not per example" in tab.text("#compare-breakdown .card-subtitle")
        tab.screenshot("review_compare_per_example", full=False)
        # one interval: the prediction check's speedup CI is the headline change's CI as a ratio
        noise, measured = tab.text("[data-testid=noise-statement]"), tab.text("#compare-predictions .card-subtitle")
        assert PCT_CI.search(noise) and SPEEDUP_CI.search(measured), (noise, measured)
        low_pct, high_pct = map(_pct, PCT_CI.search(noise).groups())
        low_x, high_x = map(float, SPEEDUP_CI.search(measured).groups())
        assert low_x == pytest.approx(1 / (1 + high_pct / 100), abs=0.011), (low_x, high_pct)
        assert high_x == pytest.approx(1 / (1 + low_pct / 100), abs=0.011), (high_x, low_pct)
        # the legend names exactly the colors the bars are drawn in
        bars, swatches = tab.frame.evaluate(FILLS)
        assert bars and set(bars) <= set(swatches) and len(swatches) == 2, (bars, swatches)
        _clear(tab)
        # two ranks, rank 1: each busy tile its own name; the verdict names the 11.8% device-to-device copies
        assert tab.show("ddp", "rank1") == "ready"
        labels = tab.frame.eval_on_selector_all("#summary .tile-label", "ls => ls.map((l) => l.textContent)")
        busy = [label for label in labels if "busy" in label.lower()]
        assert busy == ["GPU compute busy", "GPU busy without collectives", "GPU busy"], labels
        verdict = tab.text("[data-testid=verdict] .verdict-text")
        assert "device\u2192device copy/memset 12% of the step" in verdict, verdict
        legend = tab.frame.eval_on_selector_all("#summary .legend li", "ls => ls.map((l) => l.textContent)")
        assert "Device\u2192device copy/memset 11.8%" in legend, legend
        # rank 0: the collectives table's whole-call time and the bar's exposed share, told apart
        assert tab.show("ddp", "rank0") == "ready"
        note = tab.text("[data-testid=collectives-exposed]")
        assert "in all (kernels)" in note and "the exposed part" in note, note
        # PyTorch on ROCm records no launch values: a dash that says so, never 0 registers or a 1x1x1 grid
        assert tab.show("amd_torch") == "ready"
        tab.frame.wait_for_selector("[data-testid=kernel-table] tbody tr")
        cells = tab.frame.eval_on_selector_all(
            "[data-testid=kernel-table] tbody tr",
            "rs => rs.map((r) => [7, 8, 9].map((i) => [r.cells[i].textContent, r.cells[i].querySelector('[title]')?.title]))",
        )
        assert cells and all(cell == ["\u2014", "not in the trace"] for row in cells for cell in row), cells[:2]
        # its two findings estimate 1.0x (one warm-up step): no "up to 1x faster" badge
        assert len(tab.frame.query_selector_all("[data-testid=finding]")) == 2
        assert tab.frame.query_selector_all("[data-testid=finding] .badge.speedup") == []
        # PyTorch's name of the GPU, not XPlane's device path
        labels = tab.frame.eval_on_selector_all(
            "#gpus [data-device] > .gpu-label, #idle .gpu-label", "ls => ls.map((l) => l.textContent)"
        )
        assert labels and all(label.startswith("cuda:2") for label in labels), labels
        tab.frame.eval_on_selector("#kernels", "e => e.scrollIntoView()")
        tab.screenshot("review_rocm_kernels", full=False)
        # copies without sizes have no bandwidth; a tiny one is "<0.01 GB/s", never "0 GB/s"
        bandwidths = tab.frame.eval_on_selector_all("[data-testid=transfers] tbody td:nth-of-type(4)", UNITS_TITLES)
        assert bandwidths == [["\u2014", "not in the trace: no copy sizes"]], bandwidths
        assert tab.show(runs["jax_decoder_roofline"]) == "ready"
        bandwidths = tab.frame.eval_on_selector_all("[data-testid=transfers] tbody td:nth-of-type(4)", UNITS_TITLES)
        assert ["<0.01\u00a0GB/s", ""] in bandwidths and not [b for b in bandwidths if b[0].startswith("0\u00a0")]
        # the roofline's legend names each color its dots are drawn in, and only those
        tab.frame.wait_for_selector("svg.roofline circle.roof-dot")
        dots = tab.frame.evaluate(DOT_FILLS)
        swatches = tab.frame.evaluate(LEGEND_FILLS.replace("LEGEND", "[data-testid=roofline-legend]"))
        assert dots and set(dots) == set(swatches), (dots, swatches)
        # the healthy run's idle chart: every cause it draws has a legend entry in its color
        assert tab.show(runs["healthy"]) == "ready"
        tab.frame.wait_for_selector("[data-testid=idle-step-chart] svg rect")
        drawn = tab.frame.evaluate(
            "() => [...new Set([...document.querySelectorAll('[data-testid=idle-step-chart] svg rect[class^=cat-idle-]')]"
            ".map((r) => getComputedStyle(r).fill))]"
        )
        swatches = tab.frame.evaluate(LEGEND_FILLS.replace("LEGEND", "#idle .legend"))
        assert drawn and set(drawn) <= set(swatches), (drawn, swatches)
        _audit(tab, "healthy")  # a tiny cause reads "<0.1%" in the legend, never 0%
        # the kernels' first page on its way: a loading state in the table's place, not an empty table
        held = []
        tab.page.route("**/data/plugin/gpu_advisor/kernels?*", lambda route: held.append(route))
        assert tab.show(runs["launch_bound"]) == "ready"
        tab.frame.wait_for_selector("[data-testid=kernels-loading] .spinner")
        assert tab.frame.query_selector("[data-testid=kernel-table] tbody tr") is None
        tab.page.unroute("**/data/plugin/gpu_advisor/kernels?*")  # Playwright lets the held requests go on
        tab.frame.wait_for_selector("[data-testid=kernel-table] tbody tr")
        assert tab.frame.query_selector("[data-testid=kernels-loading]") is None
        assert tab.errors == []
    finally:
        tab.close()


@pytest.mark.parametrize("view", range(len(VIEWS)), ids=[f"{width}-{scheme}" for width, scheme in VIEWS])
def test_every_run_of_the_logdir(browser, views, view):  # noqa: F811
    """Each run of the logdir (the demo's 22, the PyTorch folder, AMD, empty) in one of the four views, a quarter
    each, with its fixed twin compared beside it: all runs pass the audit, every view sees each kind of run."""
    board, runs = views
    width, scheme = VIEWS[view]
    tab = Tab(browser, board.url, color_scheme=scheme, width=width)
    try:
        listed = sorted(tab.frame.eval_on_selector_all("[data-testid=run-select] option", "os => os.map(o => o.value)"))
        assert len(listed) == 22 + 4 + len(KINETO_RUNS) + 15, listed
        fixed = {run: runs[f"{name}_fixed"] for name, run in runs.items() if f"{name}_fixed" in runs}
        for run in listed[view :: len(VIEWS)]:
            assert tab.show(run) in (("ready", "error") if run == EMPTY else ("ready",)), run
            _audit(tab, run)
            baseline = fixed.get(run) or TORCH_PAIRS.get(run)
            if baseline:
                assert tab.compare(baseline) == "ready", run
                _audit(tab, f"{run} against {baseline}")
                _clear(tab)
        assert tab.errors == [] and tab.dialogs == []
    finally:
        tab.close()


@pytest.mark.parametrize("width, scheme", VIEWS)
def test_an_empty_logdir_is_a_message_not_a_blank_page(browser, tmp_path, width, scheme):  # noqa: F811
    with TensorBoardProcess(tensorboard_command(tmp_path)) as board:
        context = browser.new_context(viewport={"width": width, "height": 800}, color_scheme=scheme)
        try:
            page = context.new_page()
            page.goto(board.url + "#gpu_advisor")
            frame = page.wait_for_selector('iframe[src*="name=gpu_advisor"]').content_frame()
            frame.wait_for_selector("main.content[data-state=empty]")
            assert "No profiles in this logdir" in frame.inner_text("[data-testid=info-message]")
            assert frame.evaluate(AUDIT) == []
            # nothing to pick, list or link: only Refresh stays live
            for control in ("run-select", "overview-button", "copy-link"):
                assert frame.is_disabled(f"[data-testid={control}]"), control
            assert frame.is_hidden("label.host-picker") and frame.is_enabled("button.refresh")
        finally:
            context.close()


def test_a_bucket_reads_like_a_local_logdir(browser, tmp_path):  # noqa: F811
    """`serve s3://...` on a local S3 server (the remote tests' moto): the same views at 1280 and 1440, light and
    dark."""
    pytest.importorskip("s3fs", reason="s3:// logdirs need s3fs (pip install -e '.[remote]')")
    pytest.importorskip("moto.server", reason="the S3 test server is moto (pip install -e '.[test]')")
    from tb_gpu_advisor.testing.pairs import write_input_pair
    from tests.remote.s3_server import FOREIGN_AWS_VARIABLES, bucket_client, client_environment, s3_server

    bucket, logdir = "team-profiles", "s3://team-profiles/logs"
    bound, fixed = "input_bound/2026_01_01_00_00_00", "prefetch/2026_01_01_00_00_00"
    with s3_server(tmp_path / "server.log") as endpoint, pytest.MonkeyPatch.context() as env:
        for name, value in client_environment(endpoint, tmp_path / "cache", base={}).items():
            env.setenv(name, value)
        for name in FOREIGN_AWS_VARIABLES:
            env.delenv(name, raising=False)
        local = tmp_path / "upload"
        write_input_pair(str(local), fixed=False)
        write_input_pair(str(local), fixed=True, seed=1)
        fs = bucket_client(endpoint)
        fs.mkdir(bucket)
        fs.put(str(local) + "/", f"{bucket}/logs", recursive=True)
        with TensorBoardProcess(serve_command(logdir)) as board:
            for width, scheme in VIEWS:
                tab = Tab(browser, board.url, color_scheme=scheme, width=width)
                try:
                    assert tab.show(bound) == "ready"
                    _audit(tab, f"a bucket run ({scheme})")
                    # 5. the Profile tab's note neither breaks the toolbar (the audit: no sideways scroll) nor
                    # shows a command-line flag
                    assert "--" not in tab.frame.inner_text(".toolbar")
                    assert tab.compare(fixed) == "ready"
                    _audit(tab, f"a bucket comparison ({scheme})")
                    assert tab.errors == []
                finally:
                    tab.close()


def test_the_screenshots_in_docs(browser, views):  # noqa: F811
    """docs/gpu_advisor_tab*.png: a TensorFlow run, a PyTorch two-rank run, a comparison (1280x800, light)."""
    board, runs = views
    tab = Tab(browser, board.url)
    try:
        shots = (
            ("gpu_advisor_tab", lambda: tab.show(runs["input_bound"])),
            # rank 1 of the two: its verdict (the run-level ranks card above it is views/ranks.js's)
            (
                "gpu_advisor_tab_pytorch",
                lambda: (tab.show("ddp", "rank1"), tab.frame.eval_on_selector("#summary", "e => e.scrollIntoView()")),
            ),
            (
                "gpu_advisor_tab_compare",
                lambda: (tab.show(runs["input_bound"]), tab.compare(runs["input_bound_fixed"])),
            ),
        )
        for name, show in shots:
            show()
            tab.frame.wait_for_timeout(500)
            tab.screenshot(name, full=False)
            if os.environ.get("TB_GPU_ADVISOR_WRITE_DOCS_SCREENSHOTS"):
                shutil.copy(ARTIFACTS / f"{name}.png", DOCS / f"{name}.png")
        assert tab.errors == []
    finally:
        tab.close()
