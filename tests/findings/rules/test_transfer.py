from tb_gpu_advisor.testing import TraceBuilder
from tests.findings.scenarios import findings_by_id, healthy, kernels, report_of, step_starts


def copy_loop(copy):
    """4 steps of 10 ms: `copy(gpu, start)` returns when the copies end (GPU idle meanwhile), then compute."""
    builder = TraceBuilder()
    python = builder.thread("python")
    gpu = builder.gpu(0)
    for start in step_starts(python):
        end = copy(gpu, start)
        kernels(gpu, end, start + 10_000 - end)
    return builder


def test_pageable_copies():
    def copy(gpu, start):
        gpu.memcpy("h2d", start, 2_000, 16_000_000, src="pageable", dst="device")
        return start + 2_000

    found = findings_by_id(report_of(copy_loop(copy)))
    finding = found["transfer.pageable_memory"]
    assert finding["evidence"]["metrics"] == {"pageable_copies": 4, "pageable_bytes": 64_000_000,
                                              "pageable_copy_ms": 8.0, "exposed_ms": 8.0, "exposed_pct": 20.0}
    assert finding["severity"] == "high" and finding["estimated_speedup"] == 1.25
    assert "jax.device_put" in finding["fix"] and "prefetch_to_device" in finding["fix"]
    # pageable copies are synchronous anyway: the sync rule leaves them to this one
    assert "transfer.sync_copies" not in found and "transfer.low_bandwidth" not in found


def test_synchronous_pinned_copies():
    def copy(gpu, start):
        gpu.memcpy("h2d", start, 2_000, 16_000_000, src="pinned", dst="device", is_async=False)
        return start + 2_000

    finding = findings_by_id(report_of(copy_loop(copy)))["transfer.sync_copies"]
    assert finding["category"] == "sync"
    assert finding["evidence"]["metrics"]["sync_copies"] == 4
    assert finding["estimated_speedup"] == 1.25


def test_many_small_copies():
    def copy(gpu, start):
        for index in range(50):
            gpu.memcpy("h2d", start + 10 * index, 10, 4_096, src="pinned", is_async=True)
        return start + 500

    finding = findings_by_id(report_of(copy_loop(copy)))["transfer.small_copies"]
    metrics = finding["evidence"]["metrics"]
    assert metrics["small_copies_per_step"] == 50.0
    assert metrics["small_copy_bytes"] == 800 * 1024
    assert metrics["exposed_ms"] == 2.0 and metrics["exposed_pct"] == 5.0
    assert finding["severity"] == "medium" and finding["estimated_speedup"] == 1.05


def test_low_bandwidth_of_large_copies():
    def copy(gpu, start):
        gpu.memcpy("h2d", start, 2_000, 4_000_000, src="pinned", is_async=True)
        return start + 2_000

    finding = findings_by_id(report_of(copy_loop(copy)))["transfer.low_bandwidth"]
    metrics = finding["evidence"]["metrics"]
    assert (metrics["achieved_gbps"], metrics["expected_link_gbps"]) == (2.0, 24.0)
    assert finding["recoverable_ms"] == 7.333  # 8 ms exposed * (1 - 2/24)
    assert finding["estimated_speedup"] == 1.22


def test_device_to_host_read_then_gpu_idle():
    builder = TraceBuilder()
    python = builder.thread("python")
    gpu = builder.gpu(0)
    for start in step_starts(python):
        end = kernels(gpu, start, 4_000)
        gpu.memcpy("d2h", end, 100, 4, src="device", dst="pinned")
        python.event("print_loss", end + 100, 2_000)
        kernels(gpu, end + 2_100, 3_900)
    report = report_of(builder)
    finding = findings_by_id(report)["transfer.d2h_sync_in_step"]
    metrics = finding["evidence"]["metrics"]
    assert (metrics["d2h_copies_per_step"], metrics["stalls_after_d2h"], metrics["stall_ms"]) == (1.0, 4, 8.0)
    assert finding["severity"] == "high" and finding["estimated_speedup"] == 1.25
    assert finding["evidence"]["pointers"]["time_ranges_ms"] == [[5.1, 7.1], [15.1, 17.1], [25.1, 27.1]]


def test_transfer_rules_are_quiet_on_the_healthy_trace():
    assert not [f for f in report_of(healthy())["findings"] if f["category"] in ("transfer", "sync")]
