"""Element types, element counts and logical byte sizes of HLO shapes."""

from __future__ import annotations

import math
from typing import Any

TUPLE = 13
# Bits per element by xla.PrimitiveType number; TUPLE, OPAQUE_TYPE and TOKEN hold no data of their own.
_BITS = {
    1: 8,
    2: 8,
    3: 16,
    4: 32,
    5: 64,
    6: 8,
    7: 16,
    8: 32,
    9: 64,
    10: 16,
    11: 32,
    12: 64,
    15: 64,
    16: 16,
    18: 128,
    19: 8,
    20: 8,
    21: 4,
    22: 4,
    23: 8,
    24: 8,
    25: 8,
    26: 2,
    27: 2,
    28: 8,
    29: 8,
    30: 1,
    31: 1,
    32: 4,
    33: 8,
    13: 0,
    14: 0,
    17: 0,
}
_NAMES = {
    1: "pred",
    2: "s8",
    3: "s16",
    4: "s32",
    5: "s64",
    6: "u8",
    7: "u16",
    8: "u32",
    9: "u64",
    10: "f16",
    11: "f32",
    12: "f64",
    15: "c64",
    16: "bf16",
    18: "c128",
    19: "f8e5m2",
    20: "f8e4m3fn",
    21: "s4",
    22: "u4",
    23: "f8e4m3b11fnuz",
    24: "f8e5m2fnuz",
    25: "f8e4m3fnuz",
    26: "s2",
    27: "u2",
    28: "f8e4m3",
    29: "f8e3m4",
    30: "s1",
    31: "u1",
    32: "f4e2m1fn",
    33: "f8e8m0fnu",
}
COMPLEX = {15, 18}
_BYTE_ELEMENTS = {2, 6}  # s8, u8: what GEMM and attention custom-calls return as scratch workspace


def type_name(element_type: int) -> str | None:
    """'bf16', 'f32', ... of an element type number; None for tuples and unknown numbers."""
    return _NAMES.get(element_type)


def bits(element_type: int) -> int | None:
    """Bits per element, or None for a type number we do not know."""
    return _BITS.get(element_type)


def elements(shape: Any) -> int:
    """Element count of an array shape (1 for a scalar); tuples count 0."""
    if shape.element_type == TUPLE:
        return 0
    return math.prod(int(d) for d in shape.dimensions)


def byte_size(shape: Any) -> int | None:
    """Logical bytes of a shape, summed over tuple leaves; None if an element type is unknown or a dimension
    negative."""
    if shape.element_type == TUPLE:
        total = 0
        for leaf in shape.tuple_shapes:
            size = byte_size(leaf)
            if size is None:
                return None
            total += size
        return total
    width = _BITS.get(shape.element_type)
    if width is None or any(d < 0 for d in shape.dimensions):
        return None
    return (elements(shape) * width + 7) // 8


def result_leaves(shape: Any) -> list[Any]:
    """The array leaves of a custom-call's result without its scratch workspace (a trailing 1-D s8/u8)."""
    if shape.element_type != TUPLE:
        return [shape]
    leaves = list(shape.tuple_shapes)
    if len(leaves) > 1 and leaves[-1].element_type in _BYTE_ELEMENTS and len(leaves[-1].dimensions) == 1:
        leaves = leaves[:-1]
    return leaves
