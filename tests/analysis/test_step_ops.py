"""Step ops vs tf.data's per-element ops and producers, and the ops XLA cannot compile."""

from tb_gpu_advisor.analysis.step_ops import is_producer_event, is_xla_incompatible, step_ops

MS = 10**9


def test_ops_called_once_per_step_are_step_ops_and_per_element_ops_are_not():
    totals = {
        "tokenize/StringSplitV2:StringSplitV2": (10, 30 * MS),
        "dense/MatMul:MatMul": (10, 5 * MS),
        "ParseExample/ParseExampleV2:ParseExampleV2": (2560, 90 * MS),
        "ParallelMapProduce": (2560, 200 * MS),
        "ExecutorState::Process": (10, 100 * MS),
        "EagerLocalExecute: Identity": (10, 1 * MS),
        "py/EagerPyFunc:EagerPyFunc": (10, 20 * MS),
    }
    found = step_ops(totals, 10)
    assert [op.name for op in found.step_ops] == [
        "tokenize/StringSplitV2:StringSplitV2",
        "py/EagerPyFunc:EagerPyFunc",
        "dense/MatMul:MatMul",
    ]
    assert [op.name for op in found.per_element_ops] == ["ParseExample/ParseExampleV2:ParseExampleV2"]
    assert found.xla_blockers == ("StringSplitV2", "EagerPyFunc (tf.py_function)")


def test_without_steps_every_op_event_is_a_step_op():
    found = step_ops({"a/ParseExampleV2:ParseExampleV2": (500, MS)}, 0)
    assert [op.op_type for op in found.step_ops] == ["ParseExampleV2"]


def test_xla_support_and_producers_by_name():
    for op_type in (
        "StringSplitV2",
        "StringToHashBucketFast",
        "RaggedTensorToTensor",
        "EagerPyFunc",
        "PyFunc",
        "DecodeJpeg",
        "ParseExampleV2",
        "LookupTableFindV2",
        "RegexReplace",
        "UnicodeDecode",
    ):
        assert is_xla_incompatible(op_type), op_type
    for op_type in ("MatMul", "Conv2D", "Relu", "Cast", "ReadVariableOp", "StridedSlice"):
        assert not is_xla_incompatible(op_type), op_type
    for name in (
        "ParallelMapProduce",
        "PrefetchProduce",
        "Iterator::Root::Prefetch",
        "InstantiatedCapturedFunction::RunAsync",
        "MapAndBatchProduce",
    ):
        assert is_producer_event(name), name
    assert not is_producer_event("StringSplit/StringSplitV2:StringSplitV2")
