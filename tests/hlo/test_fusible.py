"""Which HLO instructions XLA folds into their neighbours (hlo.fusible), as XLA's CPU runtime names its thunks."""

from tb_gpu_advisor.hlo.fusible import fusible_names
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
    assert fusible_names(protos, names) == {"wrapped_subtract": True, "wrapped_tanh": True, "ynn_fusion": False,
                                            "copy": True, "reduce.1": False}


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
