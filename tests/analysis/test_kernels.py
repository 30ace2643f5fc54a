import json

from tb_gpu_advisor.pipeline import analyze_host_file
from tb_gpu_advisor.testing import TraceBuilder
from tests.conftest import report_of
from tests.data import xprof_reference


def test_aggregation_key_and_statistics():
    builder = TraceBuilder()
    gpu0, gpu1 = builder.gpu(0), builder.gpu(1)
    for start, duration in ((0, 10), (20, 30)):
        gpu0.kernel("relu", start, duration, grid=(80, 1, 1), block=(256, 1, 1), registers=16, occupancy_pct=100.0)
    gpu1.kernel("relu", 0, 20, grid=(80, 1, 1), block=(256, 1, 1), registers=16, occupancy_pct=100.0)
    gpu0.kernel("relu", 100, 5, grid=(1, 1, 1), block=(32, 1, 1), registers=16, occupancy_pct=3.125)
    kernels = report_of(builder)["kernels"]
    assert [
        (
            k["name"],
            k["grid"],
            k["occurrences"],
            k["total_us"],
            k["min_us"],
            k["max_us"],
            k["avg_us"],
            k["occupancy_pct"],
        )
        for k in kernels
    ] == [
        ("relu", [80, 1, 1], 3, 60.0, 10.0, 30.0, 20.0, 100.0),
        ("relu", [1, 1, 1], 1, 5.0, 5.0, 5.0, 5.0, 3.12),
    ]
    assert kernels[1]["block"] == [32, 1, 1]


def test_shared_memory_registers_and_tensor_cores():
    builder = TraceBuilder()
    gpu = builder.gpu(0)
    gpu.kernel(
        "sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x128x32",
        0,
        100,
        registers=232,
        static_shared=0,
        dynamic_shared=73728,
        tf_op="model/dense/MatMul:MatMul",
    )
    gpu.kernel("ampere_sgemm_128x64_tn", 100, 100, tf_op="model/dense_1/MatMul:MatMul")
    gpu.kernel("void Eigen::internal::EigenMetaKernel<relu>", 200, 10, tf_op="model/Relu:Relu")
    gpu.kernel("loop_add_fusion", 210, 10, hlo_op="add.3")
    gpu.kernel("cutlass_80_tensorop_bf16_s16816gemm", 220, 10, hlo_op="dot.7")
    rows = {k["name"]: k for k in report_of(builder)["kernels"]}
    xmma = rows["sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x128x32"]
    assert (xmma["registers_per_thread"], xmma["shared_memory_bytes"]) == (232, 73728)
    assert (xmma["uses_tensor_cores"], xmma["tensor_core_eligible"], xmma["op_name"]) == (
        True,
        True,
        "model/dense/MatMul",
    )
    sgemm = rows["ampere_sgemm_128x64_tn"]
    assert (sgemm["uses_tensor_cores"], sgemm["tensor_core_eligible"]) == (False, True)
    relu = rows["void Eigen::internal::EigenMetaKernel<relu>"]
    assert (relu["uses_tensor_cores"], relu["tensor_core_eligible"]) == (False, False)
    assert rows["loop_add_fusion"]["op_name"] == "add.3"
    assert rows["loop_add_fusion"]["tensor_core_eligible"] is False
    assert rows["cutlass_80_tensorop_bf16_s16816gemm"]["tensor_core_eligible"] is True


def test_old_format_occupancy_is_null():
    builder = TraceBuilder(legacy=True)
    builder.gpu(0).kernel("k", 0, 10)
    assert report_of(builder)["kernels"][0]["occupancy_pct"] is None


def test_kernel_table_matches_xprof_on_the_real_v100_trace(v100_trace):
    reference = json.loads(xprof_reference("xprof_gpu_multi_worker", "kernel_stats.json").read_text())
    expected = [[cell["v"] for cell in row["c"]] for row in reference["rows"]]
    kernels = analyze_host_file(v100_trace)["kernels"]
    assert len(kernels) == len(expected) == 15
    assert sum(k["occurrences"] for k in kernels) == 1330
    assert round(sum(k["total_us"] for k in kernels), 3) == 29690.748
    for ours, theirs in zip(kernels, expected):
        (_, name, regs, shmem, block, grid, _occ, eligible, uses_tc, op_name, occurrences, total, avg, low, high) = (
            theirs
        )
        assert ours["name"] == name
        assert ours["registers_per_thread"] == regs
        assert ours["shared_memory_bytes"] == shmem
        assert ",".join(map(str, ours["block"])) == block
        assert ",".join(map(str, ours["grid"])) == grid
        assert ours["tensor_core_eligible"] == eligible
        assert ours["uses_tensor_cores"] == uses_tc
        assert ours["op_name"] == op_name
        assert ours["occurrences"] == occurrences
        assert (ours["total_us"], ours["avg_us"], ours["min_us"], ours["max_us"]) == (total, avg, low, high)
        # XProf prints 0 for occupancy the old format does not record; we say "unknown".
        assert ours["occupancy_pct"] is None
