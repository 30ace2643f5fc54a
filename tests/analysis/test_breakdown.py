import pytest

from tb_gpu_advisor.analysis.breakdown import BREAKDOWN_CATEGORIES
from tb_gpu_advisor.pipeline import analyze_host_file
from tb_gpu_advisor.testing import TraceBuilder
from tests.conftest import report_of


def test_each_instant_counts_once_for_its_highest_category():
    builder = TraceBuilder()
    python = builder.thread()
    feeder = builder.thread("tf_data_iterator_get_next/1")
    gpu = builder.gpu(0)
    python.step(0, 0, 1000)
    feeder.input_wait(0, 200)  # [0,200) input wait, GPU idle
    gpu.memcpy("h2d", 150, 100, 1 << 20)  # [150,200) hidden by wait? no: copy outranks wait
    gpu.kernel("volta_h884gemm_128x128", 250, 100)  # [250,350) 16-bit compute
    gpu.kernel("volta_sgemm_128x64_nn", 300, 100, stream=8)  # overlap [300,350) counts as 16-bit
    gpu.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 380, 70, stream=20)  # [400,450) exposed
    gpu.memcpy("d2h", 450, 50, 4096)  # [450,500)
    python.event("ExecutorState::Process", 500, 200)  # host busy [500,700) minus launch calls
    python.event("cuLaunchKernel-like", 600, 20, correlation_id=999, device_id=0)  # a launch call
    step = report_of(builder)["steps"][0]["breakdown_ms"]
    assert step == pytest.approx(
        {
            "compute_16bit": 0.1,
            "compute_32bit": 0.05,
            "compute_unknown": 0.0,
            "collectives": 0.05,
            "d2h": 0.05,
            "d2d": 0.0,
            "h2d": 0.1,
            "device_wait": 0.0,
            "input_wait": 0.15,
            "input_prep": 0.0,
            "copy_call": 0.0,
            "launch": 0.02,
            "host_wait": 0.0,
            "host_stall": 0.0,
            "gil_wait": 0.0,
            "host": 0.18,
            "idle": 0.3,
        }
    )
    assert sum(step.values()) == pytest.approx(1.0)
    assert report_of(builder)["steps"][0]["gpu_busy_pct"] == 35.0


def test_categories_add_up_to_step_time_on_the_real_v100_trace(v100_trace):
    report = analyze_host_file(v100_trace)
    (step,) = report["steps"]
    assert step["time_ms"] == 21.310352
    assert sum(step["breakdown_ms"].values()) == pytest.approx(step["time_ms"], abs=1e-5)
    compute = sum(step["breakdown_ms"][key] for key in ("compute_16bit", "compute_32bit", "compute_unknown"))
    # XProf: device compute 14.875539 ms, which includes 0.04 ms of memcpys it misclassifies as compute.
    assert compute == pytest.approx(14.875539, abs=0.05)
    assert set(report["summary"]["breakdown_pct"]) == set(BREAKDOWN_CATEGORIES)


def test_precision_split_on_the_real_v100_trace_differs_from_xprof_by_definition(v100_trace):
    """XProf calls a kernel 16-bit when its TF op's `shape` stat (the op's input types) says `half`; we read the
    type the kernel writes, from its name (for a kernel writing bool, the type it compares). On the real 8xV100
    trace the dropout RandomUniform (int32 shape inputs), the float->half and bool->half Casts write half values:
    16-bit for us, 32-bit for XProf; the `greater_equal<Eigen::half>` comparison is 16-bit for both; the one
    half->float Cast writes float: 32-bit for us, 16-bit for XProf. Reproducing XProf's rule on the same kernels
    gives its 30.5% 16-bit exactly; by our rule 99.95% is 16-bit, and no kernel of this trace is of unknown
    type (each names the type it writes), so `compute_unknown` is 0."""
    from tb_gpu_advisor.analysis.kernel_names import kernel_precision
    from tb_gpu_advisor.readers.load import load_model
    from tb_gpu_advisor.model.trace import ActivityKind

    model = load_model(v100_trace)
    by_shape = total = 0
    by_rule = {}
    for gpu in model.gpus:
        activity = gpu.activity
        for index in range(len(activity)):
            if activity.kind[index] != ActivityKind.KERNEL:
                continue
            duration = int(activity.duration_ps[index])
            signature = (
                activity.tf_signatures[activity.tf_signature_id[index]]
                if activity.tf_signature_id[index] >= 0
                else ("", "")
            )
            total += duration
            by_shape += duration if "half" in signature[1] else 0
            precision = kernel_precision(activity.names[activity.name_id[index]])
            by_rule[precision] = by_rule.get(precision, 0) + duration
    assert round(100.0 * by_shape / total, 1) == 30.5  # XProf overview: 16-bit 30.5% / 32-bit 69.5%
    assert {key: round(100.0 * ps / total, 2) for key, ps in by_rule.items()} == {"16bit": 99.95, "32bit": 0.05}
    report = analyze_host_file(v100_trace)
    breakdown = report["summary"]["breakdown_pct"]
    assert (breakdown["compute_16bit"], breakdown["compute_32bit"], breakdown["compute_unknown"]) == (69.72, 0.03, 0.0)
    # The json's `dtype` is the costed op's type (null: the op was not costed); `precision` is what the Time
    # line counts: the dropout's Philox fill and the float->half Cast name the half they write.
    by_name = {k["name"]: k for k in report["kernels"]}
    philox = next(k for name, k in by_name.items() if "FillPhiloxRandomKernelLaunch" in name)
    to_half = next(k for name, k in by_name.items() if "TensorConversionOp<Eigen::half" in name)
    assert (philox["dtype"], philox["precision"]) == (None, "16bit")
    assert (to_half["dtype"], to_half["precision"]) == (None, "16bit")


def test_kernels_that_name_no_float_type_are_of_unknown_precision_not_32_bit():
    """A kernel whose name says no floating-point type (a custom kernel, an XLA fusion without its HLO, integer
    sorting) is `compute_unknown`, never assumed 32-bit; its op's element type decides when the trace has it."""
    from tb_gpu_advisor.analysis.kernel_names import kernel_precision

    assert kernel_precision("query_ball_point_gpu") is None
    assert kernel_precision("loop_multiply_fusion_309") is None
    assert kernel_precision("loop_multiply_fusion_309", "bf16") == "16bit"
    assert kernel_precision("loop_multiply_fusion_309", "f32") == "32bit"
    assert kernel_precision("loop_compare_fusion", "pred") is None
    assert (
        kernel_precision(
            "void cub::DeviceRadixSortOnesweepKernel<cub::DeviceRadixSortPolicy<long, int, int>"
            "::Policy800, false, long, int, int, int>(int*, int*, int*, int const*)"
        )
        is None
    )
    assert kernel_precision("ampere_sgemm_128x64_nn") == "32bit"
    assert kernel_precision("sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x16") == "32bit"
    assert kernel_precision("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_nn") == "16bit"
    assert kernel_precision("Cijk_Ailk_Bljk_SB_MT64x64x8_SN_ISA908.kd") == "32bit"
    assert kernel_precision("Cijk_Ailk_Bljk_BBS_BH_MT256x224x64_MI16x16x16x1_SN") == "16bit"
    assert kernel_precision("void at::native::vectorized_elementwise_kernel<4, c10::BFloat16>") == "16bit"
    assert kernel_precision("void at::native::vectorized_elementwise_kernel<4, float>") == "32bit"
    builder = TraceBuilder()
    python = builder.thread()
    gpu = builder.gpu(0)
    python.step(0, 0, 1000)
    gpu.kernel("query_ball_point_gpu", 100, 300)
    gpu.kernel("volta_sgemm_128x64_nn", 500, 100)
    step = report_of(builder)["steps"][0]["breakdown_ms"]
    assert (step["compute_32bit"], step["compute_unknown"]) == pytest.approx((0.1, 0.3))


def test_eigen_kernels_count_as_16_bit_by_the_type_they_write():
    from tb_gpu_advisor.analysis.kernel_names import is_low_precision

    assign = (
        "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<"
        "Eigen::Tensor<{out}, 1, 1, int>, 16, Eigen::MakePointer>, {expr} const> const, Eigen::GpuDevice>, int>"
    )
    compare = (
        "Eigen::TensorCwiseUnaryOp<Eigen::internal::scalar_right<bool, Eigen::half, "
        "Eigen::internal::greater_equal<Eigen::half>, false>, Eigen::TensorMap<Eigen::Tensor<Eigen::half const, "
        "1, 1, int>, 16, Eigen::MakePointer> const>"
    )
    to_float = (
        "Eigen::TensorConversionOp<float, Eigen::TensorMap<Eigen::Tensor<Eigen::half const, 1, 1, int>, 16, "
        "Eigen::MakePointer> const>"
    )
    to_half = (
        "Eigen::TensorConversionOp<Eigen::half, Eigen::TensorMap<Eigen::Tensor<float const, 1, 1, int>, 16, "
        "Eigen::MakePointer> const>"
    )
    assert not is_low_precision(assign.format(out="bool", expr=compare))
    assert not is_low_precision(assign.format(out="float", expr=to_float))
    assert is_low_precision(assign.format(out="Eigen::half", expr=to_half))
    assert is_low_precision(
        assign.format(out="Eigen::bfloat16", expr=to_half.replace("Eigen::half", "Eigen::bfloat16"))
    )


def test_the_time_line_says_a_comparison_counts_by_the_type_it_compares(v100_trace):
    """The real 8xV100 trace's largest comparison, `greater_equal` on halves, writes bool (5.48 ms, 37% of compute);
    it is 16-bit by the type it compares, as in XProf's own split (its op's inputs are half). The Time line's basis
    says so instead of promising "output type" (review G14)."""
    from tb_gpu_advisor.report.text import render_text

    report = analyze_host_file(v100_trace)
    compare = next(k for k in report["kernels"] if "TensorMap<Eigen::Tensor<bool" in k["name"])
    assert compare["precision"] == "16bit" and round(compare["total_us"] / 1000, 2) == 5.48
    time_line = render_text({"hosts": [report]}).split("Time: ", 1)[1].split("\n\n", 1)[0]
    assert "by the float type a kernel writes, or compares" in " ".join(time_line.split())


def test_a_cpu_backends_collectives_are_collectives_not_host_compute():
    """4-rank gloo DDP on the CPU, rank 0 of the run whose rank 2 sleeps in its DataLoader: rank 0's gloo worker
    thread spends most of each step in `gloo:all_reduce`, waiting for rank 2, while the main thread has no
    events. That time is collectives (not hidden by the step thread's work), never host compute; no GPU is busy.
    Rank 2 itself waits for its input most of the step."""
    from tests.data import REAL

    def summary(rank):
        (path,) = (REAL / "ddp_cpu" / "slow_input").glob(f"rank{rank}.*.pt.trace.json.gz")
        return analyze_host_file(str(path))["summary"]

    waiting, slow = summary(0), summary(2)
    assert waiting["breakdown_pct"]["collectives"] == pytest.approx(88.7, abs=0.1)
    assert waiting["breakdown_pct"]["host"] == pytest.approx(9.7, abs=0.1)
    assert waiting["gpu_busy_pct"] is None or waiting["gpu_busy_pct"] == 0
    assert slow["breakdown_pct"]["input_wait"] == pytest.approx(57.1, abs=0.1)
    assert slow["breakdown_pct"]["collectives"] < slow["breakdown_pct"]["input_wait"]
