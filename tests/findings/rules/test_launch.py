from tb_gpu_advisor.testing import TraceBuilder
from tests.findings.scenarios import CUSTOM, findings_by_id, healthy, report_of, step_starts


def launch_bound(tf_data=False, private_gpu_threads=False):
    """Each step: 200 kernels of 10 us, each launched by a 40 us call just before it runs."""
    builder = TraceBuilder()
    python = builder.thread("python")
    gpu = builder.gpu(0)
    if private_gpu_threads:
        builder.thread("tf_gpu_private_0/77").event("GpuLaunchThread", 500, 10)
    for start in step_starts(python):
        if tf_data:
            builder.thread("tf_data_iterator_resource/3").event("Iterator::Root::Prefetch", start, 5)
        t = start
        for _ in range(200):
            gpu.kernel(CUSTOM, t + 40, 10, grid=(216, 1, 1), block=(256, 1, 1), launch=(python, t, 40))
            t += 50
    return builder


def test_gpu_starved_by_launches():
    report = report_of(launch_bound())
    finding = findings_by_id(report)["launch.gpu_starved_by_launches"]
    metrics = finding["evidence"]["metrics"]
    assert metrics["launch_exposed_pct"] == 80.0
    assert metrics["launch_exposed_ms"] == 32.0
    assert metrics["launch_exposed_ms_per_step"] == 8.0
    assert metrics["kernels_per_step"] == 200.0
    assert metrics["launch_call_mean_us"] == 40.0
    assert metrics["launch_latency_p50_us"] == 40.0
    assert finding["severity"] == "high"
    assert finding["estimated_speedup"] == 5.0
    assert report["summary"]["bottleneck"] == "launch"
    assert report["summary"]["verdict"] == "Launch-bound: the GPU idles 80% of each step during kernel launches."


def test_kernels_shorter_than_their_launch():
    finding = findings_by_id(report_of(launch_bound()))["launch.tiny_kernels"]
    metrics = finding["evidence"]["metrics"]
    assert metrics["kernels_shorter_than_launch_pct"] == 100.0
    assert metrics["kernels_paired"] == 800
    # 199 gaps of 40 us inside each step (the gap before a step's first kernel is launch time in that step too)
    assert metrics["short_gap_count"] == 799
    assert metrics["short_gap_ms"] == 31.96
    assert metrics["short_gap_median_us"] == 40.0
    assert finding["estimated_speedup"] == 4.98


def test_high_launch_latency_on_a_busy_gpu_is_not_a_problem():
    report = report_of(healthy())
    assert report["launch"]["latency_us"]["p50"] == 2000.0
    assert not [f for f in report["findings"] if f["category"] in ("launch", "threading")]


def test_tf_data_contention_needs_tf_data_and_shared_gpu_threads():
    finding = findings_by_id(report_of(launch_bound(tf_data=True)))["threading.tf_data_contention"]
    assert finding["severity"] == "medium"  # launch share 80% would be high: capped, the launch finding leads
    assert finding["evidence"]["metrics"]["launch_exposed_pct"] == 80.0
    assert finding["evidence"]["metrics"]["tf_data_thread_busy_ms"] == {"tf_data_iterator_resource": 0.02}
    assert finding["estimated_speedup"] == 5.0
    assert "TF_GPU_THREAD_MODE=gpu_private" in finding["fix"]
    assert "threading.tf_data_contention" not in findings_by_id(report_of(launch_bound()))
    assert "threading.tf_data_contention" not in findings_by_id(
        report_of(launch_bound(tf_data=True, private_gpu_threads=True)))
