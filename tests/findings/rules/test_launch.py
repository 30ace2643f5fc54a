from tb_gpu_advisor.testing import TraceBuilder
from tests.findings.scenarios import CUSTOM, findings_by_id, healthy, report_of, step_starts


def launch_bound(tf_data=False, private_gpu_threads=False, tf_data_busy_us=5, cpu_count=None, kernel=CUSTOM):
    """Each step: 200 kernels of 10 us, each launched by a 40 us call just before it runs."""
    builder = TraceBuilder()
    python = builder.thread("python")
    gpu = builder.gpu(0)
    if cpu_count is not None:
        builder.metadata(cpu_count=cpu_count)
    if private_gpu_threads:
        builder.thread("tf_gpu_private_0/77").event("GpuLaunchThread", 500, 10)
    for start in step_starts(python):
        if tf_data:
            builder.thread("tf_data_iterator_resource/3").event("Iterator::Root::Prefetch", start, tf_data_busy_us)
        t = start
        for _ in range(200):
            gpu.kernel(kernel, t + 40, 10, grid=(216, 1, 1), block=(256, 1, 1), launch=(python, t, 40))
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
    assert (
        report["summary"]["verdict"] == "Launch-bound: the GPU idles 80% of each step waiting for kernel launch calls."
    )


def test_kernels_shorter_than_their_launch():
    finding = findings_by_id(report_of(launch_bound()))["launch.tiny_kernels"]
    metrics = finding["evidence"]["metrics"]
    assert metrics["kernels_shorter_than_launch_pct"] == 100.0
    assert metrics["kernels_paired"] == 800
    # 199 gaps of 40 us inside each step (the gap before a step's first kernel is launch time in that step too)
    assert metrics["short_gap_count"] == 799
    assert metrics["short_gap_ms"] == 31.96
    assert metrics["short_gap_median_us"] == 40.0
    assert "200 short gaps per step (7.99 ms per step, " in finding["summary"]
    assert finding["estimated_speedup"] == 4.98


def test_high_launch_latency_on_a_busy_gpu_is_not_a_problem():
    report = report_of(healthy())
    assert report["launch"]["latency_us"]["p50"] == 2000.0
    assert not [f for f in report["findings"] if f["category"] in ("launch", "threading")]


def test_tf_data_contention_needs_tf_data_and_shared_gpu_threads():
    finding = findings_by_id(report_of(launch_bound(tf_data=True)))["threading.tf_data_contention"]
    # the trace does not say how many cores the machine had: contention is not proven, so the finding stays low
    assert finding["severity"] == "low"
    assert "does not record the machine's core count" in finding["summary"]
    metrics = finding["evidence"]["metrics"]
    assert metrics["launch_exposed_pct"] == 80.0 and metrics["machine_cores"] is None
    assert metrics["tf_data_thread_busy_ms"] == {"tf_data_iterator_resource": 0.02}
    assert metrics["host_busy_cores"] == 0.8  # 200 launch calls of 40 us in each 10 ms step
    assert finding["estimated_speedup"] == 5.0
    assert "TF_GPU_THREAD_MODE=gpu_private" in finding["fix"]
    # the pasted code defines every core count it uses
    fix = finding["fix"]
    assert "num_cores" not in fix or fix.index("num_cores = os.cpu_count()") < fix.index("num_cores // 2")
    assert "threading.tf_data_contention" not in findings_by_id(report_of(launch_bound()))
    assert "threading.tf_data_contention" not in findings_by_id(
        report_of(launch_bound(tf_data=True, private_gpu_threads=True))
    )


def test_tf_data_contention_with_the_core_count_needs_busy_cores():
    """tf.data busy 9 ms of each 10 ms step beside 8 ms of launch calls: 1.7 cores of work."""
    one_core = findings_by_id(report_of(launch_bound(tf_data=True, tf_data_busy_us=9_000, cpu_count=1)))
    finding = one_core["threading.tf_data_contention"]
    assert finding["severity"] == "medium"  # launch share 80% would be high: capped, the launch finding leads
    assert (finding["evidence"]["metrics"]["host_busy_cores"], finding["evidence"]["metrics"]["machine_cores"]) == (
        1.7,
        1,
    )
    assert finding["evidence"]["threshold"]["level"] == 0.9
    eight_cores = findings_by_id(report_of(launch_bound(tf_data=True, tf_data_busy_us=9_000, cpu_count=8)))
    assert "threading.tf_data_contention" not in eight_cores  # cores to spare: no contention


def test_launch_fixes_do_not_advise_xla_to_a_step_already_compiled_with_it():
    builder = launch_bound(kernel="loop_add_fusion_12")
    builder.thread("tf_Compute").event("EagerLocalExecute: __inference_train_step_9", 0, 5)
    found = findings_by_id(report_of(builder))
    for finding_id in ("launch.gpu_starved_by_launches", "launch.tiny_kernels"):
        fix = found[finding_id]
        assert fix["fix_summary"].startswith("XLA is in use already"), finding_id
        assert "jit_compile=True" not in fix["fix"], finding_id


def test_graph_replay_fix_is_worded_per_framework():
    """CUDA graphs under torch.compile have graph breaks; XLA's command buffers (JAX, TensorFlow) have dispatches
    and calls per step: each framework reads its own words, never the other's."""
    from tb_gpu_advisor.findings.catalog import entry_for

    def text(framework):
        idiom = entry_for("launch.gpu_starved_by_launches", framework).idiom(framework, "graphs")
        return f"{idiom.fix_summary} {idiom.fix}"

    assert "graph break" in text("pytorch") and "torch._dynamo.explain" in text("pytorch")
    for framework in ("jax", "tensorflow"):
        assert "graph break" not in text(framework) and "torch" not in text(framework)
        assert text(framework).startswith("XLA replays the step as command buffers already")
    assert "jax.lax.scan" in text("jax") and "steps_per_execution" in text("tensorflow")
    assert "jax" not in text("tensorflow").lower()
