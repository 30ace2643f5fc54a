from tb_gpu_advisor.testing import TraceBuilder
from tests.findings.scenarios import (CUSTOM, EIGEN, SGEMM, findings_by_id, healthy, kernels, report_of,
                                      step_starts)

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
    assert finding["evidence"]["metrics"] == {"gpu_busy_pct": 10.0, "kernel_mean_us": 10.0, "gpu_idle_ms": 36.0,
                                              "recoverable_pct": 45.0}
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


def fp32_loop(compute_capability=(8, 0)):
    builder = TraceBuilder()
    python = builder.thread("python")
    gpu = builder.gpu(0, compute_capability=compute_capability)
    for start in step_starts(python):
        end = kernels(gpu, start, 8_000, name=SGEMM, grid=(432, 1, 1), block=(256, 1, 1), registers=120,
                      occupancy_pct=25.0, tf_op="model/dense/MatMul:MatMul")
        kernels(gpu, end, 1_900)
    return builder


def test_fp32_matmul_on_a_tensor_core_gpu():
    report = report_of(fp32_loop())
    finding = findings_by_id(report)["precision.fp32_matmul"]
    assert finding["evidence"]["metrics"] == {
        "fp32_matmul_ms": 32.0, "fp32_matmul_share_of_kernel_time_pct": 80.81, "compute_16bit_share_pct": 19.19,
        "compute_capability": "8.0", "recoverable_pct": 40.0}
    assert finding["evidence"]["pointers"]["kernels"] == [SGEMM]
    assert finding["severity"] == "high"
    assert finding["estimated_speedup"] == 1.67
    assert "mixed_float16" in finding["fix"] and "jnp.bfloat16" in finding["fix"]
    assert report["summary"]["bottleneck"] == "kernel"
    assert report["summary"]["verdict"] == ("Kernel-bound: the GPU computes 99% of each step, and matrix math runs "
                                            "in 32-bit on a Tensor Core GPU (up to 40% of the step recoverable).")


def test_no_precision_advice_without_tensor_cores():
    found = findings_by_id(report_of(fp32_loop(compute_capability=(6, 0))))
    assert "precision.fp32_matmul" not in found
    assert found["environment.no_tensor_cores"]["severity"] == "low"
    assert found["environment.no_tensor_cores"]["estimated_speedup"] == 1.0
    assert found["environment.no_tensor_cores"]["evidence"]["metrics"] == {"compute_capability": "6.0"}


def elementwise_loop(name=EIGEN, **metadata):
    builder = TraceBuilder()
    python = builder.thread("python")
    gpu = builder.gpu(0)
    if metadata:
        builder.metadata(**metadata)
    for start in step_starts(python):
        kernels(gpu, start, 8_990, name=name, count=100, gap_us=10.0, launch_thread=python, **SMALL)
    return builder


def test_many_elementwise_kernels_suggest_xla():
    report = report_of(elementwise_loop())
    finding = findings_by_id(report)["fusion.elementwise_kernels"]
    assert finding["evidence"]["metrics"] == {
        "elementwise_kernels_per_step": 100.0, "elementwise_ms": 32.0, "elementwise_share_of_kernel_time_pct": 100.0,
        "elementwise_kernel_mean_us": 80.0, "recoverable_pct": 40.0}
    assert finding["severity"] == "high"
    assert finding["estimated_speedup"] == 1.67
    assert "jit_compile=True" in finding["fix"] and "jax.jit" in finding["fix"]
    assert report["summary"]["bottleneck"] == "kernel"


def test_no_fusion_advice_when_xla_is_already_used():
    assert "fusion.elementwise_kernels" not in findings_by_id(report_of(elementwise_loop(name="loop_add_fusion_3")))
    assert "fusion.elementwise_kernels" not in findings_by_id(report_of(elementwise_loop(jax_version="0.4.30")))


def test_utilization_rules_are_quiet_on_the_healthy_trace():
    found = findings_by_id(report_of(healthy()))
    assert not {"batch.gpu_underused", "precision.fp32_matmul", "fusion.elementwise_kernels"} & set(found)
