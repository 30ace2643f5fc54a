"""Multi-GPU runs lead with compute busy, and show collectives per GPU, in the text and HTML reports."""

from tb_gpu_advisor.report.html import render_html
from tb_gpu_advisor.report.text import render_text
from tb_gpu_advisor.testing import TraceBuilder
from tests.conftest import report_of


def _run(gpus):
    builder = TraceBuilder()
    builder.thread().step(0, 0, 1000)
    for ordinal in range(gpus):
        gpu = builder.gpu(ordinal)
        gpu.kernel("volta_sgemm_128x64_nn", 0, 450)
        gpu.kernel("ncclKernel_AllReduce_RING_LL_Sum_float", 400, 550, stream=13)
    return {"schema_version": 1, "run": None, "hosts": [report_of(builder)], "errors": []}


def test_text_leads_with_compute_busy_on_multi_gpu_runs():
    text = render_text(_run(4))
    assert "GPU compute busy: 45.0% (with collectives 95.0%)" in text
    header = next(line for line in text.splitlines() if line.startswith("device"))
    assert header.split()[:5] == ["device", "busy", "compute", "collectives", "only"]
    row = next(line for line in text.splitlines() if line.startswith("/device:GPU:3"))
    assert row.split()[1:4] == ["95.0%", "45.0%", "50.0%"]


def test_text_single_gpu_keeps_gpu_busy():
    text = render_text(_run(1))
    assert "GPU busy: 95.0%" in text and "compute busy" not in text


def test_html_cards_and_chart_show_compute_busy():
    document = render_html(_run(2))
    assert "<b>45.0%</b><span>GPU compute busy</span>" in document
    assert "<b>95.0%</b><span>GPU busy with collectives</span>" in document
    assert "GPU compute busy per device" in document
    assert "compute 45.0%, collectives only 50.0%" in document
