"""The configuration section: what a trace says about how the job ran, and what it does not."""

from tb_gpu_advisor.comparison.diff import compare_reports
from tb_gpu_advisor.comparison.render import render_comparison_text
from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.pipeline import host_report
from tb_gpu_advisor.report.text import render_text
from tb_gpu_advisor.testing import TraceBuilder
from tests.conftest import report_of
from tests.data import real_trace
from tests.findings.scenarios import SGEMM, TC_GEMM, kernels, step_starts


def job(kernel, compiled=False):
    builder = TraceBuilder()
    builder.metadata(cuda_runtime_version="12020", cuda_driver_version="12040", cudnn_version="90100", cpu_count=32)
    python = builder.thread("python")
    builder.thread("tf_Compute/1").event("Sum:Sum", 10, 5)
    builder.thread("tf_data_private_threadpool/2").event("Iterator::Root::Prefetch::ParallelMapV2", 10, 5)
    gpu = builder.gpu(0)
    for start in step_starts(python, 3):
        kernels(gpu, start + 100, 6_000, name=kernel, count=2, launch_thread=python)
        if compiled:
            kernels(gpu, start + 6_200, 3_000, name="loop_add_fusion_3", count=2, launch_thread=python)
    return builder


def test_configuration_of_a_generated_job():
    config = report_of(job(TC_GEMM))["configuration"]
    assert config["framework"] == "tensorflow"
    assert config["versions"] == {
        "cuda_runtime_version": "12.2",
        "cuda_driver_version": "12.4",
        "cudnn_version": "90100",
    }
    assert config["gpu"] == {
        "model": "NVIDIA A100-SXM4-80GB",
        "count": 1,
        "active": 1,
        "compute_capability": "8.0",
        "memory_bytes": 80 * 2**30,
        "arch": "sm_80",
    }
    assert (config["xla"], config["precision"], config["matmul_dtype_pct"]) == (False, "bf16", {"bf16": 100.0})
    assert config["thread_pools"] == {"python": 1, "tf_Compute": 1, "tf_data_private_threadpool": 1}
    assert config["tf_data_options"] == ["prefetch", "parallel map"]
    assert (config["host_cores"], config["global_batch"], config["distribution"]) == (32, None, None)


def test_configuration_in_the_text_report_and_first_in_compare():
    before, after = report_of(job(SGEMM)), report_of(job(TC_GEMM, compiled=True))
    shown = render_text({"hosts": [after], "errors": []})
    assert "XLA           on" in shown and "precision     bf16 (matmul/conv time: bf16 100.0%)" in shown
    assert "versions      CUDA runtime 12.2, CUDA driver 12.4, cuDNN 90100" in shown
    comparison = compare_reports(before, after)
    changes = [change["text"] for change in comparison["hosts"][0]["configuration_changes"]]
    assert changes == ["XLA off → on", "precision fp32 → bf16"]
    text = render_comparison_text(comparison)
    assert text.index("Configuration changes") < text.index("XLA off → on") < text.index("Step time")


def test_real_traces_state_only_what_they_record():
    v100 = host_report(load_model(real_trace("gpu_multi_worker_v100x8.xplane.pb")))["configuration"]
    # the trace names no model; its properties identify one (model.device_identity), said as such
    assert (v100["gpu"]["count"], v100["gpu"]["active"]) == (8, 2)
    assert v100["gpu"]["model"] == "Tesla V100-SXM2-16GB (identified from its properties)"
    # No matmul/conv kernel on it: Eigen's Cast kernels (`TensorConversionOp`) are not convolutions.
    assert (v100["xla"], v100["precision"], v100["gpu_thread_mode"]) == (False, None, "gpu_private")
    assert v100["matmul_dtype_pct"] == {}
    assert v100["versions"] == {} and v100["distribution"].startswith("tf.distribute")
    assert v100["tf_data_options"] == ["prefetch", "per-device feed (tf.distribute)"]
    jax = host_report(load_model(real_trace("jax0102_cpu_steps.xplane.pb")))["configuration"]
    assert jax["versions"] == {"jax_version": "0.10.2", "jaxlib_version": "0.10.2"}
    # jitted JAX programs on the CPU: XLA compiled them, whatever device ran them
    assert (jax["xla"], jax["precision"], jax["gpu"]["count"]) == (True, None, 0)
    report = host_report(load_model(real_trace("jax0102_cpu_steps.xplane.pb")))
    assert "XLA           on (CPU)" in render_text({"hosts": [report], "errors": []})
    # TensorFlow on the CPU without XLA programs: the trace does not say
    keras = host_report(load_model(real_trace("tf221_cpu_keras_input_bound.xplane.pb")))["configuration"]
    assert keras["xla"] is None


def test_tensor_core_gemms_with_32_bit_inputs_are_tf32_and_use_tensor_cores():
    """CUTLASS `tensorop_s1688gemm` (fp32 inputs on Ampere Tensor Cores) is TF32, not fp32, and cuDNN's
    `sm80_xmma_..._tf32f32_..._tensor16x8x8_` kernels use Tensor Cores (a100_8rank_control and alexnet once
    read "precision fp32" and TC "no"); SIMT sgemm stays fp32 without Tensor Cores."""
    from tb_gpu_advisor.analysis.kernel_names import uses_tensor_cores

    cutlass = "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x4_nn_align1>(Params)"
    xmma = (
        "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4_"
        "warpsize2x2x1_g1_tensor16x8x8_alignc4_execute_kernel_cudnn"
    )
    simt = (
        "sm80_xmma_fprop_implicit_gemm_f32f32_f32f32_f32_nhwckrsc_nhwc_tilesize128x128x8_stage3_warpsize2x2x1_"
        "g1_ffma_aligna4_alignc4_execute_kernel"
    )
    assert uses_tensor_cores(cutlass) and uses_tensor_cores(xmma)
    assert not uses_tensor_cores(simt) and not uses_tensor_cores("ampere_sgemm_128x64_nn")
    assert report_of(job(cutlass))["configuration"]["matmul_dtype_pct"] == {"tf32": 100.0}
    assert report_of(job(xmma))["configuration"]["matmul_dtype_pct"] == {"tf32": 100.0}
    assert report_of(job("turing_s1688gemm_fp16_128x128_ldg8_f2f_nn"))["configuration"]["precision"] == "fp16"
    assert report_of(job(SGEMM))["configuration"]["precision"] == "fp32"


def test_f32_dots_at_xla_default_precision_read_as_tf32_on_ampere_and_later():
    """jax/launch_jit: Triton `gemm_fusion_dot` kernels of f32 dots with no precision in their HLO (DEFAULT),
    which XLA runs in TF32 on an H200; the name does not say, so the share is reported with its basis. The
    precision_fp32 run's dots carry HIGHEST: fp32, as its `_ffma_` kernels say."""
    from tb_gpu_advisor.pipeline import host_report
    from tb_gpu_advisor.readers.load import load_model
    from tests.data import REAL

    def config(run):
        path = next((REAL / "h200" / "jax" / run).rglob("*.xplane.pb"))
        return host_report(load_model(str(path)))["configuration"]

    jit = config("launch_jit")
    assert jit["precision"] == "tf32" and jit["matmul_dtype_pct"] == {"tf32": 100.0}
    assert 70 < jit["tf32_by_default_pct"] < 80
    highest = config("precision_fp32")
    assert highest["precision"] == "fp32" and highest["tf32_by_default_pct"] == 0.0


def test_xla_default_tf32_needs_an_nvidia_gpu_of_cc_8_and_an_uncosted_name():
    from tb_gpu_advisor.analysis.configuration import _matmul_dtypes
    from tb_gpu_advisor.analysis.kernels import KernelRow

    def row(name, precision=None):
        return KernelRow(
            name, 1, 1000, 1000, 1000, None, None, None, (132, 1, 1), (128, 1, 1), False, True, "dot.1",
            compute="matrix", dtype="f32", matrix_precision=precision,
        )  # fmt: skip

    assert _matmul_dtypes((row("gemm_fusion_dot_1"),), True) == ((("tf32", 100.0),), 100.0)
    assert _matmul_dtypes((row("gemm_fusion_dot_1"),), False) == ((("fp32", 100.0),), 0.0)  # Volta, AMD, PyTorch
    assert _matmul_dtypes((row("gemm_fusion_dot_1", "HIGHEST"),), True)[0] == (("fp32", 100.0),)
    assert _matmul_dtypes((row("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_ffma"),), True)[0] == (("fp32", 100.0),)
