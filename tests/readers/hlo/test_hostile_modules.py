"""Crafted HLO modules (issue 28): computations that each call the next twice, cycles, and nesting deeper than
any compiler writes are costed and judged in time linear in the module's size, never exponential."""

import time

from tb_gpu_advisor.readers.hlo import schema
from tb_gpu_advisor.readers.hlo.cost import MAX_CALL_DEPTH
from tb_gpu_advisor.readers.hlo.fusible import fusible_names
from tb_gpu_advisor.readers.hlo.modules import op_costs
from tb_gpu_advisor.testing.hlo import HloModuleBuilder, shape

DEPTH = 60


def doubling_module(depth=DEPTH, opcode="add"):
    """Entry `top` fuses c0; each c<i> holds `opcode` on its parameter and two fusions of c<i+1>: a naive walk
    visits 2**depth computations. The serialized module is a few KB."""
    module = HloModuleBuilder()
    computations = [module.computation(f"c{i}") for i in range(depth)]
    for i, computation in enumerate(computations):
        p = computation.parameter("p", shape("f32", 8))
        computation.add(f"op{i}", opcode, shape("f32", 8), (p, p))
        if i + 1 < depth:
            computation.add(f"left{i}", "fusion", shape("f32", 8), (p,), called=[computations[i + 1]])
            computation.add(f"right{i}", "fusion", shape("f32", 8), (p,), called=[computations[i + 1]])
    x = module.entry.parameter("x", shape("f32", 8))
    module.entry.add("top", "fusion", shape("f32", 8), (x,), called=[computations[0]])
    return module


def _timed(function, *args):
    start = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - start


def test_doubling_module_is_small_and_costed_in_linear_time():
    data = doubling_module().to_bytes()
    assert len(data) < 16_000
    costs, seconds = _timed(op_costs, {1: data}, [(1, "top")])
    assert seconds < 0.5
    # Counted exactly (2**60 - 1 adds of 8 elements); the roofline's plausibility cap judges such a count against
    # the kernel's time (tests/analysis/test_roofline_plausibility.py).
    assert costs[(1, "top")].flops == (2**DEPTH - 1) * 8


def test_doubling_module_counts_each_call_when_the_total_is_plausible():
    """Memoized, the walk still counts every call: depth 10 runs 2**10 - 1 adds of 8 elements."""
    costs = op_costs({1: doubling_module(depth=10).to_bytes()}, [(1, "top")])
    assert costs[(1, "top")].flops == (2**10 - 1) * 8


def test_doubling_module_is_judged_fusible_in_linear_time():
    data = doubling_module().to_bytes()
    found, seconds = _timed(fusible_names, {1: data}, ["top", "left0"])
    assert seconds < 0.5
    assert found == {"top": True, "left0": True}
    found, seconds = _timed(fusible_names, {1: doubling_module(opcode="sort").to_bytes()}, ["top"])
    assert seconds < 0.5 and found == {"top": False}


def cyclic_module(entry_op="cyclic"):
    """(builder, entry parameter) of a module whose computations a and b call each other, entered by `entry_op`."""
    module = HloModuleBuilder()
    a, b = module.computation("a"), module.computation("b")
    pa, pb = a.parameter("p", shape("f32", 8)), b.parameter("p", shape("f32", 8))
    a.add("to_b", "fusion", shape("f32", 8), (pa,), called=[b])
    b.add("to_a", "fusion", shape("f32", 8), (pb,), called=[a])
    x = module.entry.parameter("x", shape("f32", 8))
    module.entry.add(entry_op, "fusion", shape("f32", 8), (x,), called=[a])
    return module, x


def test_cycles_and_missing_computations_are_not_costed():
    module, x = cyclic_module()
    module.entry.add("missing", "fusion", shape("f32", 8), (x,)).called_computation_ids.append(999)
    data = module.to_bytes()
    costs = op_costs({1: data}, [(1, "cyclic"), (1, "missing"), (1, "to_a")])
    assert costs[(1, "cyclic")].flops is None and costs[(1, "missing")].flops is None
    assert costs[(1, "to_a")].flops is None
    assert fusible_names({1: data}, ["cyclic", "missing"]) == {"cyclic": False, "missing": False}


def test_nesting_deeper_than_the_limit_is_not_followed():
    module = HloModuleBuilder()
    chain = [module.computation(f"c{i}") for i in range(MAX_CALL_DEPTH + 20)]
    for i, computation in enumerate(chain):
        p = computation.parameter("p", shape("f32", 8))
        if i + 1 < len(chain):
            computation.add(f"f{i}", "fusion", shape("f32", 8), (p,), called=[chain[i + 1]])
        else:
            computation.add("add", "add", shape("f32", 8), (p, p))
    x = module.entry.parameter("x", shape("f32", 8))
    module.entry.add("deep", "fusion", shape("f32", 8), (x,), called=[chain[0]])
    data = module.to_bytes()
    (cost,), seconds = _timed(lambda: list(op_costs({1: data}, [(1, "deep")]).values()))
    assert seconds < 0.5 and cost.flops is None
    assert fusible_names({1: data}, ["deep"]) == {"deep": False}
    assert isinstance(schema.HloProto.FromString(data), schema.HloProto)
