"""PyTorch op FLOPs and dtypes from `record_shapes`, mapped onto the kernels each op launched (kineto.op_work)."""

import pytest

from tb_gpu_advisor.analysis.host_analysis import analyze_host
from tb_gpu_advisor.readers.kineto.build import load_kineto_model
from tb_gpu_advisor.readers.kineto.op_work import op_cost
from tb_gpu_advisor.testing.kineto_trace import kernel, launch, trace_text, x_event

BF16, F32 = "c10::BFloat16", "float"


def test_gemm_and_attention_flops_from_input_shapes():
    mm = op_cost("aten::mm", {"Input Dims": [[16384, 2048], [2048, 2048]], "Input type": [BF16, BF16]})
    assert mm.flops == 2 * 16384 * 2048 * 2048 and mm.dtype == "bf16" and mm.compute == "matrix"
    assert mm.bytes == (16384 * 2048 + 2048 * 2048 + 16384 * 2048) * 2
    addmm = op_cost(
        "aten::addmm",
        {
            "Input Dims": [[2048], [16384, 2048], [2048, 6144], [], []],
            "Input type": [BF16, BF16, BF16, "Scalar", "Scalar"],
        },
    )
    assert addmm.flops == 2 * 16384 * 6144 * 2048 and addmm.matrix_dims == (1, 16384, 6144, 2048)
    bmm = op_cost("aten::bmm", {"Input Dims": [[8, 64, 32], [8, 32, 16]], "Input type": [F32, F32]})
    assert bmm.flops == 2 * 8 * 64 * 16 * 32 and bmm.dtype == "f32"
    qkv = [[16, 16, 1024, 128]] * 3
    forward = op_cost(
        "aten::_scaled_dot_product_flash_attention",
        {
            "Input Dims": qkv + [[], [], [], []],
            "Input type": [BF16] * 3,
            "Concrete Inputs": ["", "", "", "0.", "True", "False", ""],
        },
    )
    assert forward.flops == 4 * 16 * 16 * 1024 * 1024 * 128 // 2  # causal
    backward = op_cost(
        "aten::_scaled_dot_product_cudnn_attention_backward",
        {
            "Input Dims": [[16, 16, 1024, 128]] + qkv,
            "Input type": [BF16] * 4,
            "Concrete Inputs": [""] * 14 + ["False", ""],
        },
    )
    assert backward.flops == int(4 * 16 * 16 * 1024 * 1024 * 128 * 2.5)
    assert op_cost("aten::mm", {"Input Dims": [[4, 3], [5, 6]]}) is None  # inner dims disagree: not costed
    assert op_cost("aten::add_", {"Input type": [F32, F32]}) is None
    assert op_cost("aten::add_", {"flops": 1000, "Input type": [F32]}).flops == 1000  # the profiler's own count


def _x(cat, name, ts, dur, **args):
    return x_event(cat, name, ts, dur, **args)


def test_an_ops_flops_go_to_its_matrix_kernel(tmp_path):
    """aten::addmm (2 x 64 x 32 x 16 FLOPs) launches a GEMM of 30 µs and a 10 µs split-K reduction: the GEMM gets
    all its FLOPs, the reduction none (analysis.op_split); aten::add_ on floats launches a kernel whose precision
    its inputs give (32-bit), with no FLOPs."""
    events = [
        _x(
            "cpu_op",
            "aten::addmm",
            "1000",
            "100",
            **{"Input Dims": [[16], [64, 32], [32, 16]], "Input type": [BF16, BF16, BF16]},
        ),
        launch("1010", "5", 1),
        launch("1020", "5", 2),
        kernel("my_gemm_kernel", "1100", "30", 1, grid=[8, 1, 1], block=[128, 1, 1]),
        kernel("splitKreduce_kernel", "1131", "10", 2, grid=[8, 1, 1], block=[128, 1, 1]),
        _x("cpu_op", "aten::add_", "1200", "20", **{"Input type": [F32, F32, "Scalar"]}),
        launch("1205", "5", 3),
        kernel("elementwise_kernel", "1250", "5", 3, grid=[8, 1, 1], block=[128, 1, 1]),
    ]
    path = tmp_path / "worker0.1.pt.trace.json"
    path.write_text(trace_text(events))
    analysis = analyze_host(load_kineto_model(str(path)))
    rows = {row.name: row for row in analysis.kernels}
    flops = 2 * 64 * 32 * 16
    assert rows["my_gemm_kernel"].flops == pytest.approx(flops)
    assert rows["splitKreduce_kernel"].flops is None and rows["splitKreduce_kernel"].dtype == "bf16"
    assert rows["my_gemm_kernel"].dtype == "bf16" and rows["my_gemm_kernel"].compute == "matrix"
    assert rows["elementwise_kernel"].flops is None and rows["elementwise_kernel"].dtype == "f32"
    assert analysis.whole.category_ps["compute_unknown"].sum() == 0
    assert analysis.flop_utilization.flops == pytest.approx(flops)


def _optimizer_trace(tmp_path, op, kernel_name, params=20):
    """Two steps of an optimizer whose `Optimizer.step#` span launches 3 kernels per parameter from `op`."""
    events, corr, t = [], 100, 1000
    for step in range(2):
        events.append(_x("user_annotation", f"ProfilerStep#{step}", str(t), "5000"))
        events.append(_x("user_annotation", "Optimizer.step#SGD.step", str(t + 100), "4000"))
        for i in range(params * 3):
            start = t + 110 + i * 60
            events.append(_x("cpu_op", op, str(start), "50", **{"Input type": [F32, F32]}))
            events.append(launch(str(start + 5), "20", corr))
            events.append(kernel(kernel_name, str(start + 30), "4", corr, grid=[8, 1, 1], block=[128, 1, 1]))
            corr += 1
        t += 5000
    path = tmp_path / "worker0.1.pt.trace.json"
    path.write_text(trace_text(events))
    return path


def test_a_per_tensor_optimizer_loop_is_found_and_a_foreach_one_is_not(tmp_path):
    """60 aten::add_ kernels per step inside Optimizer.step (4 ms on the host, 0.24 ms on the GPU): the per-tensor
    loop; the same launches from aten::_foreach_add_ are the fix already applied."""
    from tb_gpu_advisor.pipeline import host_report

    report = host_report(load_kineto_model(str(_optimizer_trace(tmp_path, "aten::add_", "elementwise_kernel"))))
    found = {f["id"]: f for f in report["findings"]}
    loop = found["launch.per_tensor_optimizer"]
    assert loop["evidence"]["metrics"]["kernels_per_optimizer_step"] == 60
    assert loop["evidence"]["metrics"]["optimizer_host_ms_per_step"] == 4.0
    assert loop["evidence"]["metrics"]["optimizer_gpu_ms_per_step"] == 0.24
    assert "fused=True" in loop["fix"]
    fused = host_report(
        load_kineto_model(str(_optimizer_trace(tmp_path, "aten::_foreach_add_", "multi_tensor_apply_kernel")))
    )
    assert "launch.per_tensor_optimizer" not in {f["id"] for f in fused["findings"]}


def _attention_trace(tmp_path, softmax_kernel="softmax_warp_forward"):
    """Three steps of attention as bmm (Q.K^T) + softmax + bmm (P.V) on [64, 1024, 64] bf16 per head batch."""
    events, corr, t = [], 1, 1000
    qk = {"Input Dims": [[64, 1024, 64], [64, 64, 1024]], "Input type": [BF16, BF16]}
    pv = {"Input Dims": [[64, 1024, 1024], [64, 1024, 64]], "Input type": [BF16, BF16]}
    for step in range(3):
        events.append(_x("user_annotation", f"ProfilerStep#{step}", str(t), "3000"))
        for op, args, name, dur in (
            ("aten::bmm", qk, "nvjet_sm90_tst_bmm_a", 200),
            ("aten::_softmax", {"Input type": [BF16]}, softmax_kernel, 400),
            ("aten::bmm", pv, "nvjet_sm90_tst_bmm_b", 200),
        ):
            events.append(_x("cpu_op", op, str(t + 10), "30", **args))
            events.append(launch(str(t + 15), "10", corr))
            events.append(kernel(name, str(t + 100), str(dur), corr, grid=[264, 1, 1], block=[128, 1, 1]))
            corr += 1
            t += dur + 120
        t += 1000
    path = tmp_path / "worker0.1.pt.trace.json"
    path.write_text(
        trace_text(
            events,
            deviceProperties=[{"id": 0, "name": "NVIDIA H200", "computeMajor": 9, "computeMinor": 0, "numSms": 132}],
        )
    )
    return path


def test_unfused_attention_is_sized_from_its_matmul_flops(tmp_path):
    """2 x 2 x 64 x 1024 x 1024 x 64 FLOPs per step (17.2 GFLOP) at 45% of 989.4 TFLOP/s is 38.6 µs, replacing
    800 µs of matmul and softmax kernels per step; with a flash kernel in the trace there is no finding."""
    from tb_gpu_advisor.pipeline import host_report

    report = host_report(load_kineto_model(str(_attention_trace(tmp_path))))
    finding = {f["id"]: f for f in report["findings"]}["fusion.unfused_attention"]
    metrics = finding["evidence"]["metrics"]
    assert metrics["attention_kernel_ms"] == 2.4
    assert metrics["attention_tflop"] == pytest.approx(3 * 4 * 64 * 1024 * 1024 * 64 / 1e12, abs=1e-4)
    assert metrics["fused_estimate_ms"] == pytest.approx(
        3 * 4 * 64 * 1024 * 1024 * 64 / (989.4e12 * 0.45) * 1e3, abs=1e-3
    )
    assert finding["speedup_kind"] == "model"
    assert "scaled_dot_product_attention" in finding["fix"]
    fused = host_report(load_kineto_model(str(_attention_trace(tmp_path, "flash_fwd_kernel"))))
    assert "fusion.unfused_attention" not in {f["id"] for f in fused["findings"]}
