"""GEMM and cuDNN fused-attention custom-calls costed from their shapes and backend config."""

import pytest

from tb_gpu_advisor.readers.hlo.modules import op_costs
from tb_gpu_advisor.testing.hlo import HloModuleBuilder, fmha_config, gemm_config, shape, tuple_shape


def _cost(module, name):
    return op_costs({1: module.to_bytes()}, [(1, name)])[(1, name)]


def test_gemm_custom_call_is_two_mnk_and_skips_the_workspace():
    module = HloModuleBuilder()
    a = module.entry.parameter("a", shape("bf16", 1000, 24))  # K first: lhs contracting dimension 0
    b = module.entry.parameter("b", shape("bf16", 24, 8))
    module.entry.add(
        "gemm",
        "custom-call",
        tuple_shape(shape("bf16", 1000, 8), shape("s8", 1 << 20)),
        (a, b),
        custom_call_target="__cublas$gemm",
        backend_config=gemm_config((1,), (0,)),
    )
    cost = _cost(module, "gemm")
    assert cost.flops == 2 * 1000 * 8 * 24
    assert cost.bytes == (1000 * 24 + 24 * 8 + 1000 * 8) * 2
    assert cost.dtype == "bf16"


def test_gemm_without_dimension_numbers_has_no_flops_but_bytes():
    module = HloModuleBuilder()
    a = module.entry.parameter("a", shape("f16", 16, 16))
    module.entry.add(
        "gemm",
        "custom-call",
        shape("f16", 16, 16),
        (a, a),
        custom_call_target="__cublas$gemm",
        backend_config={"gemm_backend_config": {}},
    )
    cost = _cost(module, "gemm")
    assert cost.flops is None and cost.bytes == 3 * 16 * 16 * 2


@pytest.mark.parametrize(
    "mask, backward, factor",
    [("NO_MASK", False, 1.0), ("CAUSAL", False, 0.5), ("NO_MASK", True, 2.5), ("PADDING_CAUSAL", True, 1.25)],
)
def test_attention_convention(mask, backward, factor):
    batch, seq, heads, dim = 3, 128, 4, 32
    module = HloModuleBuilder()
    qkv = [module.entry.parameter(n, shape("bf16", batch, heads, seq, dim)) for n in "qkv"]  # BNTH
    target = "__cudnn$fmhaSoftmaxBackward" if backward else "__cudnn$fmhaSoftmax"
    module.entry.add(
        "fmha",
        "custom-call",
        tuple_shape(shape("bf16", batch, heads, seq, dim), shape("u8", 16)),
        qkv,
        custom_call_target=target,
        backend_config=fmha_config(batch, heads, seq, seq, mask, layout_bthd=False),
    )
    assert _cost(module, "fmha").flops == int(4 * batch * heads * seq * seq * dim * factor)


@pytest.mark.parametrize("target", ["te_fused_attn_forward", "te_fused_attn_backward", "te_fused_attn_forward_ffi"])
def test_transformer_engine_attention_is_null_never_guessed_from_shapes(target):
    """TE packs its sizes in an opaque descriptor (docs/report.md, "Null, never guessed"): the shapes alone
    cannot tell B, H, S, D apart (the QKV layout decides), so the call is not costed at all."""
    module = HloModuleBuilder()
    qkv = [module.entry.parameter(n, shape("bf16", 2, 512, 16, 64)) for n in "qkv"]
    module.entry.add(
        "attn",
        "custom-call",
        tuple_shape(shape("bf16", 2, 512, 16, 64), shape("u8", 16)),
        qkv,
        custom_call_target=target,
        backend_config={"opaque": "packed"},
    )
    cost = _cost(module, "attn")
    assert cost is None
