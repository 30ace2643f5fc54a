"""Which HLO instructions XLA folds into their neighbours (hlo.fusible), as XLA's CPU runtime names its thunks."""

from tb_gpu_advisor.readers.hlo.fusible import fusible_names
from tb_gpu_advisor.testing.hlo import HloModuleBuilder, shape, single_op_module


def test_element_wise_and_data_movement_fuse_dots_and_reductions_do_not():
    sub = single_op_module("jit_subtract", "wrapped_subtract", "subtract")
    tanh = single_op_module("jit_tanh", "wrapped_tanh", "tanh", operands=1)
    matmul = single_op_module("jit_matmul", "ynn_fusion", "dot")
    reshape = HloModuleBuilder("jit_reshape")
    x = reshape.entry.parameter("x", shape("f32", 32, 64))
    reshape.entry.add("copy", "copy", shape("f32", 32, 64), (x,))
    reduce = HloModuleBuilder("jit_reduce_sum")
    body = reduce.computation("region_0")
    p, q = body.parameter("p", shape("f32")), body.parameter("q", shape("f32"))
    body.add("add", "add", shape("f32"), (p, q))
    y = reduce.entry.parameter("y", shape("f32", 32, 64))
    zero = reduce.entry.add("zero", "constant", shape("f32"))
    reduce.entry.add("reduce.1", "reduce", shape("f32", 32), (y, zero), dimensions=[1], called=[body])
    protos = {i: m.to_bytes() for i, m in enumerate((sub, tanh, matmul, reshape, reduce), 1)}
    names = ["wrapped_subtract", "wrapped_tanh", "ynn_fusion", "copy", "reduce.1", "ThunkExecutor::Execute"]
    assert fusible_names(protos, names) == {
        "wrapped_subtract": True,
        "wrapped_tanh": True,
        "ynn_fusion": False,
        "copy": True,
        "reduce.1": False,
    }


def test_a_name_modules_give_to_different_work_is_not_fusible():
    """`fusion` is an element-wise loop in one module and a dot in another: its thunks' time is kept."""
    loop = single_op_module("jit_add", "fusion", "add")
    dot = single_op_module("jit_dot_general", "fusion", "dot")
    assert fusible_names({1: loop.to_bytes()}, ["fusion"]) == {"fusion": True}
    assert fusible_names({1: loop.to_bytes(), 2: dot.to_bytes()}, ["fusion"]) == {"fusion": False}


def test_modules_that_do_not_decode_are_skipped():
    loop = single_op_module("jit_add", "wrapped_add", "add")
    assert fusible_names({1: b"\xff\xff not a module", 2: loop.to_bytes()}, ["wrapped_add"]) == {"wrapped_add": True}
    assert fusible_names({}, ["wrapped_add"]) == {}


def test_a_fusion_holding_a_reduction_keeps_its_work():
    """`reduce_multiply_fusion`: a multiply feeding a reduce inside one fusion, as XLA's CPU compiler emits for
    jnp.mean; a fusion nested in a fusion is looked through."""
    module = HloModuleBuilder("jit__mean")
    region = module.computation("region_0")
    p, q = region.parameter("p", shape("f32")), region.parameter("q", shape("f32"))
    region.add("add", "add", shape("f32"), (p, q))
    inner = module.computation("inner")
    a, b = inner.parameter("a", shape("f32", 32)), inner.parameter("b", shape("f32", 32))
    inner.add("multiply", "multiply", shape("f32", 32), (a, b))
    body = module.computation("fused")
    x, y = body.parameter("x", shape("f32", 32)), body.parameter("y", shape("f32", 32))
    product = body.add("nested", "fusion", shape("f32", 32), (x, y), called=[inner], fusion_kind="kLoop")
    zero = body.add("zero", "constant", shape("f32"))
    body.add("reduce", "reduce", shape("f32"), (product, zero), dimensions=[0], called=[region])
    args = [module.entry.parameter(f"arg{i}", shape("f32", 32)) for i in range(2)]
    module.entry.add("reduce_multiply_fusion", "fusion", shape("f32"), args, called=[body], fusion_kind="kLoop")
    module.entry.add("multiply_fusion", "fusion", shape("f32", 32), args, called=[inner], fusion_kind="kLoop")
    assert fusible_names({1: module.to_bytes()}, ["reduce_multiply_fusion", "multiply_fusion", "nested"]) == {
        "reduce_multiply_fusion": False,
        "multiply_fusion": True,
        "nested": True,
    }
