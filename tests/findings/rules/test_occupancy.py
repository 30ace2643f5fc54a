from tb_gpu_advisor.testing import TraceBuilder
from tests.findings.scenarios import findings_by_id, healthy, kernels, report_of, step_starts

REDUCE = "void my_reduce_kernel<float>(float const*, float*, int)"


def loop(name, **config):
    builder = TraceBuilder()
    python = builder.thread("python")
    gpu = builder.gpu(0)
    for start in step_starts(python):
        end = kernels(gpu, start, 8_000, name=name, **config)
        kernels(gpu, end, 1_900)
    return builder


def test_low_occupancy_names_the_limiter():
    builder = loop(REDUCE, grid=(4096, 1, 1), block=(256, 1, 1), registers=128, occupancy_pct=12.5)
    finding = findings_by_id(report_of(builder))["occupancy.low_occupancy"]
    assert finding["evidence"]["metrics"]["per_kernel"] == [{
        "kernel": REDUCE, "share_of_kernel_time_pct": 80.81, "occupancy_pct": 12.5, "occupancy_source": "recorded",
        "limiter": "registers", "registers_per_thread": 128, "shared_memory_bytes": 0, "threads_per_block": 256}]
    assert finding["recoverable_ms"] == 16.0  # 32 ms of the kernel, at most half of it
    assert finding["estimated_speedup"] == 1.67
    assert finding["severity"] == "high"
    assert finding["evidence"]["pointers"]["kernels"] == [REDUCE]


def test_occupancy_is_computed_for_old_traces_without_it():
    builder = TraceBuilder(legacy=True)
    python = builder.thread("python")
    gpu = builder.gpu(0, compute_capability=(7, 0), sm_count=80)
    for index, start in enumerate(step_starts(python)):
        gpu.step_marker(index, start, 10_000)
        gpu.kernel(REDUCE, start, 8_000, grid=(4096, 1, 1), block=(64, 1, 1), registers=255, group_id=index)
        gpu.kernel("volta_h884gemm_128x128_ldg8_nn", start + 8_000, 1_900, grid=(640, 1, 1), block=(256, 1, 1),
                   registers=200, group_id=index)
    finding = findings_by_id(report_of(builder))["occupancy.low_occupancy"]
    row = finding["evidence"]["metrics"]["per_kernel"][0]
    assert (row["occupancy_pct"], row["occupancy_source"], row["limiter"]) == (12.5, "computed", "registers")


def test_tensor_core_gemms_are_not_flagged_for_low_occupancy():
    found = findings_by_id(report_of(healthy()))
    assert "occupancy.low_occupancy" not in found and "occupancy.tiny_grid" not in found


def test_tiny_grid():
    builder = loop(REDUCE, grid=(4, 1, 1), block=(1024, 1, 1), registers=32, occupancy_pct=50.0)
    finding = findings_by_id(report_of(builder))["occupancy.tiny_grid"]
    assert finding["evidence"]["metrics"]["per_kernel"] == [
        {"kernel": REDUCE, "share_of_kernel_time_pct": 80.81, "blocks": 4, "sm_count": 108}]
    assert finding["evidence"]["threshold"] == {"metric": "blocks", "value": 4, "direction": "below", "level": 108,
                                                "min_share_of_kernel_time_pct": 5.0}
    assert finding["estimated_speedup"] == 1.67
    assert "occupancy.low_occupancy" not in findings_by_id(report_of(builder))
