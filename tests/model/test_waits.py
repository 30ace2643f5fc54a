"""Waits and wakes by name, in XPlane's and Kineto's spellings of Python-tracer calls (seen in real captures)."""

import pytest

from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.waits import call_role, outermost


@pytest.mark.parametrize(
    "name, role",
    [
        # XPlane (JAX 0.10 Python tracer): a queue.Queue.get on the step thread and the loader's put
        ("$queue.py:154 get", ("wait", "queue")),
        ("$threading.py:295 wait", ("wait", "condition")),
        ("$<unknown> acquire", ("wait", "lock")),
        ("$queue.py:122 put", ("wake", None)),
        ("$threading.py:366 notify", ("wake", None)),
        ("$<unknown> release", ("wake", None)),
        ("$_base.py:428 result", ("wait", "future")),
        ("$threading.py:1080 join", ("wait", "thread_join")),
        # Kineto (PyTorch with_stack): a DataLoader with a worker process
        ("torch/utils/data/dataloader.py(1278): _try_get_data", ("wait", "data_loader")),
        ("multiprocessing/queues.py(98): get", ("wait", "process_queue")),
        ("multiprocessing/connection.py(253): poll", ("wait", "process_queue")),
        ("selectors.py(402): select", ("wait", "poll")),
        ("<built-in method poll of select.poll object at 0x7f82cdcc5c50>", ("wait", "poll")),
        ("<built-in method acquire of _thread.lock object at 0x7f82cdcbb880>", ("wait", "lock")),
        ("<built-in method release of _thread.lock object at 0x7f82cdf742c0>", ("wake", None)),
        ("queue.py(171): get", ("wait", "queue")),
    ],
)
def test_waits_and_wakes(name, role):
    assert call_role(name) == role


@pytest.mark.parametrize(
    "name",
    [
        "$<unknown> get",
        "$<unknown> join",
        "$builtins getattr",
        "$time sleep",
        "$dataset.py:10 get",
        "<built-in method acquire of Foo object at 0x1>",
        "<built-in method get of dict object at 0x1>",
        "aten::result_type",
        "IteratorGetNextOp::DoCompute",
        "Wait for donation holds",
        "SlinkyThreadPool::Await",
        "ThunkExecutor::Execute (wait for completion)",
        "## wait_for_batch ##",
        "threading.py(1): run",
    ],
)
def test_other_calls_are_neither(name):
    assert call_role(name) is None


def test_nested_waits_count_under_the_outermost_call():
    found = outermost(
        {
            "queue": intervals.union([10], [300]),
            "condition": intervals.union([20], [290]),
            "lock": intervals.union([30, 400], [280, 450]),
        }
    )
    assert {kind: (spans.start_ps.tolist(), spans.end_ps.tolist()) for kind, spans in found.items()} == {
        "queue": ([10], [300]),
        "lock": ([400], [450]),
    }
