"""With several GPUs the Time line's compute (any GPU computing) is not the header's busy mean: the verdict quotes
the Time line's number as the Time line's and the mean as the mean, and the Time line says whose it is (issue 29,
review item 2: '72% ... busy 72%' beside 'compute (16-bit) 69.7%')."""

from tb_gpu_advisor.pipeline import analyze_host_file
from tb_gpu_advisor.report.text import render_text


def test_the_verdict_and_the_time_line_give_one_compute_share(v100_trace):
    report = analyze_host_file(v100_trace)
    summary = report["summary"]
    compute = sum(summary["breakdown_pct"][key] for key in ("compute_16bit", "compute_32bit", "compute_unknown"))
    assert round(compute) == 70 and round(summary["gpu_busy_pct"]) == 72
    assert (
        "at least one of the 2 GPUs computes 70% of each step (the Time line's compute; GPU busy, the mean over "
        "the 2 GPUs, is 72%)" in summary["verdict"]
    )
    text = " ".join(render_text({"hosts": [report]}).split())
    assert "GPU busy: 72.4% (mean of 2 GPUs)" in text
    assert "(compute: any of the 2 GPUs computing; 16-bit/32-bit" in text
