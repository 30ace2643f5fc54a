"""analysis.unfused_attention: the kernels from an attention matmul to the last one after it, with a softmax in
between and no other matrix kernel, are the attention's."""

import numpy as np

from tb_gpu_advisor.analysis.unfused_attention import attention_kernel_mask
from tb_gpu_advisor.model.trace import ActivityKind, DeviceActivity


def _activity(events):
    """DeviceActivity of (kernel name, op name, kind) events, one microsecond each, in order."""
    names = sorted({name for name, _, _ in events})
    ops = sorted({op for _, op, _ in events if op})
    count = len(events)
    return DeviceActivity(
        start_ps=np.arange(count, dtype=np.int64) * 2_000_000,
        duration_ps=np.full(count, 1_000_000, np.int64),
        kind=np.array([int(kind) for _, _, kind in events], np.int8),
        stream_id=np.full(count, 7),
        correlation_id=np.arange(count),
        name_id=np.array([names.index(n) for n, _, _ in events]),
        config_id=np.full(count, -1),
        op_id=np.array([ops.index(op) if op else -1 for _, op, _ in events]),
        copy_direction=np.zeros(count, np.int8),
        copy_id=np.full(count, -1),
        names=tuple(names),
        configs=(),
        op_names=tuple(ops),
        copies=(),
    )


K, COPY = ActivityKind.KERNEL, ActivityKind.MEMCPY
GEMM = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"
EW = "void at::native::vectorized_elementwise_kernel<4>"


def test_scale_mask_softmax_and_casts_between_the_matmuls_are_the_attentions():
    events = [
        (GEMM, "aten::addmm", K),  # the QKV projection: not attention
        (GEMM, "aten::bmm", K),
        (EW, "aten::div", K),
        (EW, "aten::masked_fill_", K),
        ("Memcpy", None, COPY),
        ("softmax_warp_forward", "aten::_softmax", K),
        (EW, "aten::copy_", K),
        (GEMM, "aten::bmm", K),
        (GEMM, "aten::mm", K),  # the output projection ends the run
        (EW, "aten::add", K),
    ]
    mask = attention_kernel_mask(_activity(events))
    assert mask.tolist() == [False, True, True, True, False, True, True, True, False, False]


def test_matmuls_without_a_softmax_between_them_are_not_attention():
    events = [
        (GEMM, "aten::bmm", K),
        (EW, "aten::mul", K),
        (GEMM, "aten::bmm", K),
        ("softmax_warp_forward", "aten::_softmax", K),
    ]
    assert not attention_kernel_mask(_activity(events)).any()
