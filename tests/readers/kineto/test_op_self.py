"""Operators' self time (readers/kineto/op_self): nested operators add up, each counted once."""

from array import array

from tb_gpu_advisor.readers.kineto.op_self import op_self_ps

NAMES = ["aten::matmul", "aten::mm", "aten::tanh", "aten::linear", "aten::addmm"]


def _thread(*events):
    """Columns of one thread's cpu_op events: (start, end, name id)."""
    return (array("q", [e[0] for e in events]), array("q", [e[1] for e in events]), array("i", [e[2] for e in events]))


def test_a_child_is_taken_from_its_parent_once():
    # matmul 0-10 around mm 1-9; tanh 10-14 beside it; linear 20-30 around addmm 21-29 around a nested mm 22-25.
    ops = {0: _thread((0, 10, 0), (1, 9, 1), (10, 14, 2), (20, 30, 3), (21, 29, 4), (22, 25, 1))}
    found = op_self_ps(ops, NAMES)
    assert found == {"aten::matmul": 2, "aten::mm": 8 + 3, "aten::tanh": 4, "aten::linear": 2, "aten::addmm": 5}
    assert sum(found.values()) == 14 + 10  # the threads' busy time, each instant once


def test_threads_apart_and_a_parent_tied_at_its_start():
    ops = {0: _thread((5, 9, 1), (5, 10, 0)), 1: _thread((0, 4, 1))}  # listed child first, same start
    assert op_self_ps(ops, NAMES) == {"aten::matmul": 1, "aten::mm": 8}


def test_on_a_real_capture_nested_time_is_counted_once():
    from tests.data import REAL
    import tb_gpu_advisor.pipeline as pipeline

    path = next((REAL / "ddp_cpu" / "slow_compute").glob("rank2.*"))
    model = pipeline.load_model(str(path))
    found = model.host_activity.op_self_ps
    # rank 2's 16 extra matmuls a step: mm's self time carries them, matmul's own is small
    assert found["aten::mm"] > 10 * found["aten::matmul"]
    assert found["aten::mm"] <= model.host_activity.op_totals["aten::mm"][1]
    inclusive = sum(t for n, (_, t) in model.host_activity.op_totals.items() if n in found)
    assert 0 < sum(found.values()) < 0.7 * inclusive  # nested time no longer counted at every level
