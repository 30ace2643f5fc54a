"""kernel.gemm_below_roof: odd or small GEMMs far below their roof fire; well-shaped GEMMs and memory-bound
fusions near the HBM roof do not."""

from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.pipeline import host_report
from tb_gpu_advisor.testing.builder import TraceBuilder
from tb_gpu_advisor.testing.hlo import HloModuleBuilder, gemm_config, shape, tuple_shape
from tests.analysis.test_roofline import AMD_TRACE
from tests.conftest import report_of

RULE = "kernel.gemm_below_roof"


def _gemm_module(m, n, k, dtype="bf16"):
    module = HloModuleBuilder("jit_gemm", 1)
    a = module.entry.parameter("a", shape(dtype, m, k))
    b = module.entry.parameter("b", shape(dtype, k, n))
    module.entry.add(
        "custom-call.1",
        "custom-call",
        tuple_shape(shape(dtype, m, n), shape("s8", 1024)),
        (a, b),
        custom_call_target="__cublas$lt$matmul",
        backend_config=gemm_config((1,), (0,)),
    )
    return module


def _elementwise_module(elements):
    module = HloModuleBuilder("jit_add", 2)
    fused = module.computation("fused_add")
    p0 = fused.parameter("param_0", shape("bf16", elements))
    p1 = fused.parameter("param_1", shape("bf16", elements))
    fused.add("add.1", "add", shape("bf16", elements), (p0, p1))
    a = module.entry.parameter("a", shape("bf16", elements))
    module.entry.add("add_fusion", "fusion", shape("bf16", elements), (a, a), fusion_kind="kLoop", called=[fused])
    return module


def _trace(m, n, k, gemm_us, dtype="bf16", elementwise_us=None, elements=2**26, grid=(8, 8, 4)):
    """An A100 step (108 SMs): a GEMM of the given shape taking gemm_us, launched on `grid`, and optionally a big
    element-wise fusion."""
    builder = TraceBuilder()
    gpu = builder.gpu(0)
    builder.hlo_module(1, "jit_gemm", _gemm_module(m, n, k, dtype).to_bytes())
    builder.hlo_module(2, "jit_add", _elementwise_module(elements).to_bytes())
    thread = builder.thread()
    start = 0.0
    for step in range(4):
        thread.step(step, start, 1000.0)
        gpu.kernel("ampere_bf16_s16816gemm", start + 1, gemm_us, hlo_op="custom-call.1", program_id=1, grid=grid)
        if elementwise_us:
            gpu.kernel("loop_add_fusion", start + 2 + gemm_us, elementwise_us, hlo_op="add_fusion", program_id=2)
        start += 1000.0
    return report_of(builder)


def _ids(report):
    return {f["id"]: f for f in report["findings"]}


def test_odd_small_gemm_far_below_the_roof_fires_with_its_shape():
    # 2*1000*1000*1001 FLOP in 600 us: 3.3 TFLOP/s, about 1% of the A100's 312 TFLOP/s.
    finding = _ids(_trace(1000, 1000, 1001, 600.0))[RULE]
    item = finding["evidence"]["metrics"]["per_kernel"][0]
    assert item["matrix_dims"] == {"batch": 1, "m": 1000, "n": 1000, "k": 1001}
    assert item["reasons"] == ["dims_not_multiple_of_8"]
    assert item["peak_pct"] < 40
    assert "dims not multiple of 8" in finding["fix"]
    assert finding["category"] == "kernel"
    # the fix names only the cause shown: padding, not a larger batch or bf16 (the GEMM is 16-bit and large)
    assert finding["fix_summary"] == (
        "TensorFlow: Pad GEMM dimensions to multiples of 8 (16-bit) / 64. JAX: Pad GEMM "
        "dimensions to multiples of 8 (16-bit) / 64."
    )  # framework unknown: both
    assert (
        "vocab_size" in finding["fix"]
        and "raise the batch" not in finding["fix"]
        and "f32 inputs" not in finding["fix"]
    )


def test_f32_gemm_far_below_its_tf32_roof_fires_for_precision():
    # 137 GFLOP in 2500 us: 55 TFLOP/s, 35% of the A100's 156 TFLOP/s TF32 roof.
    finding = _ids(_trace(4096, 4096, 4096, 2500.0, dtype="f32"))[RULE]
    item = finding["evidence"]["metrics"]["per_kernel"][0]
    assert item["reasons"] == ["f32_inputs"] and item["roof_tflops"] == 156.0
    # aligned, large dims: no padding advice, only the precision
    assert finding["fix_summary"] == "TensorFlow: Compute in bf16. JAX: Compute in bf16."
    assert "Pad" not in finding["fix_summary"] and "vocab_size" not in finding["fix"]


def test_gemm_of_fewer_blocks_than_sms_is_left_to_the_grid_rule():
    """The same f32 GEMM far below its roof, launched as 64 blocks on 108 SMs (one partial wave): its grid, not its
    precision, holds it back, so no bf16 advice and no roof model in the estimate (occupancy.tiny_grid owns it)."""
    assert RULE in _ids(_trace(4096, 4096, 4096, 2500.0, dtype="f32", grid=(108, 1, 1)))
    report = _trace(4096, 4096, 4096, 2500.0, dtype="f32", grid=(8, 8, 1))
    assert RULE not in _ids(report)
    assert "compute in bf16" not in str(report["summary"]).lower()


def test_f32_gemm_at_its_roof_is_left_to_the_precision_rule():
    assert RULE not in _ids(_trace(4096, 4096, 4096, 900.0, dtype="f32"))  # 153 TFLOP/s: 98% of TF32


def test_well_shaped_bf16_gemm_below_the_roof_is_not_flagged():
    assert RULE not in _ids(_trace(4096, 4096, 4096, 900.0))  # 137 GFLOP in 900 us: 49% of the roof, aligned


def test_memory_bound_fusion_near_the_hbm_roof_is_no_false_alarm():
    # 2^26 bf16 elements x 3 = 402.7 MB in 220 us: 1830 GB/s, 90% of 2039 GB/s; the GEMM is small in time.
    report = _trace(4096, 4096, 4096, 500.0, elementwise_us=220.0)
    fusion = next(row for row in report["kernels"] if row["op_name"] == "add_fusion")
    assert fusion["bound"] == "memory" and fusion["peak_pct"] > 85
    assert RULE not in _ids(report)


def test_real_mi300x_gemms_are_well_shaped_and_not_flagged():
    assert RULE not in _ids(host_report(load_model(str(AMD_TRACE))))
