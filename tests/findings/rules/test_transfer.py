from tb_gpu_advisor.testing import TraceBuilder
from tests.findings.scenarios import findings_by_id, healthy, kernels, report_of, step_starts


def copy_loop(copy, step_us=10_000):
    """4 steps of 10 ms: `copy(gpu, start)` returns when the copies end (GPU idle meanwhile), then compute."""
    builder = TraceBuilder()
    python = builder.thread("python")
    gpu = builder.gpu(0)
    for start in step_starts(python, step_us=step_us):
        end = copy(gpu, start)
        kernels(gpu, end, start + step_us - end)
    return builder


def test_pageable_copies():
    def copy(gpu, start):
        gpu.memcpy("h2d", start, 2_000, 16_000_000, src="pageable", dst="device")
        return start + 2_000

    found = findings_by_id(report_of(copy_loop(copy)))
    finding = found["transfer.pageable_memory"]
    assert finding["evidence"]["metrics"] == {
        "pageable_copies": 4,
        "pageable_bytes": 64_000_000,
        "pageable_copy_ms": 8.0,
        "exposed_ms": 8.0,
        "exposed_pct": 20.0,
    }
    assert finding["summary"].startswith("4 copies (61.04 MiB) use pageable host memory")  # binary, as the tables
    assert finding["summary"].endswith("they run while no GPU computes for 2.00 ms per step.")
    # The fix overlaps the copies with compute: its ceiling is all 2 ms of exposed copy time of the 10 ms step.
    assert finding["severity"] == "high" and finding["estimated_speedup"] == 1.25
    assert finding["speedup_kind"] == "bound"
    # Pinning alone, a model under an assumed rate: 16 MB in 2 ms (8 GB/s) at the A100's practical PCIe rate of
    # 24 GB/s takes 0.667 ms, 1.333 ms saved of 10.
    assert "pinning alone is about 1.15x (if the link runs at the assumed 24 GB/s" in finding["speedup_basis"]
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


def test_pageable_copies_are_not_a_link_problem():
    """A pageable copy's rate is its staging's: transfer.pageable_memory names it, the link is not in question."""

    def copy(gpu, start):
        gpu.memcpy("h2d", start, 2_000, 4_000_000, src="pageable", is_async=False)
        return start + 2_000

    found = findings_by_id(report_of(copy_loop(copy)))
    assert "transfer.pageable_memory" in found and "transfer.low_bandwidth" not in found


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
    # the host does its own work through the idle (2 ms of print_loss per step): the read serialized that work
    # with the GPU, and the finding says the idle is the host's, not the copy's
    assert (metrics["stall_host_blocked_ms"], metrics["stall_host_dispatch_ms"]) == (0.0, 8.0)
    assert finding["title"] == "Reading results back each step serializes the host's dispatch with the GPU"
    assert "100% of it is the host's work on the next call once it has the value" in finding["summary"]
    assert "about the longer of the host's dispatch and the GPU's work" in finding["fix"]
    assert report["summary"]["verdict"].startswith(
        "Host-bound: reading results back each step serializes the host's dispatch with the GPU (up to 20% of"
    )


def test_device_to_host_read_the_host_still_waits_for_stalls_the_gpu():
    """The host stays blocked on the read (a synchronize that returns 1.5 ms after the copy) for most of the idle:
    the read itself stalls the GPU, and the finding says so."""
    builder = TraceBuilder()
    python = builder.thread("python")
    gpu = builder.gpu(0)
    for start in step_starts(python):
        end = kernels(gpu, start, 4_000)
        gpu.memcpy("d2h", end, 100, 4, src="device", dst="pinned")
        python.event("cudaStreamSynchronize", end - 1_000, 2_600)
        python.event("print_loss", end + 1_600, 500)
        kernels(gpu, end + 2_100, 3_900)
    report = report_of(builder)
    finding = findings_by_id(report)["transfer.d2h_sync_in_step"]
    metrics = finding["evidence"]["metrics"]
    assert (metrics["stall_ms"], metrics["stall_host_blocked_ms"], metrics["stall_host_dispatch_ms"]) == (8.0, 6.0, 2.0)
    assert finding["title"] == "Device-to-host reads stall the GPU inside the step"
    assert finding["summary"].endswith("until the host sends more work.")
    assert report["summary"]["verdict"].startswith("Host-bound: device-to-host reads stall the GPU inside the step")


def test_transfer_rules_are_quiet_on_the_healthy_trace():
    assert not [f for f in report_of(healthy())["findings"] if f["category"] in ("transfer", "sync")]


MIB = 1024 * 1024


def test_pageable_copies_at_a_quarter_of_the_link_run_at_link_speed_pinned():
    """64 MiB pageable copies at a quarter of the A100's 24 GB/s: pinned, each takes the link-speed time."""
    link_us = 64 * MIB / 24e9 * 1e6  # 2796.2 us

    def copy(gpu, start):
        gpu.memcpy("h2d", start, 4 * link_us, 64 * MIB, src="pageable", dst="device")
        return start + 4 * link_us

    finding = findings_by_id(report_of(copy_loop(copy, step_us=20_000)))["transfer.pageable_memory"]
    new_step_ms = 20.0 - 3 * link_us / 1000  # the copy shrinks from 4x to 1x the link-speed time: 11.61 ms
    assert f"pinning alone is about {20.0 / new_step_ms:.2f}x" in finding["speedup_basis"]
    assert round(20.0 / new_step_ms, 2) == 1.72
    # the bound: all 11.18 ms of exposed copy time overlapped
    assert finding["estimated_speedup"] == round(20.0 / (20.0 - 4 * link_us / 1000), 2) == 2.27
    assert finding["speedup_kind"] == "bound"


def test_pageable_copies_run_at_the_best_pinned_rate_the_trace_reached():
    """The same trace with one pinned 64 MiB copy per step at 16 GB/s: the model uses that rate, not the link's."""
    pinned_us = 64 * MIB / 16e9 * 1e6
    pageable_us = 64 * MIB / 4e9 * 1e6

    def copy(gpu, start):
        gpu.memcpy("h2d", start, pageable_us, 64 * MIB, src="pageable", dst="device")
        gpu.memcpy("h2d", start + pageable_us, pinned_us, 64 * MIB, src="pinned", dst="device", is_async=True)
        return start + pageable_us + pinned_us

    finding = findings_by_id(report_of(copy_loop(copy, step_us=30_000)))["transfer.pageable_memory"]
    new_step_ms = 30.0 - (pageable_us - pinned_us) / 1000
    assert round(30.0 / new_step_ms, 2) == 1.72
    assert "pinning alone is about 1.72x (the pageable copies at 16 GB/s" in finding["speedup_basis"]
    # the bound: all of the pageable copies' exposed time (16.78 ms of 30) overlapped
    assert finding["estimated_speedup"] == round(30.0 / (30.0 - pageable_us / 1000), 2) == 2.27
    assert finding["speedup_kind"] == "bound"


def test_jax_batch_staged_on_the_host_while_the_gpu_idles():
    """JAX given a NumPy batch: each 10 ms step, PJRT's `H2D Dispatch` stages it on the host for 3 ms while the
    GPU idles, then a 1 ms copy and compute. The staging is the cause (a bound: its 3 ms of GPU idle removed), and
    the loss read's stall leaves that time to it."""
    builder = TraceBuilder()
    builder.metadata(jax_version="0.4.30")
    python = builder.thread("python")
    gpu = builder.gpu(0)
    for start in step_starts(python):
        python.event("PjitFunction(step)", start, 9_800)
        python.event("H2D Dispatch", start + 100, 3_000)
        gpu.memcpy("h2d", start + 3_100, 1_000, 64_000_000, src="device", dst="device")
        kernels(gpu, start + 4_100, 5_700)
    finding = findings_by_id(report_of(builder))["transfer.pageable_memory"]
    assert finding["evidence"]["metrics"]["host_staging_events"] == 4
    assert finding["evidence"]["metrics"]["exposed_ms"] == 12.0  # 3 ms of GPU idle in each of 4 steps
    assert "H2D Dispatch" in finding["summary"] and "jax.device_put" in finding["fix"]
    assert finding["estimated_speedup"] == round(10 / 7, 2)


def test_a_d2h_read_is_no_stall_when_the_next_work_was_queued_or_other_streams_ran(kineto_models):
    """v100_2rank_test: the GPU idles 27.1 ms in the steps, 26.3 ms of it with the next work already queued
    (idle attribution: device_wait), and most D2H copies end while other streams still run: no host-late idle
    after a read, so no stall finding (it claimed 32.6 ms, more than all the GPU's idle time)."""
    from tb_gpu_advisor.pipeline import host_report

    report = host_report(kineto_models["v100_2rank_test"])
    (gpu,) = report["idle_attribution"]["gpus"]
    assert gpu["cause_ms"]["device_wait"] > 0.9 * gpu["idle_ms"]
    assert "transfer.d2h_sync_in_step" not in findings_by_id(report)


def test_the_stall_after_a_copy_that_did_not_leave_the_gpu_idle_is_not_counted():
    """A D2H copy on its own stream ends while a kernel on the compute stream still runs: the gap that follows
    the kernel is not the copy's."""
    builder = TraceBuilder()
    python = builder.thread("python")
    gpu = builder.gpu(0)
    for start in step_starts(python):
        end = kernels(gpu, start, 4_000)
        gpu.memcpy("d2h", end - 1_000, 100, 4, src="device", dst="pinned", stream=9)
        python.event("print_loss", end + 100, 2_000)
        kernels(gpu, end + 2_100, 3_900)
    assert "transfer.d2h_sync_in_step" not in findings_by_id(report_of(builder))
