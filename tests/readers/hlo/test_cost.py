"""Exact FLOPs and logical bytes of HLO instructions (hlo.cost): fusions, reductions, in-place updates, and
malformed modules."""

import pytest

from tb_gpu_advisor.readers.hlo import schema
from tb_gpu_advisor.readers.hlo.modules import op_costs
from tb_gpu_advisor.readers.hlo.op_cost import MATRIX, VECTOR
from tb_gpu_advisor.testing.hlo import HloModuleBuilder, shape
from tb_gpu_advisor.testing.roofline_trace import EXPECTED, MODULES


def _cost(module, name):
    return op_costs({1: module.to_bytes()}, [(1, name)])[(1, name)]


@pytest.mark.parametrize("kernel", EXPECTED, ids=lambda k: k.op + "@" + str(k.program_id))
def test_generated_modules_cost_exactly(kernel):
    data = MODULES[kernel.program_id]().to_bytes()
    cost = op_costs({kernel.program_id: data}, [(kernel.program_id, kernel.op)])[(kernel.program_id, kernel.op)]
    assert (cost.flops, cost.bytes) == (kernel.flops, kernel.bytes)
    assert cost.compute == (VECTOR if kernel.op == "add_fusion" else MATRIX)


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


def test_dynamic_update_slice_counts_the_update_not_the_buffer():
    """In place: a 1 MiB slice written into a 64 MiB buffer moves the slice (and the indices), not the buffer."""
    module = HloModuleBuilder()
    fused = module.computation("fused_update")
    buffer = fused.parameter("param_0", shape("f32", 16384, 1024))
    update = fused.parameter("param_1", shape("f32", 256, 1024))
    row = fused.parameter("param_2", shape("s32"))
    zero = fused.add("zero", "constant", shape("s32"))
    fused.add("dus", "dynamic-update-slice", shape("f32", 16384, 1024), (buffer, update, row, zero))
    args = [
        module.entry.parameter(n, s)
        for n, s in (("buf", shape("f32", 16384, 1024)), ("upd", shape("f32", 256, 1024)), ("i", shape("s32")))
    ]
    module.entry.add("update_fusion", "fusion", shape("f32", 16384, 1024), args, fusion_kind="kLoop", called=[fused])
    module.entry.add(
        "plain_dus", "dynamic-update-slice", shape("f32", 16384, 1024), (args[0], args[1], args[2], args[2])
    )
    assert _cost(module, "update_fusion").bytes == 256 * 1024 * 4 + 4 + 256 * 1024 * 4
    assert _cost(module, "plain_dus").bytes == 256 * 1024 * 4 + 4 + 4 + 256 * 1024 * 4


def test_hostile_modules_are_not_costed_and_never_raise():
    """Impossible sizes, negative dims, self-calling fusions: None, never an exception or a huge number."""
    module = HloModuleBuilder()
    x = module.entry.parameter("x", shape("f32", 2**40, 2**40))
    module.entry.add(
        "huge",
        "dot",
        shape("f32", 2**40, 2**40),
        (x, x),
        dot_dimension_numbers=schema.DotDimensionNumbers(
            lhs_contracting_dimensions=[1], rhs_contracting_dimensions=[0]
        ),
    )
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
