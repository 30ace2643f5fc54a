"""Multi-GPU runs lead with compute busy, and show collectives per GPU, in the text and HTML reports; copies
with no kernel beside them are shown apart from compute on any run."""

from tb_gpu_advisor.report.html import render_html
from tb_gpu_advisor.report.text import render_text
from tb_gpu_advisor.testing import TraceBuilder
from tests.conftest import report_of


def _run(gpus, collectives=True):
    builder = TraceBuilder()
    builder.thread().step(0, 0, 1000)
    for ordinal in range(gpus):
        gpu = builder.gpu(ordinal)
        gpu.kernel("volta_sgemm_128x64_nn", 0, 450)
        if collectives:
            gpu.kernel("ncclKernel_AllReduce_RING_LL_Sum_float", 400, 550, stream=13)
    return {"schema_version": 1, "run": None, "hosts": [report_of(builder)], "errors": []}


def test_text_leads_with_compute_busy_on_multi_gpu_runs():
    text = render_text(_run(4))
    # The headline figures are the mean over the GPUs, and say so (v100x8 read "GPU busy: 72.4%" beside a Time
    # line and step table of one GPU's 69.9%).
    assert "GPU compute busy: 45.0% (mean of 4 GPUs; with collectives 95.0%)" in " ".join(text.split())
    assert "GPU busy: 45.0% (mean of 2 GPUs)" in render_text(_run(2, collectives=False))
    assert "with collectives" not in render_text(_run(2, collectives=False))  # no collective kernel captured
    header = next(line for line in text.splitlines() if line.startswith("device"))
    assert header.split()[:5] == ["device", "busy", "compute", "collectives", "only"]
    row = next(line for line in text.splitlines() if line.startswith("/device:GPU:3"))
    assert row.split()[1:4] == ["95.0%", "45.0%", "50.0%"]


def test_text_single_gpu_keeps_gpu_busy():
    text = render_text(_run(1))
    assert "GPU busy: 95.0%" in text and "compute busy" not in text


def test_html_cards_and_chart_show_compute_busy():
    document = render_html(_run(2))
    assert "<b>45.0%</b><span>GPU compute busy (mean of 2 GPUs)</span>" in document
    assert "<b>95.0%</b><span>GPU busy with collectives</span>" in document
    assert "GPU compute busy per device" in document
    assert "compute 45.0%, collectives only 50.0%" in document


def _copy_bound_run():
    """One GPU: per 1000 us step a 300 us input copy with nothing beside it, then a 600 us kernel."""
    builder = TraceBuilder()
    python = builder.thread()
    gpu = builder.gpu(0)
    for step in range(3):
        start = step * 1000
        python.step(step, start, 1000)
        gpu.memcpy("h2d", start, 300, 1 << 24, src="pinned")
        gpu.kernel("volta_sgemm_128x64_nn", start + 300, 600)
    return {"schema_version": 1, "run": None, "hosts": [report_of(builder)], "errors": []}


def test_copies_are_not_counted_as_compute_in_the_headline():
    run = _copy_bound_run()
    summary = run["hosts"][0]["summary"]
    assert (summary["gpu_busy_pct"], summary["gpu_compute_busy_pct"], summary["gpu_kernel_busy_pct"]) == (
        90.0,
        90.0,
        60.0,
    )
    assert run["hosts"][0]["devices"][0]["kernel_busy_pct"] == 60.0
    assert "GPU compute busy: 60.0% (with copies 90.0%)" in render_text(run)
    document = render_html(run)
    assert "<b>60.0%</b><span>GPU compute busy</span>" in document
    assert "<b>90.0%</b><span>GPU busy with copies</span>" in document
