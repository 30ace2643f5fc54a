"""With several GPUs the Time line's compute is not the header's busy mean: the verdict quotes the Time line's
number as the Time line's and the mean as the mean, and the Time line says whose compute it counts (issue 29,
review item 2). Where only one GPU computes inside the steps (review finalB 1: the V100 capture's GPU:4 ran its
kernels 600 ms before GPU:6's one step), the compute is that GPU's, named, and the other GPU's idle in that step
is not charged to launch, host or input causes: each GPU's per-step row is its own step."""

from tb_gpu_advisor.pipeline import analyze_host_file
from tb_gpu_advisor.report.text import render_text


def test_the_verdict_and_the_time_line_give_one_compute_share_and_name_whose(v100_trace):
    report = analyze_host_file(v100_trace)
    summary = report["summary"]
    compute = sum(summary["breakdown_pct"][key] for key in ("compute_16bit", "compute_32bit", "compute_unknown"))
    assert round(compute) == 70 and round(summary["gpu_busy_pct"]) == 72
    assert summary["breakdown_gpus"] == ["/device:GPU:6"]
    assert (
        "/device:GPU:6 computes 70% of each step (the Time line's compute; the other GPUs' kernels lie outside the "
        "step; GPU busy, the mean over the 2 GPUs, is 72%)" in summary["verdict"]
    )
    assert "at least one of" not in summary["verdict"]
    text = " ".join(render_text({"hosts": [report]}).split())
    assert "GPU busy: 72.4% (mean of 2 GPUs)" in text
    assert "(compute: /device:GPU:6's; the other GPUs ran no kernel in the profiled steps; 16-bit/32-bit" in text
    assert "any of the 2 GPUs computing" not in text


def test_each_gpu_per_step_idle_row_is_its_own_step(v100_trace):
    """GPU:4's row was GPU:6's 21.31 ms window, all of it idle, blamed on launch/host/input: now its own 19.87 ms
    step, whose idle matches its totals (4.99 ms)."""
    gpus = {g["device"]: g for g in analyze_host_file(v100_trace)["idle_attribution"]["gpus"]}
    for gpu in gpus.values():
        (step,) = gpu["steps"]
        assert step["idle_ms"] == gpu["idle_ms"] < gpu["window_ms"]
    assert round(gpus["/device:GPU:4"]["steps"][0]["idle_ms"], 2) == 4.99


def test_a_gpu_that_runs_nothing_in_a_step_has_no_idle_row_for_it():
    """Generated: GPU 1 computes only in the first of four steps; its rows for the others (all idle) are left out
    rather than charging them to host causes."""
    from tb_gpu_advisor.testing import TraceBuilder
    from tests.findings.scenarios import kernels, report_of, step_starts

    builder = TraceBuilder()
    python = builder.thread("python")
    gpus = (builder.gpu(0), builder.gpu(1))
    for index, start in enumerate(step_starts(python, durations=[10_000] * 4)):
        kernels(gpus[0], start + 500, 9_000)
        if index == 0:
            kernels(gpus[1], start + 500, 9_000)
    rows = {g["ordinal"]: g["steps"] for g in report_of(builder)["idle_attribution"]["gpus"]}
    assert len(rows[0]) == 4 and len(rows[1]) == 1
    assert rows[1][0]["idle_ms"] < 10.0
