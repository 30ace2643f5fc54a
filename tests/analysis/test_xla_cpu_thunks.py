"""XLA's CPU thunks split by what their HLO instruction computes (analysis.xla_cpu_thunks)."""

from tb_gpu_advisor.analysis.xla_cpu_thunks import xla_cpu_thunks
from tb_gpu_advisor.testing.hlo import single_op_module

PROTOS = {
    1: single_op_module("jit_add", "wrapped_add", "add").to_bytes(),
    2: single_op_module("jit_matmul", "ynn_fusion", "dot").to_bytes(),
}


def test_thunks_and_their_end_events_by_kind():
    totals = {
        "wrapped_add": (20, 400),
        "end: wrapped_add": (20, 20),
        "ynn_fusion": (10, 900),
        "end: ynn_fusion": (10, 10),
        "ThunkExecutor::Execute (wait for completion)": (30, 5),
    }
    found = xla_cpu_thunks(totals, PROTOS)
    assert (found.fusible_ps, found.other_ps, found.unknown_ps, found.fusible_count) == (420, 910, 5, 20)
    assert found.fusible == ("wrapped_add",) and found.classified


def test_without_the_modules_every_thunk_is_unknown():
    found = xla_cpu_thunks({"wrapped_add": (20, 400)}, {})
    assert (found.fusible_ps, found.other_ps, found.unknown_ps) == (0, 0, 400) and not found.classified
