"""The real MI300X trace records half the HBM peak: every view shows the corrected figure the roofline uses, and
says it was corrected."""

from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.pipeline import host_report
from tb_gpu_advisor.report.html import render_html
from tb_gpu_advisor.report.markdown import render_markdown
from tb_gpu_advisor.report.text import render_text
from tests.data import real_trace


def _run_report():
    report = host_report(load_model(real_trace("amd_mi300x_jax08_gemm.xplane.pb")))
    report["host"] = "amd"
    return {"schema_version": 1, "run": "amd", "hosts": [report], "errors": []}


def test_every_view_shows_the_corrected_hbm_figure_and_says_so():
    run = _run_report()
    device = run["hosts"][0]["devices"][0]
    assert device["memory_bandwidth_gbps"] == 2662.4  # as the trace records it
    assert device["peak_gbps"] == 5324.8
    assert device["peak_gbps_source"] == (
        "the trace's memory_bandwidth 2662.4 GB/s corrected x2: ROCm reports half the HBM peak"
    )
    text = " ".join(render_text(run).split())
    assert "5325 GB/s HBM (the trace says 2662: corrected, ROCm reports half the HBM peak)" in text
    assert "2662 GB/s HBM" not in text
    markdown = render_markdown(run)
    assert "5325 GB/s HBM (the trace says 2662: corrected, ROCm reports half the HBM peak)" in markdown
    html = " ".join(render_html(run).split())
    assert (
        "HBM 5324.8 GB/s: the trace&#x27;s memory_bandwidth 2662.4 GB/s corrected x2" in html
        or "HBM 5324.8 GB/s: the trace's memory_bandwidth 2662.4 GB/s corrected x2" in html
    )
