from html.parser import HTMLParser

import pytest

from tb_gpu_advisor.files.discovery import resolve_target
from tb_gpu_advisor.report.html import render_html
from tb_gpu_advisor.pipeline import run_report
from tb_gpu_advisor.testing.builder import TraceBuilder
from tb_gpu_advisor.testing.pairs import write_launch_pair

NASTY = 'void k<float, "2">&amp;<script>alert(1)</script><img src=x onerror=alert(2)>'


class _Collector(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.attributes, self.text = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attributes.extend(attrs)

    def handle_data(self, data):
        self.text.append(data)


def _parse(document):
    collector = _Collector()
    collector.feed(document)
    return collector


@pytest.fixture(scope="module")
def nasty_report(tmp_path_factory):
    builder = TraceBuilder()
    python, gpu = builder.thread("python"), builder.gpu(0)
    for step in range(3):
        start = 1000 + step * 1000
        python.step(step, start, 900)
        gpu.kernel(NASTY, start + 100, 300, launch=(python, start + 50, 10))
        gpu.kernel("ampere_sgemm_128x64_tn", start + 450, 200, launch=(python, start + 60, 10))
    path = builder.write(str(tmp_path_factory.mktemp("nasty") / "<b>host&.xplane.pb"))
    return run_report(*resolve_target(path))


def test_every_profile_string_is_escaped(nasty_report):
    document = render_html(nasty_report)
    parsed = _parse(document)
    assert "script" not in parsed.tags and "img" not in parsed.tags
    assert not any(name.startswith("on") for name, _ in parsed.attributes)
    assert "<script" not in document and "<img" not in document
    text = "".join(parsed.text)
    assert NASTY in text  # shown as text, exactly
    assert "<b>host&" in text


def test_nothing_is_fetched_or_run(nasty_report):
    document = render_html(nasty_report)
    parsed = _parse(document)
    urls = [value for name, value in parsed.attributes if name in ("src", "href", "xlink:href", "action")]
    assert urls == []
    namespaces = [value for name, value in parsed.attributes if name == "xmlns"]
    assert namespaces == ["http://www.w3.org/2000/svg"] * parsed.tags.count("svg")
    assert "default-src 'none'" in document and "@import" not in document and "url(" not in document


def test_charts_and_tables_of_a_gpu_profile(tmp_path):
    report = run_report(*resolve_target(write_launch_pair(str(tmp_path), fixed=False)))
    parsed = _parse(render_html(report))
    labels = [value for name, value in parsed.attributes if name == "aria-label"]
    assert labels == [
        "time breakdown",
        "step breakdown",
        "GPU busy per device",
        "top kernels",
        "launch latency histogram",
    ]
    assert parsed.tags.count("table") == 4  # configuration, steps, GPUs, kernels
    text = "".join(parsed.text)
    # The short gaps' time is the launch wait's (launch.tiny_kernels counts only that): the launch finding leads.
    assert "Launch-bound: the GPU idles 81% of each step waiting for kernel launch calls" in text
    assert "launch: Launch" not in text
    assert "elementwise_op_0" in text


def test_cpu_profile_has_no_gpu_charts(tmp_path):
    builder = TraceBuilder()
    python = builder.thread("python")
    for step in range(4):
        python.step(step, 1000 + step * 100, 90)
        python.input_wait(1000 + step * 100, 60)
    report = run_report(*resolve_target(builder.write(str(tmp_path / "cpu.xplane.pb"))))
    parsed = _parse(render_html(report))
    labels = [value for name, value in parsed.attributes if name == "aria-label"]
    assert labels == ["time breakdown", "step breakdown"]


def test_findings_and_verdict_when_present(nasty_report):
    host = dict(nasty_report["hosts"][0])
    host["summary"] = dict(host["summary"], bottleneck="Launch bound", verdict="kernels wait <for> launches")
    host["findings"] = [
        {
            "id": "GA1",
            "severity": "high",
            "title": "Tiny & many kernels",
            "summary": "s <x>",
            "fix_summary": "use tf.function(jit_compile=True)",
        }
    ]
    document = render_html(dict(nasty_report, hosts=[host]))
    assert "Launch bound: kernels wait &lt;for&gt; launches" in document
    assert '<span class="sev sev-high">high</span><b>Tiny &amp; many kernels</b>' in document
    assert "Fix: use tf.function(jit_compile=True)" in document


def test_errors_are_listed(nasty_report):
    report = dict(nasty_report, errors=[{"host": "x", "file": "/x<1>.xplane.pb", "error": "file is empty"}])
    assert "Error: /x&lt;1&gt;.xplane.pb: file is empty" in render_html(report)


def test_input_preparation_is_painted_as_the_tab_paints_it(tmp_path):
    """The step thread's traced batch preparation (breakdown input_prep) in the share bar and the step columns, in
    the tab's light-theme colour (static/style.css --c-input-prep)."""
    from tests.findings.rules.test_input_host_batch_prep import jax_loop

    path = jax_loop(4_000).write(str(tmp_path / "prep.xplane.pb"))
    document = render_html(run_report(*resolve_target(path)))
    assert "Input preparation" in "".join(_parse(document).text)
    assert document.count("#c2185b") >= 2


def test_the_fix_is_prose_that_wraps_and_code_that_scrolls(nasty_report):
    """The whole fix under the finding, split as the tab splits it: code keeps its lines in <pre> (no wrapping,
    a horizontal scroll), prose paragraphs wrap; every string escaped."""
    host = dict(nasty_report["hosts"][0])
    fix = "Read ahead <now>:\nin parallel.\n\n    ds = ds.map(f, num_parallel_calls=AUTOTUNE)  # a < b\n    ds = ds.prefetch(2)"
    host["findings"] = [{"id": "GA1", "severity": "high", "title": "t", "fix_summary": "s", "fix": fix}]
    document = render_html(dict(nasty_report, hosts=[host]))
    assert (
        '<details class="fix-text"><summary>How to fix</summary><p>Read ahead &lt;now&gt;: in parallel.</p>'
        "<pre><code>ds = ds.map(f, num_parallel_calls=AUTOTUNE)  # a &lt; b\nds = ds.prefetch(2)</code></pre>"
        "</details>"
    ) in document
    css = document[document.index("<style>") : document.index("</style>")]
    assert "overflow-x:auto;white-space:pre}" in css and "overflow-wrap:anywhere" in css.split(".fix-text p{")[1]
