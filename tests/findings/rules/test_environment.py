from tb_gpu_advisor.findings.rules.environment import cuda_version
from tb_gpu_advisor.testing import TraceBuilder
from tests.findings.scenarios import findings_by_id, healthy, kernels, report_of, step_starts

BF16_KERNEL = "void cutlass::Kernel<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn_align8>(Params)"


def busy(compute_capability=(8, 0), name=None, **metadata):
    builder = TraceBuilder()
    python = builder.thread("python")
    gpu = builder.gpu(0, compute_capability=compute_capability)
    if metadata:
        builder.metadata(**metadata)
    for start in step_starts(python):
        kernels(gpu, start, 9_900, **({"name": name} if name else {}))
    return builder


def test_cuda_version_formats():
    assert cuda_version("12020") == (12, 2)
    assert cuda_version(11080) == (11, 8)
    assert cuda_version("12.4.131") == (12, 4)
    assert cuda_version("unknown") is None


def test_bf16_on_a_gpu_without_bf16_tensor_cores():
    finding = findings_by_id(report_of(busy((7, 0), BF16_KERNEL)))["environment.bf16_without_hardware"]
    assert finding["evidence"]["metrics"] == {"bf16_kernel_ms": 39.6, "compute_capability": "7.0"}
    assert finding["category"] == "precision"
    assert finding["estimated_speedup"] == 1.98
    assert "environment.bf16_without_hardware" not in findings_by_id(report_of(busy((8, 0), BF16_KERNEL)))


def test_cuda_older_than_the_gpu():
    finding = findings_by_id(report_of(busy((9, 0), cuda_runtime_version="11070")))["environment.cuda_older_than_gpu"]
    assert finding["severity"] == "medium" and finding["estimated_speedup"] == 1.0
    assert finding["evidence"]["threshold"]["value"] == "11.7"
    assert finding["evidence"]["threshold"]["level"] == "11.8"
    assert "environment.cuda_older_than_gpu" not in findings_by_id(report_of(busy((9, 0), cuda_version="12020")))


def test_driver_older_than_runtime():
    report = report_of(busy(cuda_runtime_version="12040", cuda_driver_version="12020"))
    finding = findings_by_id(report)["environment.driver_older_than_runtime"]
    assert finding["summary"] == "The driver supports CUDA 12.2, older than the CUDA 12.4 runtime in use."
    assert finding["evidence"]["metrics"] == {"cuda_driver_version": "12020", "cuda_runtime_version": "12040"}
    assert finding["estimated_speedup"] == 1.0
    assert report["summary"]["bottleneck"] == "none"  # a compatibility note is not a bottleneck


def test_environment_rules_are_quiet_on_the_healthy_trace():
    assert not [key for key in findings_by_id(report_of(healthy())) if key.startswith("environment.")]
