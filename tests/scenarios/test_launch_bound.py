"""Exact numbers of the launch-bound LSTM scenario and its XLA fix."""

from tests.scenarios.scenario_checks import breakdown, summary

from tb_gpu_advisor.analysis.kernel_names import is_low_precision


def test_launch_bound_gpu_idles_between_tiny_kernels(built):
    report = built("launch_bound").report
    assert summary(report) == {
        "busy": 23.12,
        "input_wait": 0.28,
        "step_ms": 9.972,
        "steps": 4,
        "stdev": 0.0,
        "source": "host",
        "kernels": 3412,
        "kernel_rows": 853,
    }
    assert breakdown(report) == {
        "compute_32bit": 23.05,
        "d2h": 0.02,
        "h2d": 0.05,
        "input_wait": 0.28,
        "input_prep": 0.04,
        "copy_call": 0.08,
        "launch": 49.57,
        "host_wait": 0.02,
        "host": 26.85,
        "idle": 0.04,
    }
    launch = report["launch"]
    assert (launch["count"], launch["tiny_kernel_count"], launch["per_step"]) == (3412, 3388, 853.0)
    # The GPU is idle when each launch arrives: every kernel starts 6 us after its launch call began.
    assert launch["latency_us"]["p50"] == launch["latency_us"]["p95"] == 6.0
    # 4 us per cuLaunchKernel.
    assert launch["launch_call_time_us"] == 4.0 * 3412


def test_launch_bound_kernels_are_unfused_tensorflow_and_eigen_kernels(built):
    kernels = built("launch_bound").report["kernels"]
    names = {k["name"] for k in kernels}
    assert any(
        name.startswith("void Eigen::internal::EigenMetaKernel<") and "scalar_logistic_op" in name for name in names
    )
    assert any(name.startswith("ampere_tf32_s1688gemm_tf32_64x64") for name in names)
    assert {k["op_name"] for k in kernels if "ApplyAdamKernel" in k["name"]} == {
        f"Adam/Adam/update_{i}/ResourceApplyAdam" for i in range(8)
    }


def test_xla_fix_runs_fused_kernels_back_to_back(built):
    report = built("launch_bound_fixed").report
    assert summary(report) == {
        "busy": 85.34,
        "input_wait": 3.35,
        "step_ms": 0.8355,
        "steps": 4,
        "stdev": 0.0,
        "source": "host",
        "kernels": 504,
        "kernel_rows": 126,
    }
    assert report["launch"]["per_step"] == 126.0
    fusions = [k for k in report["kernels"] if "fusion" in k["name"]]
    assert len(fusions) == 53
    # XLA kernels are named after their HLO instruction, and the table shows the instruction as the op.
    assert all(k["op_name"].replace(".", "_") == k["name"] for k in fusions)
    # Fusion names say nothing about precision: they count as 32-bit compute.
    assert not any(is_low_precision(k["name"]) for k in fusions)


def test_host_finding_quotes_the_time_lines_host_compute(built):
    """The fixed run's step starts with host work the batch-preparation analysis sees, too little for
    input.host_batch_prep to report: no finding names it, so it stays the host finding's, and the finding quotes
    the Time line's host compute, one figure (it read 7.5% beside the Time line's 8.0%)."""
    report = built("launch_bound_fixed").report
    found = {f["id"]: f for f in report["findings"]}
    assert "input.host_batch_prep" not in found
    host = found["host.gpu_idle_host_busy"]
    assert host["evidence"]["metrics"]["host_exposed_pct"] == report["summary"]["breakdown_pct"]["host"]


def test_xla_fix_counts_no_queued_gap_as_launch_time(built):
    """The fixed run's kernels wait a median 143 µs in the queue after their launch: its short gaps between
    kernels are device waits, not launch time. launch.tiny_kernels counts only the idle attribution's launch
    time in them, under its threshold here (it read "32 short gaps per step (57.8 µs per step, 6.8%)")."""
    report = built("launch_bound_fixed").report
    assert report["launch"]["latency_us"]["p50"] > 100.0
    assert "launch.tiny_kernels" not in {f["id"] for f in report["findings"]}


def test_launch_bound_short_gaps_are_its_launch_time(built):
    """The LSTM's short gaps hold host work as well as launches: the finding counts only the launch part, the
    Time line's kernel launch share (it read 76.7%: host compute counted as launch time)."""
    report = built("launch_bound").report
    finding = next(f for f in report["findings"] if f["id"] == "launch.tiny_kernels")
    assert finding["evidence"]["metrics"]["short_gap_pct"] <= report["summary"]["breakdown_pct"]["launch"]


def test_host_finding_lists_no_device_wait_as_host_work(built):
    """TFE_TensorHandleResolve is the loss read waiting on the device (model.host_waits): not an op that blocks
    the step with host work (it was listed beside XlaLaunch)."""
    report = built("launch_bound_fixed").report
    host = next(f for f in report["findings"] if f["id"] == "host.gpu_idle_host_busy")
    names = [op["name"] for op in host["evidence"]["pointers"]["host_ops"]]
    assert "StatefulPartitionedCall:XlaLaunch" in names and "TFE_TensorHandleResolve" not in names
