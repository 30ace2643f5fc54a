import pytest

from tb_gpu_advisor.testing import TraceBuilder
from tests.findings.scenarios import CUSTOM, EIGEN, SGEMM, findings_by_id, healthy, kernels, report_of, step_starts

SMALL = dict(grid=(216, 1, 1), block=(256, 1, 1), registers=32, occupancy_pct=100.0)


def test_gpu_underused_with_small_kernels_suggests_a_larger_batch():
    builder = TraceBuilder()
    python = builder.thread("python")
    gpu = builder.gpu(0)
    for start in step_starts(python):
        python.event("python_overhead", start, 10_000)
        kernels(gpu, start, 10_000, name=CUSTOM, count=100, gap_us=90.0 * 100 / 99, **SMALL)
    report = report_of(builder)
    finding = findings_by_id(report)["batch.gpu_underused"]
    assert finding["severity"] == "medium"  # capped: a batch change also changes convergence
    assert finding["evidence"]["metrics"] == {
        "gpu_busy_pct": 10.0,
        "kernel_mean_us": 10.0,
        "gpu_idle_ms": 36.0,
        "recoverable_pct": 45.0,
    }
    assert finding["recoverable_ms"] == 18.0
    assert finding["estimated_speedup"] == 1.82
    assert "per-example" in finding["speedup_basis"]
    assert report["summary"]["bottleneck"] == "host"  # the batch advice is not a bottleneck by itself


def test_no_batch_advice_when_input_bound():
    builder = TraceBuilder()
    python = builder.thread("python")
    gpu = builder.gpu(0)
    for start in step_starts(python):
        python.input_wait(start, 6_000)
        kernels(gpu, start + 6_000, 4_000, name=CUSTOM, count=100, gap_us=30.0, **SMALL)
    assert "batch.gpu_underused" not in findings_by_id(report_of(builder))


def fp32_loop(compute_capability=(8, 0), framework=None, grid=(432, 1, 1)):
    builder = TraceBuilder()
    python = builder.thread("python")
    if framework == "tensorflow":
        builder.thread("tf_Compute").event("EagerLocalExecute: __inference_train_step_7", 0, 10)
    elif framework == "jax":
        builder.metadata(jax_version="0.4.30")
    gpu = builder.gpu(0, compute_capability=compute_capability)
    for start in step_starts(python):
        end = kernels(
            gpu,
            start,
            8_000,
            name=SGEMM,
            grid=grid,
            block=(256, 1, 1),
            registers=120,
            occupancy_pct=25.0,
            tf_op="model/dense/MatMul:MatMul",
        )
        kernels(gpu, end, 1_900)
    return builder


def test_fp32_matmul_on_a_tensor_core_gpu():
    report = report_of(fp32_loop())
    finding = findings_by_id(report)["precision.fp32_matmul"]
    assert finding["evidence"]["metrics"] == {
        "fp32_matmul_ms": 32.0,
        "fp32_matmul_share_of_kernel_time_pct": 80.81,
        "compute_16bit_share_pct": 19.19,
        "compute_capability": "8.0",
        "recoverable_pct": 40.0,
    }
    assert finding["evidence"]["pointers"]["kernels"] == [SGEMM]
    assert finding["severity"] == "high"
    # no FLOPs in the trace: the 32 ms of sgemm shrink by the A100's peak ratio 312 / 19.5 = 16, a bound:
    # 40 -> 8 + 2 ms
    assert finding["estimated_speedup"] == 4.0 and finding["speedup_kind"] == "bound"
    assert "peak ratio 312 / 19.5" in finding["speedup_basis"]
    # unknown framework: both idioms; cc 8.0: TF32 (on by default) was turned off, which comes first
    assert "enable_tensor_float_32_execution(True)" in finding["fix"] and "jnp.bfloat16" in finding["fix"]
    assert "jax_default_matmul_precision" in finding["fix"]
    assert report["summary"]["bottleneck"] == "kernel"
    assert report["summary"]["verdict"] == (
        "Kernel-bound: the GPU computes 99% of each step, and matrix math runs "
        "in 32-bit on a Tensor Core GPU (up to 75% of the step recoverable)."
    )


def test_tf32_off_on_ampere_leads_the_fix_in_each_frameworks_idiom():
    tf = findings_by_id(report_of(fp32_loop(framework="tensorflow")))["precision.fp32_matmul"]
    # the one-line fix names the step the estimate is for (16-bit), and TF32 as the smaller one
    assert tf["fix_summary"].startswith("Mixed precision for the estimate; turning TF32 back on")
    assert (
        tf["fix"].index("NVIDIA_TF32_OVERRIDE=0")
        < tf["fix"].index("enable_tensor_float_32_execution(True)")
        < tf["fix"].index("mixed_bfloat16")
    )
    assert "jax" not in tf["fix"].lower()
    jax = findings_by_id(report_of(fp32_loop(framework="jax")))["precision.fp32_matmul"]
    assert jax["fix"].startswith("On compute capability 8.0 JAX runs float32 matmuls in TF32")
    assert "jax_default_matmul_precision" in jax["fix"] and "tf." not in jax["fix"]
    volta = findings_by_id(report_of(fp32_loop(compute_capability=(7, 0), framework="tensorflow")))
    fix = volta["precision.fp32_matmul"]
    assert "TF32" not in fix["fix"] and fix["fix_summary"].startswith("Enable mixed precision")


def test_no_precision_advice_for_gemms_that_do_not_fill_the_gpu():
    """The same sgemm time launched as 64 blocks on the A100's 108 SMs: one partial wave, held back by its grid,
    not by its precision; the precision finding, and its what-if in the combined estimate, stay out."""
    report = report_of(fp32_loop(grid=(64, 1, 1)))
    assert "precision.fp32_matmul" not in findings_by_id(report)
    assert "precision" not in str(report["summary"].get("combined_estimate") or "")
    assert "precision.fp32_matmul" in findings_by_id(report_of(fp32_loop(grid=(108, 1, 1))))


def test_no_precision_advice_without_tensor_cores():
    found = findings_by_id(report_of(fp32_loop(compute_capability=(6, 0))))
    assert "precision.fp32_matmul" not in found
    assert found["environment.no_tensor_cores"]["severity"] == "low"
    assert found["environment.no_tensor_cores"]["estimated_speedup"] == 1.0
    assert found["environment.no_tensor_cores"]["evidence"]["metrics"] == {"compute_capability": "6.0"}


def elementwise_loop(name=EIGEN, matmul=True, **metadata):
    """10 ms steps of 100 element-wise kernels of 80 us, then (`matmul`) one 500 us GEMM."""
    builder = TraceBuilder()
    python = builder.thread("python")
    gpu = builder.gpu(0)
    if metadata:
        builder.metadata(**metadata)
    for start in step_starts(python):
        kernels(gpu, start, 8_990, name=name, count=100, gap_us=10.0, launch_thread=python, **SMALL)
        if matmul:
            gpu.kernel("volta_sgemm_128x64_nn", start + 9_000, 500)
    return builder


def test_many_elementwise_kernels_suggest_xla():
    report = report_of(elementwise_loop())
    finding = findings_by_id(report)["fusion.elementwise_kernels"]
    assert finding["evidence"]["metrics"] == {
        "elementwise_kernels_per_step": 100.0,
        "elementwise_ms": 32.0,
        "elementwise_share_of_kernel_time_pct": 94.12,
        "elementwise_kernel_mean_us": 80.0,
        "recoverable_pct": 80.0,
    }
    # 32 ms over 4 steps of 10 ms: the figure beside "per step" is per step
    assert "(8.00 ms per step on /device:GPU:0)" in finding["summary"]
    # no bytes in the trace: each step's run of 100 back-to-back kernels fuses into one that keeps 1/100 of the
    # run's time (the GEMM ends the run): 10 ms -> 2 + 0.08 ms per step
    assert finding["severity"] == "high" and finding["speedup_kind"] == "model"
    assert finding["estimated_speedup"] == 4.81
    assert "4 runs of 2 or more, 100.0 kernels on average" in finding["speedup_basis"]
    assert "jit_compile=True" in finding["fix"] and "jax.jit" in finding["fix"]  # framework unknown: both
    assert report["summary"]["bottleneck"] == "kernel"


def test_element_wise_kernels_without_any_matmul_say_the_capture_looks_partial():
    """The same steps without their GEMM: a model's step runs matmuls or convolutions, so a capture of element-wise
    kernels alone missed part of it; the finding says so and promises no share of the step."""
    report = report_of(elementwise_loop(matmul=False))
    finding = findings_by_id(report)["fusion.elementwise_kernels"]
    assert finding["severity"] == "low" and finding["estimated_speedup"] == 1.0
    assert "No matmul or convolution kernel was captured" in finding["summary"]
    assert "the capture looks partial" in finding["summary"]
    assert finding["evidence"]["metrics"]["matmul_kernels"] == 0
    assert report["summary"]["bottleneck_finding"] != "fusion.elementwise_kernels"


def test_fusion_under_a_strategy_and_with_keras_3_says_what_jit_compile_auto_does():
    builder = elementwise_loop()
    builder.thread("collective_ops/9").event("CollectiveReduceV2:CollectiveReduceV2", 0, 10)
    builder.thread("python").event("Profiled batch", 0, 5, step_num=1)
    fix = findings_by_id(report_of(builder))["fusion.elementwise_kernels"]["fix"]
    assert fix.startswith("This run uses a tf.distribute strategy (collective_ops threads, CollectiveReduceV2 ops)")
    assert "does not use XLA under a tf.distribute strategy: pass jit_compile=True explicitly" in fix
    keras_alone = elementwise_loop()
    keras_alone.thread("python").event("Profiled batch", 0, 5, step_num=1)
    fix = findings_by_id(report_of(keras_alone))["fusion.elementwise_kernels"]["fix"]
    assert fix.startswith('Keras 3\'s default model.compile(jit_compile="auto") uses XLA on a GPU (not on CPU')


def test_no_fusion_advice_when_xla_is_already_used():
    assert "fusion.elementwise_kernels" not in findings_by_id(report_of(elementwise_loop(name="loop_add_fusion_3")))
    assert "fusion.elementwise_kernels" not in findings_by_id(report_of(elementwise_loop(jax_version="0.4.30")))


def test_utilization_rules_are_quiet_on_the_healthy_trace():
    found = findings_by_id(report_of(healthy()))
    assert not {"batch.gpu_underused", "precision.fp32_matmul", "fusion.elementwise_kernels"} & set(found)


def test_mixed_precision_model_from_the_roofline_keeps_each_kernels_efficiency():
    """A kernel of 2 GFLOP and 64 MB taking 1 ms: on its 19.5 TFLOP/s roof it needs max(102.6 us, 31.4 us at
    2039 GB/s) = 102.6 us, 10.3% efficiency; in 16 bits max(6.4 us, 15.7 us for half the bytes) = 15.7 us, at
    that efficiency 152.6 us. Kernels without FLOPs convert at the costed ones' ratio where those hold at least
    half of the time (a model), else the estimate is a bound."""
    from tb_gpu_advisor.whatif.precision import MatmulKernel, converted_ms, mixed_precision

    kernel = MatmulKernel(1.0, 2e9, 64e6)
    new, modelled = converted_ms(kernel, 19.5, 312.0, 2039.0)
    old_roof = max(2e9 / 19.5e12, 64e6 / 2039e9)
    new_roof = max(2e9 / 312e12, 32e6 / 2039e9)
    assert modelled and new == pytest.approx(new_roof / (old_roof / 1e-3) * 1e3)
    estimate = mixed_precision(10.0, 1.0, [kernel], 19.5, 312.0, 2039.0)
    assert estimate.kind == "model" and estimate.new_step_ms == pytest.approx(9.0 + new)
    half = mixed_precision(10.0, 2.0, [kernel, MatmulKernel(1.0, None, None)], 19.5, 312.0, 2039.0)
    assert half.kind == "model" and half.new_step_ms == pytest.approx(8.0 + 2.0 * new)
    unknown = mixed_precision(10.0, 3.0, [kernel, MatmulKernel(2.0, None, None)], 19.5, 312.0, 2039.0)
    assert unknown.kind == "bound"
    assert mixed_precision(10.0, 1.0, [kernel], None, 312.0, 2039.0) is None


def test_mixed_precision_reaches_at_most_what_16_bit_gemms_commonly_reach():
    """A 32-bit GEMM of 60 GFLOP at 90% of the 66.9 TFLOP/s fp32 roof: in 16 bits it keeps 90% only up to the
    `reachable` 70% of the 989.4 TFLOP/s matrix roof (86.6 us, not 67.4 us). 2 ms of 32-bit element-wise kernels
    move 16-bit activations: half their time."""
    from tb_gpu_advisor.whatif.precision import MatmulKernel, converted_ms, mixed_precision

    time_ms = 60e9 / (0.9 * 66.9e12) * 1e3
    kernel = MatmulKernel(time_ms, 60e9, 1e6)
    capped, _ = converted_ms(kernel, 66.9, 989.4, 4800.0, 0.7)
    assert capped == pytest.approx(60e9 / (0.7 * 989.4e12) * 1e3)
    assert converted_ms(kernel, 66.9, 989.4, 4800.0)[0] == pytest.approx(60e9 / (0.9 * 989.4e12) * 1e3)
    estimate = mixed_precision(20.0, time_ms, [kernel], 66.9, 989.4, 4800.0, 0.7, vector_ms=2.0)
    assert estimate.kind == "model" and estimate.new_step_ms == pytest.approx(20.0 - time_ms + capped - 1.0)
    assert "32-bit element-wise kernels (2 ms)" in estimate.basis


def test_fused_element_wise_kernels_move_their_bytes_at_memory_bandwidth():
    """Two element-wise rows of 1 ms each moving 100 MB and 400 MB on a 2000 GB/s GPU: fused, 0.05 + 0.2 ms; with
    4 ms of such time in a 10 ms step, 4 * (1 - 0.25 / 2) = 3.5 ms saved (a model). Unknown bytes: no model."""
    from tb_gpu_advisor.whatif.fusion import fused

    estimate = fused(10.0, 4.0, [(1.0, 100e6), (1.0, 400e6)], 2000.0)
    assert estimate.kind == "model" and estimate.new_step_ms == pytest.approx(6.5)
    assert fused(10.0, 4.0, [(1.0, None)], 2000.0) is None
    assert fused(10.0, 4.0, [(1.0, 1e12)], 2000.0).new_step_ms == pytest.approx(10.0)  # never slower than now


def test_element_wise_kernels_between_matmuls_fuse_into_little():
    """Each element-wise kernel alone between two GEMMs on the stream: fusing them joins nothing, the model keeps
    their time (they move their own bytes), so no fusion finding sizes them as removable."""
    builder = TraceBuilder()
    python = builder.thread("python")
    gpu = builder.gpu(0)
    for start in step_starts(python):
        t = start
        for _ in range(50):
            gpu.kernel(EIGEN, t, 80, **SMALL)
            gpu.kernel("volta_sgemm_128x64_nn", t + 90, 100)
            t += 200
    assert "fusion.elementwise_kernels" not in findings_by_id(report_of(builder))
