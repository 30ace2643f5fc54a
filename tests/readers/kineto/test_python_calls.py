"""PyTorch's Python-stack event names read as the XPlane Python tracer's `$<where> <function>`."""

import pytest

from tb_gpu_advisor.readers.kineto.python_calls import python_call_name


@pytest.mark.parametrize(
    "name, expected",
    [
        ("numpy/_core/shape_base.py(378): stack", "$numpy/_core/shape_base.py stack"),
        ("train.py(42): load_batch", "$train.py load_batch"),
        ("<built-in function open>", "$builtins open"),
        ("<built-in method read of _io.BufferedReader object at 0x7f0a8e928bf0>", "$_io.BufferedReader read"),
        ("<built-in method from_numpy of type object at 0x7f0aaaacea40>", "$type from_numpy"),
        ("<method 'decode' of 'bytes' objects>", "$bytes decode"),
    ],
)
def test_python_stack_names(name, expected):
    assert python_call_name(name) == expected


@pytest.mark.parametrize("name", ["Python GC", "aten::mm", "ProfilerStep#3", "<built-in method read>", ""])
def test_other_names_are_not_calls(name):
    assert python_call_name(name) is None
