"""Which host ops belong to the training step, which are tf.data's background work, and which XLA cannot compile."""

from __future__ import annotations

import re
from dataclasses import dataclass

# A TensorFlow graph op runs once per step per op instance (its event is named `<op name>:<OpType>`); an op of
# a tf.data map function runs once per element, many times per step. Up to this many calls per step = a step op.
STEP_OP_MAX_CALLS_PER_STEP = 2
# tf.data's producers and function runners: background work, not what blocks the step (the step's own wait for
# them is the input wait).
_PRODUCER = re.compile(
    r"Produce$|^Iterator::|^InstantiatedCapturedFunction::|^IteratorGetNext|"
    r"^MultiDeviceIterator|^ParallelMap|^MapAndBatch"
)
# Op types with no XLA kernel: strings, parsing and decoding, ragged tensors, lookup tables, Python callbacks.
_XLA_INCOMPATIBLE = re.compile(
    r"^((String|Regex|StaticRegex|Unicode|Ragged|LookupTable|"
    r"Decode(Jpeg|Png|Gif|Bmp|Image|Csv|Wav|Compressed|Base64))\w*|AsString|Substr|"
    r"EagerPyFunc|PyFunc|PyFuncStateless)$"
)
# ... and `Parse*Example*`, `*HashTable*`, `*Tokenize*`: one word holding these (tested without a regex).
_WORD = re.compile(r"^\w*$")
_PY_FUNCTION = {"EagerPyFunc", "PyFunc", "PyFuncStateless"}


@dataclass(frozen=True)
class HostOp:
    name: str
    op_type: str
    count: int
    total_ps: int

    @property
    def label(self) -> str:
        """The op type, with the Python API for the callback ops (`EagerPyFunc (tf.py_function)`)."""
        return f"{self.op_type} (tf.py_function)" if self.op_type in _PY_FUNCTION else self.op_type


@dataclass(frozen=True)
class StepOps:
    """Host TensorFlow ops of the step (few calls per step) and of tf.data map functions (many), most time first."""

    step_ops: tuple  # HostOp
    per_element_ops: tuple  # HostOp
    xla_incompatible: tuple  # HostOp among step_ops that XLA cannot compile

    @property
    def xla_blockers(self) -> tuple[str, str, str, str]:
        """Distinct op types of `xla_incompatible`, as labels."""
        return tuple(dict.fromkeys(op.label for op in self.xla_incompatible))


def is_producer_event(name: str) -> bool:
    """tf.data's background producer and function-runner events (`ParallelMapProduce`, `Iterator::...`)."""
    return bool(_PRODUCER.search(name))


def op_type(name):
    return name.rpartition(":")[2]


def is_xla_incompatible(op_type_name: str) -> bool:
    if _XLA_INCOMPATIBLE.match(op_type_name):
        return True
    return bool(_WORD.match(op_type_name)) and (
        "HashTable" in op_type_name
        or "Tokenize" in op_type_name
        or (op_type_name.startswith("Parse") and "Example" in op_type_name[5:])
    )


def step_ops(op_totals, step_count):
    """StepOps from HostActivity.op_totals; without steps every op event counts as a step op."""
    step, element = [], []
    for name, (count, total) in op_totals.items():
        head, sep, kind = name.rpartition(":")
        if not sep or not head or not kind or " " in kind or "::" in name or is_producer_event(name):
            continue
        op = HostOp(name, kind, int(count), int(total))
        per_step = count / step_count if step_count else 0
        (element if per_step > STEP_OP_MAX_CALLS_PER_STEP else step).append(op)
    order = lambda op: (-op.total_ps, op.name)  # noqa: E731
    step.sort(key=order)
    element.sort(key=order)
    return StepOps(
        step_ops=tuple(step),
        per_element_ops=tuple(element),
        xla_incompatible=tuple(op for op in step if is_xla_incompatible(op.op_type)),
    )
