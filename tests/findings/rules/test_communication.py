from tb_gpu_advisor.testing import TraceBuilder
from tests.findings.scenarios import findings_by_id, healthy, kernels, report_of, step_starts

NCCL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
NCCL_CONFIG = dict(grid=(8, 1, 1), block=(640, 1, 1), registers=96, occupancy_pct=31.25)


def test_exposed_all_reduce():
    builder = TraceBuilder()
    python = builder.thread("python")
    for start in step_starts(python):
        for ordinal in range(2):
            gpu = builder.gpu(ordinal)
            end = kernels(gpu, start, 6_000)
            kernels(gpu, end, 3_000, name=NCCL, stream=20, **NCCL_CONFIG)
    report = report_of(builder)
    finding = findings_by_id(report)["communication.allreduce_exposed"]
    metrics = finding["evidence"]["metrics"]
    assert (metrics["collectives_exposed_pct"], metrics["collectives_exposed_ms_per_step"]) == (30.0, 3.0)
    assert (metrics["nccl_ms"], metrics["nccl_overlap_with_compute_pct"]) == (24.0, 0.0)
    assert finding["severity"] == "high" and finding["estimated_speedup"] == 1.43
    assert "NcclAllReduce" in finding["fix"] and "MultiWorkerMirroredStrategy" in finding["fix"]
    assert report["summary"]["bottleneck"] == "communication"


def test_all_reduce_overlapped_with_compute_is_quiet():
    builder = TraceBuilder()
    python = builder.thread("python")
    for start in step_starts(python):
        for ordinal in range(2):
            gpu = builder.gpu(ordinal)
            kernels(gpu, start, 9_500)
            kernels(gpu, start + 6_000, 3_000, name=NCCL, stream=20, **NCCL_CONFIG)
    assert "communication.allreduce_exposed" not in findings_by_id(report_of(builder))


def test_straggler_gpu():
    builder = TraceBuilder()
    python = builder.thread("python")
    for start in step_starts(python):
        kernels(builder.gpu(0), start, 8_000)
        end = kernels(builder.gpu(1), start, 4_000)
        kernels(builder.gpu(1), end, 4_000, name=NCCL, stream=20, **NCCL_CONFIG)  # waits for GPU 0
    finding = findings_by_id(report_of(builder))["communication.gpu_imbalance"]
    metrics = finding["evidence"]["metrics"]
    assert (metrics["compute_pct_spread"], metrics["compute_pct_mean"]) == (40.0, 60.0)
    assert [row["compute_pct"] for row in metrics["per_gpu"]] == [80.0, 40.0]
    assert [row["nccl_ms"] for row in metrics["per_gpu"]] == [0.0, 16.0]
    assert finding["recoverable_ms"] == 8.0 and finding["estimated_speedup"] == 1.25
    assert finding["evidence"]["pointers"]["devices"] == ["/device:GPU:1", "/device:GPU:0"]


def test_multi_gpu_rules_are_quiet_on_the_healthy_trace():
    assert not [f for f in report_of(healthy())["findings"] if f["category"] == "communication"]
