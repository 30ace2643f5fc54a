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
    # 3 ms exposed; the backward pass (2/3 of 6 ms of compute) has room for all of it: a ceiling (perfect
    # overlap), so a bound
    assert finding["severity"] == "high" and finding["estimated_speedup"] == 1.43
    assert finding["speedup_kind"] == "bound" and finding["speedup_basis"].startswith("upper bound:")
    assert "bytes_per_pack" in finding["fix"]
    assert report["summary"]["bottleneck"] == "communication"
    # bf16 Tensor Core compute, float32 all-reduce: the gradients are reduced in 32 bits
    assert (metrics["allreduce_dtype"], metrics["compute_16bit_share_pct"]) == ("f32", 100.0)
    assert "tf.cast(g, tf.bfloat16)" in finding["fix"] and "overflow" in finding["fix"]
    assert "jax.lax.pmean(g.astype(jnp.bfloat16)" in finding["fix"]  # framework unknown: JAX too
    assert finding["fix_summary"].startswith("TensorFlow: Gradients are all-reduced in float32")


def test_exposed_all_reduce_hides_only_behind_the_backward_compute():
    """3 ms of compute then 6 ms of all-reduce per 10 ms step: the backward pass (2/3 of 3 ms) hides 2 ms of it,
    10 -> 8 ms: 1.25x, not the 2.5x of hiding all 6 ms."""
    builder = TraceBuilder()
    python = builder.thread("python")
    for start in step_starts(python):
        for ordinal in range(2):
            gpu = builder.gpu(ordinal)
            end = kernels(gpu, start, 3_000)
            kernels(gpu, end, 6_000, name=NCCL, stream=20, **NCCL_CONFIG)
    finding = findings_by_id(report_of(builder))["communication.allreduce_exposed"]
    assert finding["estimated_speedup"] == 1.25 and finding["speedup_kind"] == "model"


def test_all_reduce_dtype_unknown_from_a_generic_kernel_is_not_guessed():
    builder = TraceBuilder()
    python = builder.thread("python")
    for start in step_starts(python):
        for ordinal in range(2):
            gpu = builder.gpu(ordinal)
            end = kernels(gpu, start, 6_000)
            kernels(gpu, end, 3_000, name="ncclDevKernel_Generic", stream=20, **NCCL_CONFIG)
    finding = findings_by_id(report_of(builder))["communication.allreduce_exposed"]
    assert finding["evidence"]["metrics"]["allreduce_dtype"] is None
    assert not finding["fix_summary"].startswith("Gradients are all-reduced in float32")
    assert "mixed precision halves" not in finding["fix"]


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
    # the same GEMM takes 8 ms on GPU 0 and 4 ms on GPU 1: the straggler is slower hardware
    assert (metrics["cause"], metrics["same_kernels_slowdown"], metrics["extra_kernels_on_slowest"]) == (
        "hardware",
        2.0,
        0,
    )
    # its excess over the other GPU, not over the mean: 4 ms per step
    assert finding["recoverable_ms"] == 16.0 and finding["estimated_speedup"] == 1.67
    assert finding["evidence"]["pointers"]["devices"] == ["/device:GPU:1", "/device:GPU:0"]
    assert finding["fix"].startswith("Cause: hardware. /device:GPU:0 runs the same kernels 2.00× slower")
    assert finding["fix_summary"].startswith("Fix the slow GPU: check its clocks")


def test_straggler_with_more_work_is_a_workload_cause_and_recovers_its_excess_over_the_next_slowest():
    builder = TraceBuilder()
    python = builder.thread("python")
    for start in step_starts(python):
        for ordinal, count in ((0, 4), (1, 3), (2, 2)):
            end = kernels(builder.gpu(ordinal), start, 2_000 * count, count=count)
            if count < 4:
                kernels(builder.gpu(ordinal), end, 8_000 - 2_000 * count, name=NCCL, stream=20, **NCCL_CONFIG)
    finding = findings_by_id(report_of(builder))["communication.gpu_imbalance"]
    metrics = finding["evidence"]["metrics"]
    assert (metrics["cause"], metrics["same_kernels_slowdown"], metrics["extra_kernels_on_slowest"]) == (
        "workload",
        1.0,
        6,
    )
    assert metrics["slowest_excess_ms"] == 8.0 == finding["recoverable_ms"]  # 2 ms per step over GPU 1, not GPU 2
    assert finding["fix"].startswith("Cause: workload. /device:GPU:0 runs the same kernels at the same speed")
    assert finding["fix_summary"].startswith("TensorFlow: Balance work per GPU")


def test_multi_gpu_rules_are_quiet_on_the_healthy_trace():
    assert not [f for f in report_of(healthy())["findings"] if f["category"] == "communication"]


AMD = dict(model="AMD Instinct MI300X", compute_capability=(9, 4), vendor="AMD")
AMD_GEMM = "Cijk_Ailk_Bljk_BBS_BH_MT256x224x64_MI16x16x16x1_SN_1LDSB1"


def test_a_gpu_that_only_copies_is_no_straggler():
    """GPU 0 computes; GPU 1 only runs the HIP runtime's copy kernels (device-to-device copies): its compute share
    is 0 because it takes no part in the compute, not because GPU 0 straggles."""
    builder = TraceBuilder()
    python = builder.thread("python")
    for start in step_starts(python):
        kernels(builder.gpu(0, **AMD), start, 8_000, name=AMD_GEMM)
        kernels(builder.gpu(1, **AMD), start, 500, name="__amd_rocclr_copyBuffer.kd")
    assert "communication.gpu_imbalance" not in findings_by_id(report_of(builder))


def test_a_slow_amd_gpu_gets_rocm_smi_not_nvidia_smi():
    builder = TraceBuilder()
    python = builder.thread("python")
    for start in step_starts(python):
        kernels(builder.gpu(0, **AMD), start, 8_000, name=AMD_GEMM)
        end = kernels(builder.gpu(1, **AMD), start, 4_000, name=AMD_GEMM)
        kernels(builder.gpu(1, **AMD), end, 4_000, name="ncclDevKernel_Generic_4", stream=20, **NCCL_CONFIG)
    finding = findings_by_id(report_of(builder))["communication.gpu_imbalance"]
    assert finding["evidence"]["metrics"]["cause"] == "hardware"
    assert "rocm-smi --showclocks" in finding["fix"] and "nvidia-smi" not in finding["fix"]
    assert "RCCL" in finding["fix"]
