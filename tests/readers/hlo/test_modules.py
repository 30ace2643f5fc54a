"""HLO modules of a trace: parsed on demand, unknown or corrupt ones not costed, real JAX modules costed."""

from tb_gpu_advisor.readers.hlo.modules import op_costs, parse_module
from tb_gpu_advisor.testing.hlo import HloModuleBuilder, shape


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
    from tb_gpu_advisor.readers.load import load_model
    from tests.data import real_trace

    model = load_model(str(real_trace("jax0102_cpu_steps.xplane.pb")))
    # Keyed by each module's `program_id` stat (the id in its name, `jit_step(6)`), not the metadata's own id.
    assert sorted(model.hlo_protos) == [0, 2, 4, 6, 8]
    costs = op_costs(model.hlo_protos, [(6, "dot_general.0"), (6, "multiply_subtract_fusion"), (6, "wrapped_tanh")])
    assert costs[(6, "dot_general.0")].flops == 2 * 256 * 512 * 512
    assert costs[(6, "dot_general.0")].matrix_dims == (1, 256, 512, 512)
    assert costs[(6, "multiply_subtract_fusion")].flops == 2 * 512 * 512  # multiply and subtract, f32[512,512]
    assert costs[(6, "wrapped_tanh")].flops == 0  # a transcendental
