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
    assert finding["evidence"]["metrics"]["per_kernel"] == [
        {
            "kernel": REDUCE,
            "share_of_kernel_time_pct": 80.81,
            "occupancy_pct": 12.5,
            "occupancy_source": "recorded",
            "limiter": "registers",
            "registers_per_thread": 128,
            "shared_memory_bytes": 0,
            "threads_per_block": 256,
            "at_most_faster": 4.0,
        }
    ]
    # 32 ms of the kernel in a 40 ms window; at 50% occupancy it takes at least 32 x 12.5/50 = 8 ms: the window
    # falls at most to 16 ms (no cap at half the kernel's time)
    assert finding["recoverable_ms"] == 24.0
    assert (finding["estimated_speedup"], finding["speedup_kind"]) == (2.5, "bound")
    assert finding["speedup_basis"] == (
        "upper bound: with occupancy raised to 50%, throughput grows at most in proportion to the resident warps, "
        "so each kernel's time falls at most to time × occupancy / 50% (up to 4.00× faster for "
        "my_reduce_kernel<...> at 12.5%)"
    )
    assert finding["severity"] == "high"
    assert finding["evidence"]["pointers"]["kernels"] == [REDUCE]


def test_occupancy_is_computed_for_old_traces_without_it():
    builder = TraceBuilder(legacy=True)
    python = builder.thread("python")
    gpu = builder.gpu(0, compute_capability=(7, 0), sm_count=80)
    for index, start in enumerate(step_starts(python)):
        gpu.step_marker(index, start, 10_000)
        gpu.kernel(REDUCE, start, 8_000, grid=(4096, 1, 1), block=(64, 1, 1), registers=255, group_id=index)
        gpu.kernel(
            "volta_h884gemm_128x128_ldg8_nn",
            start + 8_000,
            1_900,
            grid=(640, 1, 1),
            block=(256, 1, 1),
            registers=200,
            group_id=index,
        )
    finding = findings_by_id(report_of(builder))["occupancy.low_occupancy"]
    row = finding["evidence"]["metrics"]["per_kernel"][0]
    assert (row["occupancy_pct"], row["occupancy_source"], row["limiter"]) == (12.5, "computed", "registers")


def test_tensor_core_gemms_are_not_flagged_for_low_occupancy():
    found = findings_by_id(report_of(healthy()))
    assert "occupancy.low_occupancy" not in found and "occupancy.tiny_grid" not in found


def test_tiny_grid():
    builder = loop(REDUCE, grid=(4, 1, 1), block=(1024, 1, 1), registers=32, occupancy_pct=50.0)
    report = report_of(builder)
    finding = findings_by_id(report)["occupancy.tiny_grid"]
    assert finding["evidence"]["metrics"]["per_kernel"] == [
        {"kernel": REDUCE, "share_of_kernel_time_pct": 80.81, "blocks": 4, "sm_count": 108, "modeled_faster": 27.0}
    ]
    assert finding["evidence"]["threshold"] == {
        "metric": "blocks",
        "value": 4,
        "direction": "below",
        "level": 108,
        "min_share_of_kernel_time_pct": 5.0,
    }
    # 32 ms of the kernel in a 40 ms window spread over 108 SMs: 32 x 4/108 = 1.185 ms, so the window is
    # 40 - 32 x 104/108 = 9.185 ms (no cap at half the kernel's time)
    assert finding["recoverable_ms"] == 30.815
    assert (finding["estimated_speedup"], finding["speedup_kind"]) == (4.35, "model")
    assert finding["speedup_basis"] == (
        "model: each kernel relaunched with at least one block per SM, its work spread over all 108 SMs at its "
        "current rate per SM (time × blocks / 108, no launch shorter than 2 µs); the step loses the kernel time "
        "saved and keeps the rest. More resident warps per SM (larger blocks, fewer registers) can do better still"
    )
    assert "occupancy.low_occupancy" not in findings_by_id(report)


def test_a_one_block_kernel_is_named_and_no_launch_gets_shorter_than_a_launch_costs():
    """A single block over 108 SMs would run 108x faster; a 20 us launch stops at MIN_KERNEL_US (2 us): 10x."""
    builder = TraceBuilder()
    python = builder.thread("python")
    gpu = builder.gpu(0)
    for start in step_starts(python):
        end = kernels(
            gpu,
            start,
            8_000,
            name=REDUCE,
            count=400,
            grid=(1, 1, 1),
            block=(256, 1, 1),
            registers=32,
            occupancy_pct=50.0,
        )
        kernels(gpu, end, 1_900)
    finding = findings_by_id(report_of(builder))["occupancy.tiny_grid"]
    assert finding["evidence"]["metrics"]["per_kernel"][0]["modeled_faster"] == 10.0
    assert finding["recoverable_ms"] == 28.8  # 32 ms x (1 - 2/20)
    assert finding["speedup_basis"].endswith(
        ". my_reduce_kernel<...> launches a single block, often a serial pass by design (a final reduction, a "
        "scan): the model holds only where its work splits into blocks"
    )


def test_a_kernel_without_a_recorded_launch_shape_is_not_a_tiny_grid():
    """The readers write 1 x 1 x 1 where the trace gives no grid or block (Kineto on ROCm)."""
    builder = loop(REDUCE, grid=(1, 1, 1), block=(1, 1, 1), registers=0)
    assert "occupancy.tiny_grid" not in findings_by_id(report_of(builder))


def test_a_grid_smaller_than_the_sms_is_a_tiny_grid_not_low_occupancy():
    """16 one-warp blocks on 108 SMs: each SM holds one block at most, whatever its 168 registers allow, so the
    register-limited occupancy (18.75%) cannot be reached and raising it would change nothing: only the tiny
    grid is flagged. With 216 blocks the registers are the limit again."""
    found = findings_by_id(
        report_of(loop(REDUCE, grid=(16, 1, 1), block=(32, 1, 1), registers=168, occupancy_pct=18.75))
    )
    assert "occupancy.tiny_grid" in found and "occupancy.low_occupancy" not in found
    tiny = found["occupancy.tiny_grid"]
    # tiny grid: 40 - 32 x 92/108 = 12.741 ms
    assert (tiny["recoverable_ms"], tiny["estimated_speedup"], tiny["speedup_kind"]) == (27.259, 3.14, "model")
    wide = findings_by_id(
        report_of(loop(REDUCE, grid=(216, 1, 1), block=(32, 1, 1), registers=168, occupancy_pct=18.75))
    )
    assert "occupancy.low_occupancy" in wide and "occupancy.tiny_grid" not in wide
    # low occupancy: 40 - 32 x (1 - 18.75/50) = 20 ms
    low = wide["occupancy.low_occupancy"]
    assert (low["recoverable_ms"], low["estimated_speedup"], low["speedup_kind"]) == (20.0, 2.0, "bound")


def test_a_launch_bound_step_keeps_the_time_the_gpu_waited_for_launches():
    """Each 1 ms kernel is launched 10 us before it starts, 90 us after the one before it ended: the GPU waits for
    the host, so a shorter kernel only lengthens the wait; only the step's last kernel ends the step sooner."""
    builder = TraceBuilder()
    python = builder.thread("python")
    launcher = builder.thread("launcher")
    gpu = builder.gpu(0)
    for start in step_starts(python):
        kernels(
            gpu,
            start,
            9_800,
            name=REDUCE,
            count=9,
            gap_us=100.0,
            launch_thread=launcher,
            launch_ahead_us=10,
            grid=(27, 1, 1),
            block=(256, 1, 1),
            registers=32,
            occupancy_pct=50.0,
        )
    finding = findings_by_id(report_of(builder))["occupancy.tiny_grid"]
    assert finding["evidence"]["metrics"]["per_kernel"][0]["modeled_faster"] == 4.0  # 27 blocks on 108 SMs
    # 9 x 1 ms x 3/4 = 6.75 ms of kernel time saved per step, 0.75 ms of it (the last kernel's) off the step
    assert finding["recoverable_ms"] == 3.0
    assert finding["speedup_kind"] == "model" and finding["estimated_speedup"] == 1.08
    assert (
        "; the step loses the kernel time saved and keeps the rest, 3 of the 27 ms saved, as the GPU then "
        "waits for the host's launches that came later."
    ) in finding["speedup_basis"]


def test_a_custom_kernels_tiny_grid_is_fixed_in_its_launch_code_a_librarys_by_more_work():
    """A custom op's kernel (its own name, no library or framework namespace) gets the grid its launch code sets:
    the fix is more blocks per launch, not a larger batch; a library GEMM's grid scales with its operands."""
    custom = findings_by_id(report_of(loop(REDUCE, grid=(4, 1, 1), block=(1024, 1, 1), registers=32)))
    assert custom["occupancy.tiny_grid"]["fix_summary"].startswith("Launch these custom kernels with more blocks")
    assert "blockIdx" in custom["occupancy.tiny_grid"]["fix"]
    framework = "void tensorflow::functor::RowReduceKernel<float>(float const*, float*, int)"
    library = findings_by_id(report_of(loop(framework, grid=(4, 1, 1), block=(1024, 1, 1), registers=32)))
    assert library["occupancy.tiny_grid"]["fix_summary"].startswith("Give these kernels more parallel work")
