"""FLOPs and logical bytes of a TensorFlow op outside XLA from its type and input shapes (the kernel's `shape`
stat, e.g. "(half[4,384,1024];half[])"): only what those determine exactly, else None (docs/report.md)."""

from __future__ import annotations

import math
import re

from tb_gpu_advisor.readers.hlo.op_cost import MATRIX, MAX_KERNEL_WORK, VECTOR, OpCost

# TF dtype name -> (our dtype name, bytes per element).
_DTYPES = {
    "half": ("f16", 2),
    "float": ("f32", 4),
    "double": ("f64", 8),
    "bfloat16": ("bf16", 2),
    "int8": ("s8", 1),
    "uint8": ("u8", 1),
    "int16": ("s16", 2),
    "int32": ("s32", 4),
    "int64": ("s64", 8),
    "bool": ("pred", 1),
}
_ARITHMETIC = {
    "Add": 1,
    "AddV2": 1,
    "Sub": 1,
    "Mul": 1,
    "RealDiv": 1,
    "Div": 1,
    "Maximum": 1,
    "Minimum": 1,
    "SquaredDifference": 2,
    "BiasAdd": 1,
    "DivNoNan": 1,
    "MulNoNan": 1,
}
_COMPARISONS = {"Greater", "GreaterEqual", "Less", "LessEqual", "Equal", "NotEqual", "LogicalAnd", "LogicalOr"}
_UNARY = {
    "Neg": 1,
    "Abs": 1,
    "Square": 1,
    "Relu": 1,
    "Sign": 1,
    "Floor": 1,
    "Ceil": 1,
    "Round": 1,
    "Reciprocal": 1,
    "Inv": 1,
    "Relu6": 2,
    "LogicalNot": 1,
}
_TRANSCENDENTAL = {"Exp", "Log", "Log1p", "Expm1", "Tanh", "Sigmoid", "Sqrt", "Rsqrt", "Erf", "Softplus", "Sin", "Cos"}
_MATMULS = {"MatMul", "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3"}
_TENSOR = re.compile(r"^([a-z0-9_]+)\[([0-9,]*)\]$")


def parse_shapes(text: str) -> list[tuple[str, list]] | None:
    """[(dtype, dims)] of a `shape` stat; None if any input is not a fully known array of a known dtype."""
    inner = text.strip()
    if not (inner.startswith("(") and inner.endswith(")")):
        return None
    found = []
    for part in inner[1:-1].split(";"):
        match = _TENSOR.match(part.strip())
        if not match or match.group(1) not in _DTYPES:
            return None
        found.append((match.group(1), [int(d) for d in match.group(2).split(",")] if match.group(2) else []))
    return found


def _broadcast(a, b):
    """NumPy broadcast of two dim lists, or None if they do not broadcast."""
    out = []
    for x, y in zip(reversed([1] * (len(b) - len(a)) + a), reversed([1] * (len(a) - len(b)) + b)):
        if x != y and 1 not in (x, y):
            return None
        out.append(max(x, y) if 0 not in (x, y) else 0)
    return out[::-1]


def _bytes(dtype, dims):
    return _DTYPES[dtype][1] * math.prod(dims)


def tf_op_cost(op_type: str, shape_text: str) -> OpCost | None:
    """OpCost of one execution of a TF op, or None when its inputs do not determine the work exactly (or the
    shapes give impossible work, beyond MAX_KERNEL_WORK)."""
    cost = _cost(op_type, shape_text)
    if cost is None or cost.flops > MAX_KERNEL_WORK or cost.bytes > MAX_KERNEL_WORK:
        return None
    return cost


def _cost(op_type, shape_text):
    inputs = parse_shapes(shape_text)
    if not inputs:
        return None
    in_bytes = sum(_bytes(dtype, dims) for dtype, dims in inputs)
    dtype = inputs[0][0]
    ours = _DTYPES[dtype][0]
    if op_type in _ARITHMETIC or op_type in _COMPARISONS:
        if len(inputs) != 2 or inputs[0][0] != inputs[1][0]:
            return None
        out = _broadcast(inputs[0][1], inputs[1][1])
        if out is None:
            return None
        out_dtype = "bool" if op_type in _COMPARISONS else dtype
        flops = math.prod(out) * _ARITHMETIC.get(op_type, 1)
        return OpCost(flops, in_bytes + _bytes(out_dtype, out), VECTOR, ours, f"TF {op_type} from input shapes")
    if op_type in _UNARY or op_type in _TRANSCENDENTAL:
        if len(inputs) != 1:
            return None
        dims = inputs[0][1]
        flops = 0 if op_type in _TRANSCENDENTAL else math.prod(dims) * _UNARY[op_type]
        return OpCost(flops, 2 * in_bytes, VECTOR, ours, f"TF {op_type} from input shapes")
    if op_type in _MATMULS:
        return _matmul(op_type, inputs, in_bytes, ours)
    return None


def _matmul(op_type, inputs, in_bytes, ours):
    """A (batched) matmul: transposes are attributes the trace lacks, so every transpose choice the shapes allow
    is tried; the cost is exact only when all of them agree."""
    if len(inputs) != 2 or inputs[0][0] != inputs[1][0]:
        return None
    (dtype, a), (_, b) = inputs
    if len(a) < 2 or len(b) < 2 or (op_type == "MatMul" and (len(a) != 2 or len(b) != 2)):
        return None
    batch = _broadcast(a[:-2], b[:-2])
    if batch is None:
        return None
    answers = set()
    for a_rows, a_cols in ((a[-2], a[-1]), (a[-1], a[-2])):
        for b_rows, b_cols in ((b[-2], b[-1]), (b[-1], b[-2])):
            if a_cols == b_rows:
                out = math.prod(batch) * a_rows * b_cols
                answers.add((2 * out * a_cols, out, (math.prod(batch), a_rows, b_cols, a_cols)))
    if len({(flops, out) for flops, out, _ in answers}) != 1:
        return None
    flops, out, dims = sorted(answers)[0]
    return OpCost(flops, in_bytes + out * _DTYPES[dtype][1], MATRIX, ours, f"TF {op_type} from input shapes", dims)
