"""Exact FLOPs and logical bytes of HLO instructions (hlo.cost), one per kind of op we cost."""

import itertools

import pytest

from tb_gpu_advisor.hlo import schema
from tb_gpu_advisor.hlo.op_cost import MATRIX, VECTOR
from tb_gpu_advisor.hlo.modules import op_costs, parse_module
from tb_gpu_advisor.testing.hlo import HloModuleBuilder, fmha_config, gemm_config, shape, tuple_shape
from tb_gpu_advisor.testing.roofline_trace import EXPECTED, MODULES


def _cost(module, name):
    return op_costs({1: module.to_bytes()}, [(1, name)])[(1, name)]


@pytest.mark.parametrize("kernel", EXPECTED, ids=lambda k: k.op + "@" + str(k.program_id))
def test_generated_modules_cost_exactly(kernel):
    data = MODULES[kernel.program_id]().to_bytes()
    cost = op_costs({kernel.program_id: data}, [(kernel.program_id, kernel.op)])[(kernel.program_id, kernel.op)]
    assert (cost.flops, cost.bytes) == (kernel.flops, kernel.bytes)
    assert cost.compute == (VECTOR if kernel.op == "add_fusion" else MATRIX)


def test_gemm_custom_call_is_two_mnk_and_skips_the_workspace():
    module = HloModuleBuilder()
    a = module.entry.parameter("a", shape("bf16", 1000, 24))  # K first: lhs contracting dimension 0
    b = module.entry.parameter("b", shape("bf16", 24, 8))
    module.entry.add("gemm", "custom-call", tuple_shape(shape("bf16", 1000, 8), shape("s8", 1 << 20)), (a, b),
                     custom_call_target="__cublas$gemm", backend_config=gemm_config((1,), (0,)))
    cost = _cost(module, "gemm")
    assert cost.flops == 2 * 1000 * 8 * 24
    assert cost.bytes == (1000 * 24 + 24 * 8 + 1000 * 8) * 2
    assert cost.dtype == "bf16"


def test_gemm_without_dimension_numbers_has_no_flops_but_bytes():
    module = HloModuleBuilder()
    a = module.entry.parameter("a", shape("f16", 16, 16))
    module.entry.add("gemm", "custom-call", shape("f16", 16, 16), (a, a), custom_call_target="__cublas$gemm",
                     backend_config={"gemm_backend_config": {}})
    cost = _cost(module, "gemm")
    assert cost.flops is None and cost.bytes == 3 * 16 * 16 * 2


@pytest.mark.parametrize("mask, backward, factor", [("NO_MASK", False, 1.0), ("CAUSAL", False, 0.5),
                                                    ("NO_MASK", True, 2.5), ("PADDING_CAUSAL", True, 1.25)])
def test_attention_convention(mask, backward, factor):
    batch, seq, heads, dim = 3, 128, 4, 32
    module = HloModuleBuilder()
    qkv = [module.entry.parameter(n, shape("bf16", batch, heads, seq, dim)) for n in "qkv"]  # BNTH
    target = "__cudnn$fmhaSoftmaxBackward" if backward else "__cudnn$fmhaSoftmax"
    module.entry.add("fmha", "custom-call", tuple_shape(shape("bf16", batch, heads, seq, dim), shape("u8", 16)),
                     qkv, custom_call_target=target,
                     backend_config=fmha_config(batch, heads, seq, seq, mask, layout_bthd=False))
    assert _cost(module, "fmha").flops == int(4 * batch * heads * seq * seq * dim * factor)


def _brute_force_conv_macs(in_size, window, stride, pad_low, dilation, base, out_size):
    extent = (in_size - 1) * base
    return sum(1 for o, k in itertools.product(range(out_size), range(window))
               if 0 <= o * stride + k * dilation - pad_low <= extent and (o * stride + k * dilation - pad_low) % base == 0)


@pytest.mark.parametrize("stride, pad, dilation, base", [(1, 1, 1, 1), (2, 0, 1, 1), (1, 2, 2, 1), (1, 1, 1, 2)])
def test_convolution_counts_only_multiply_adds_inside_the_input(stride, pad, dilation, base):
    height, window, batch, cin, cout = 9, 3, 2, 5, 7
    dilated = (height - 1) * base + 1
    out = (dilated + 2 * pad - ((window - 1) * dilation + 1)) // stride + 1
    module = HloModuleBuilder()
    x = module.entry.parameter("x", shape("f32", batch, height, height, cin))
    w = module.entry.parameter("w", shape("f32", window, window, cin, cout))
    numbers = schema.ConvolutionDimensionNumbers(
        input_batch_dimension=0, input_feature_dimension=3, input_spatial_dimensions=[1, 2],
        kernel_input_feature_dimension=2, kernel_output_feature_dimension=3, kernel_spatial_dimensions=[0, 1],
        output_batch_dimension=0, output_feature_dimension=3, output_spatial_dimensions=[1, 2])
    dim = dict(size=window, stride=stride, padding_low=pad, padding_high=pad, window_dilation=dilation,
               base_dilation=base)
    window_proto = schema.Window(dimensions=[schema.WindowDimension(**dim), schema.WindowDimension(**dim)])
    module.entry.add("conv", "convolution", shape("f32", batch, out, out, cout), (x, w),
                     convolution_dimension_numbers=numbers, window=window_proto)
    per_dim = _brute_force_conv_macs(height, window, stride, pad, dilation, base, out)
    cost = _cost(module, "conv")
    assert cost.flops == 2 * batch * cout * cin * per_dim * per_dim
    assert cost.bytes == 4 * (batch * height * height * cin + window * window * cin * cout + batch * out * out * cout)


def test_reduce_counts_its_reducer_per_reduced_element():
    module = HloModuleBuilder()
    body = module.computation("sum")
    p, q = body.parameter("p", shape("f32")), body.parameter("q", shape("f32"))
    body.add("add", "add", shape("f32"), (p, q))
    x = module.entry.parameter("x", shape("f32", 64, 100))
    zero = module.entry.add("zero", "constant", shape("f32"))
    module.entry.add("reduce", "reduce", shape("f32", 64), (x, zero), dimensions=[1], called=[body])
    assert _cost(module, "reduce").flops == 64 * 99


def test_unknown_op_in_a_fusion_leaves_flops_null_and_bytes_known():
    module = HloModuleBuilder()
    fused = module.computation("fused")
    p = fused.parameter("p", shape("f32", 10))
    fused.add("sort", "sort", shape("f32", 10), (p,))
    x = module.entry.parameter("x", shape("f32", 10))
    module.entry.add("fusion", "fusion", shape("f32", 10), (x,), called=[fused])
    cost = _cost(module, "fusion")
    assert cost.flops is None and cost.bytes == 80


def test_collectives_and_unknown_names_are_not_costed():
    module = HloModuleBuilder()
    x = module.entry.parameter("x", shape("f32", 10))
    module.entry.add("all-reduce", "all-reduce", shape("f32", 10), (x,))
    costs = op_costs({1: module.to_bytes()}, [(1, "all-reduce"), (1, "missing"), (2, "x")])
    assert costs == {(1, "all-reduce"): None, (1, "missing"): None}


def test_a_corrupt_module_is_skipped():
    assert parse_module(b"\xff\xff\xff") is None
    assert op_costs({1: b"\xff\xff\xff"}, [(1, "x")]) == {(1, "x"): None}


def test_real_jax_cpu_modules_parse_and_cost():
    """The HLO of a real JAX 0.10 CPU capture: every module decodes; its matmul is 2 x 256 x 512 x 512."""
    from tb_gpu_advisor.model.build import load_model
    from tests.data import real_trace
    model = load_model(str(real_trace("jax0102_cpu_steps.xplane.pb")))
    assert sorted(model.hlo_protos) == [1, 2, 3, 4, 5]
    costs = op_costs(model.hlo_protos, [(5, "dot_general.0"), (5, "multiply_subtract_fusion"), (5, "wrapped_tanh")])
    assert costs[(5, "dot_general.0")].flops == 2 * 256 * 512 * 512
    assert costs[(5, "dot_general.0")].matrix_dims == (1, 256, 512, 512)
    assert costs[(5, "multiply_subtract_fusion")].flops == 2 * 512 * 512  # multiply and subtract, f32[512,512]
    assert costs[(5, "wrapped_tanh")].flops == 0  # a transcendental


def test_dynamic_update_slice_counts_the_update_not_the_buffer():
    """In place: a 1 MiB slice written into a 64 MiB buffer moves the slice (and the indices), not the buffer."""
    module = HloModuleBuilder()
    fused = module.computation("fused_update")
    buffer = fused.parameter("param_0", shape("f32", 16384, 1024))
    update = fused.parameter("param_1", shape("f32", 256, 1024))
    row = fused.parameter("param_2", shape("s32"))
    zero = fused.add("zero", "constant", shape("s32"))
    fused.add("dus", "dynamic-update-slice", shape("f32", 16384, 1024), (buffer, update, row, zero))
    args = [module.entry.parameter(n, s) for n, s in (("buf", shape("f32", 16384, 1024)),
                                                        ("upd", shape("f32", 256, 1024)), ("i", shape("s32")))]
    module.entry.add("update_fusion", "fusion", shape("f32", 16384, 1024), args, fusion_kind="kLoop",
                     called=[fused])
    module.entry.add("plain_dus", "dynamic-update-slice", shape("f32", 16384, 1024),
                     (args[0], args[1], args[2], args[2]))
    assert _cost(module, "update_fusion").bytes == 256 * 1024 * 4 + 4 + 256 * 1024 * 4
    assert _cost(module, "plain_dus").bytes == 256 * 1024 * 4 + 4 + 4 + 256 * 1024 * 4


@pytest.mark.parametrize("stride, pad, dilation, size, window", [(1, 0, 1, 1, 1), (3, 5, 2, 7, 4), (2, 7, 3, 5, 6),
                                                                 (1, 30, 1, 4, 3), (4, 0, 1, 50, 50)])
def test_closed_form_conv_positions_match_brute_force(stride, pad, dilation, size, window):
    from tb_gpu_advisor.hlo.op_math import valid_positions
    out = max(1, (size + 2 * pad - ((window - 1) * dilation + 1)) // stride + 1)
    dim = schema.WindowDimension(size=window, stride=stride, padding_low=pad, padding_high=pad,
                                 window_dilation=dilation)
    assert valid_positions(dim, size, out) == _brute_force_conv_macs(size, window, stride, pad, dilation, 1, out)


def test_hostile_modules_are_not_costed_and_never_raise():
    """Impossible sizes, negative dims, self-calling fusions: None, never an exception or a huge number."""
    module = HloModuleBuilder()
    x = module.entry.parameter("x", shape("f32", 2**40, 2**40))
    module.entry.add("huge", "dot", shape("f32", 2**40, 2**40), (x, x),
                     dot_dimension_numbers=schema.DotDimensionNumbers(lhs_contracting_dimensions=[1],
                                                                      rhs_contracting_dimensions=[0]))
    neg = module.entry.parameter("neg", shape("f32", -4))
    module.entry.add("negative", "add", shape("f32", -4), (neg, neg))
    loop = module.computation("loop")
    p = loop.parameter("p", shape("f32", 4))
    inner = loop.add("inner", "fusion", shape("f32", 4), (p,))
    inner.called_computation_ids.append(loop.proto.id)  # calls itself
    y = module.entry.parameter("y", shape("f32", 4))
    module.entry.add("cyclic", "fusion", shape("f32", 4), (y,), called=[loop])
    costs = op_costs({1: module.to_bytes()}, [(1, "huge"), (1, "negative"), (1, "cyclic")])
    assert costs[(1, "huge")].flops is None and costs[(1, "huge")].bytes is None  # 2^121 FLOPs: impossible
    assert costs[(1, "negative")].bytes is None
    assert costs[(1, "cyclic")].flops is None and costs[(1, "cyclic")].bytes == 32
