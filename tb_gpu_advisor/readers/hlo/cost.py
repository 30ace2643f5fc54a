"""FLOPs and logical bytes of one HLO instruction, the work of the kernel that runs it (docs/report.md, "Roofline").

FLOPs follow XLA's cost analysis: a multiply-add is 2 FLOPs; an element-wise arithmetic op is 1 FLOP per output
element; transcendental ops (exp, tanh, ...), data movement (copy, broadcast, transpose, slice, ...) and
comparisons-free bookkeeping are 0 FLOPs. Library calls XLA does not cost are costed from their shapes:
GEMM custom-calls from the operand shapes and the `dot_dimension_numbers` of their backend config, cuDNN
convolutions from their window and dimension numbers, cuDNN fused attention as forward 4*B*H*S^2*D (2 matmuls
of 2*B*H*Sq*Skv*D each), halved under a causal mask, backward 2.5x forward. Bytes are logical: every operand
read once plus every result written once, scratch workspace excluded. An instruction whose work we cannot
count exactly gets None, never an estimate.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import replace
from typing import Any

from tb_gpu_advisor.readers.hlo.library_calls import custom_call_cost
from tb_gpu_advisor.readers.hlo.op_cost import MATRIX, MAX_KERNEL_WORK, VECTOR, OpCost, highest_precision
from tb_gpu_advisor.readers.hlo.op_math import conv_flops, dot_dims, dot_flops
from tb_gpu_advisor.readers.hlo.shapes import COMPLEX, TUPLE, byte_size, elements, type_name

ELEMENTWISE = frozenset(
    (
        "add",
        "subtract",
        "multiply",
        "divide",
        "maximum",
        "minimum",
        "abs",
        "negate",
        "compare",
        "select",
        "clamp",
        "and",
        "or",
        "xor",
        "not",
        "remainder",
        "sign",
        "floor",
        "ceil",
        "round-nearest-afz",
        "round-nearest-even",
        "convert",
        "shift-left",
        "shift-right-arithmetic",
        "shift-right-logical",
        "popcnt",
        "count-leading-zeros",
        "real",
        "imag",
        "complex",
        "is-finite",
        "reduce-precision",
        "stochastic-convert",
    )
)
TRANSCENDENTAL = frozenset(
    (
        "exponential",
        "exponential-minus-one",
        "log",
        "log-plus-one",
        "logistic",
        "power",
        "sqrt",
        "cbrt",
        "rsqrt",
        "tanh",
        "sine",
        "cosine",
        "tan",
        "atan2",
        "erf",
    )
)
NO_FLOPS = frozenset(
    (
        "parameter",
        "constant",
        "broadcast",
        "reshape",
        "bitcast",
        "transpose",
        "copy",
        "slice",
        "dynamic-slice",
        "dynamic-update-slice",
        "concatenate",
        "pad",
        "iota",
        "get-tuple-element",
        "tuple",
        "reverse",
        "gather",
        "bitcast-convert",
        "copy-start",
        "copy-done",
        "after-all",
        "partition-id",
        "replica-id",
        "optimization-barrier",
        "domain",
        "get-dimension-size",
        "set-dimension-size",
    )
)
_NOT_COSTED = object()  # an op whose FLOPs we do not model: the FLOPs of what contains it are unknown
UNREACHABLE = object()  # a called computation the module lacks, that calls itself, or nested too deep
_ACTIVE = object()  # memo mark of a computation being walked: meeting it again is a cycle
MAX_CALL_DEPTH = 64  # computations nested deeper than this are not followed (XLA nests a few levels)


class ModuleIndex:
    """One HloModuleProto's instructions by id and by name, its computations by id, and the memo of the walks
    over called computations (each computation walked once per question, whatever calls it how often)."""

    def __init__(self, module):
        self.computations = {c.id: c for c in module.computations}
        self.memo = {}
        self.by_id, self.by_name = {}, {}
        for computation in module.computations:
            for instruction in computation.instructions:
                self.by_id[instruction.id] = instruction
                self.by_name.setdefault(instruction.name, instruction)

    def operands(self, instruction: Any) -> list[Any] | None:
        found = [self.by_id.get(i) for i in instruction.operand_ids]
        return None if any(o is None for o in found) else found


def instruction_cost(instruction: Any, index: ModuleIndex) -> OpCost | None:
    """OpCost of one instruction of the module `index`; None if it is not work we cost (collectives, control)
    or the module is malformed. FLOPs or bytes beyond MAX_KERNEL_WORK become None."""
    try:
        cost = _instruction_cost(instruction, index)
    except (RecursionError, ValueError, TypeError, IndexError, OverflowError, KeyError, AttributeError):
        return None  # a malformed module (cyclic or too deep, bad dimension numbers): not costed
    if cost is None:
        return None
    flops = cost.flops if cost.flops is None or 0 <= cost.flops <= MAX_KERNEL_WORK else None
    nbytes = cost.bytes if cost.bytes is None or 0 <= cost.bytes <= MAX_KERNEL_WORK else None
    return replace(cost, flops=flops, bytes=nbytes)


def _instruction_cost(instruction, index):
    operands = index.operands(instruction)
    if operands is None:
        return None
    logical = _in_place_bytes(instruction, operands, index)
    if logical is None:
        logical = _logical_bytes(instruction, operands)
    opcode = instruction.opcode
    if opcode == "custom-call":
        return custom_call_cost(instruction, operands)
    if opcode == "fusion":
        flops, matrix_dtype = _computation_flops(instruction.called_computation_ids, index, 0)
        if matrix_dtype:
            first = _first_dot(instruction.called_computation_ids, index, 0)
            return OpCost(
                flops,
                logical,
                MATRIX,
                matrix_dtype,
                "fusion with a dot or convolution",
                _dims(first, index),
                _precision(first),
            )
        return OpCost(flops, logical, VECTOR, _result_type(instruction), "element-wise/reduction fusion")
    flops, matrix_dtype = _op_flops(instruction, operands, index, 0)
    if flops is _NOT_COSTED:
        return None
    if matrix_dtype:
        dims = (
            dot_dims(instruction.dot_dimension_numbers, operands[0].shape, operands[1].shape)
            if opcode == "dot"
            else None
        )
        return OpCost(flops, logical, MATRIX, matrix_dtype, opcode, dims, _precision(instruction))
    return OpCost(flops, logical, VECTOR, _result_type(instruction), opcode)


def _in_place_bytes(instruction, operands, index):
    """Bytes of a dynamic-update-slice (alone, or the root of a fusion), which updates its buffer in place: the
    other operands read and the update written, not the whole buffer. None for anything else."""
    root, buffer_operand = instruction, 0
    if instruction.opcode == "fusion" and len(instruction.called_computation_ids) == 1:
        computation = index.computations.get(instruction.called_computation_ids[0])
        root = index.by_id.get(computation.root_id) if computation is not None else None
        if root is None or root.opcode != "dynamic-update-slice" or not root.operand_ids:
            return None
        buffer = index.by_id.get(root.operand_ids[0])
        if buffer is None or buffer.opcode != "parameter":
            return None
        buffer_operand = buffer.parameter_number
    elif instruction.opcode != "dynamic-update-slice":
        return None
    root_operands = index.operands(root)
    if not root_operands or len(root_operands) < 2 or buffer_operand >= len(operands):
        return None
    sizes = [byte_size(o.shape) for i, o in enumerate(operands) if i != buffer_operand]
    sizes.append(byte_size(root_operands[1].shape))  # the update, written into the buffer
    return None if any(size is None for size in sizes) else sum(sizes)


def _result_type(instruction):
    shape = instruction.shape
    while shape.element_type == TUPLE and shape.tuple_shapes:
        shape = shape.tuple_shapes[0]
    return type_name(shape.element_type)


def _logical_bytes(instruction, operands, results=None):
    sizes = [byte_size(o.shape) for o in operands]
    sizes += [byte_size(s) for s in (results if results is not None else [instruction.shape])]
    return None if any(s is None for s in sizes) else sum(sizes)


def memoized(
    index: ModuleIndex,
    question: Hashable,
    computation_id: int,
    depth: int,
    walk: Callable[[Any, ModuleIndex, int], object],
) -> object:
    """walk(computation) answered once per computation of the module `index` for `question`: UNREACHABLE for a
    computation the module lacks, one met again while it is being walked (a cycle), or one deeper than
    MAX_CALL_DEPTH, so a walk is linear in the module's size whatever its call graph."""
    memo = index.memo.setdefault(question, {})
    if computation_id in memo:
        found = memo[computation_id]
        return UNREACHABLE if found is _ACTIVE else found
    computation = index.computations.get(computation_id)
    if computation is None or depth > MAX_CALL_DEPTH:
        return UNREACHABLE
    memo[computation_id] = _ACTIVE
    memo[computation_id] = found = walk(computation, index, depth + 1)
    return found


def _computation_flops(computation_ids, index, depth):
    """(FLOPs of the computations, dtype of their first dot/convolution or None); FLOPs None if any op is
    not costed exactly."""
    total, matrix_dtype = 0, None
    for computation_id in computation_ids:
        found = memoized(index, "flops", computation_id, depth, _one_computation_flops)
        if found is UNREACHABLE:
            return None, matrix_dtype
        flops, dtype = found
        matrix_dtype = matrix_dtype or dtype
        total = None if flops is None or total is None else total + flops
    return total, matrix_dtype


def _one_computation_flops(computation, index, depth):
    total, matrix_dtype = 0, None
    for instruction in computation.instructions:
        operands = index.operands(instruction)
        flops, dtype = (None, None) if operands is None else _op_flops(instruction, operands, index, depth)
        matrix_dtype = matrix_dtype or dtype
        if flops is _NOT_COSTED or flops is None or total is None:
            total = None
        else:
            total += flops
    return total, matrix_dtype


def _op_flops(instruction, operands, index, depth):
    """(FLOPs, matrix input dtype or None) of one op inside a computation; FLOPs _NOT_COSTED if unknown."""
    opcode = instruction.opcode
    if opcode == "dot":
        return dot_flops(
            instruction.dot_dimension_numbers, operands[0].shape, operands[1].shape, instruction.shape
        ), type_name(operands[0].shape.element_type)
    if opcode == "convolution":
        return (
            conv_flops(instruction, operands[0].shape, operands[1].shape, instruction.shape),
            type_name(operands[0].shape.element_type),
        )
    if opcode == "fusion":
        flops, dtype = _computation_flops(instruction.called_computation_ids, index, depth)
        return (_NOT_COSTED if flops is None else flops), dtype
    if opcode in NO_FLOPS or opcode in TRANSCENDENTAL:
        return 0, None
    if opcode in ELEMENTWISE:
        if instruction.shape.element_type in COMPLEX:
            return _NOT_COSTED, None
        return elements(instruction.shape), None
    if opcode == "reduce":
        per_reduction, _ = _computation_flops(instruction.called_computation_ids, index, depth)
        if per_reduction is None or instruction.shape.element_type == TUPLE:
            return _NOT_COSTED, None
        inputs = elements(operands[0].shape)
        return (inputs - elements(instruction.shape)) * per_reduction, None
    return _NOT_COSTED, None


def _precision(instruction):
    """The highest operand precision of a dot or convolution (precision_config), None if not recorded."""
    if instruction is None or not instruction.HasField("precision_config"):
        return None
    return highest_precision(list(instruction.precision_config.operand_precision))


def _dims(dot, index):
    """(batch, M, N, K) of a dot instruction, or None."""
    operands = index.operands(dot) if dot is not None else None
    if not operands or len(operands) < 2:
        return None
    return dot_dims(dot.dot_dimension_numbers, operands[0].shape, operands[1].shape)


def _first_dot(computation_ids, index, depth):
    """The first dot instruction in the computations (nested fusions searched), or None."""
    for computation_id in computation_ids:
        found = memoized(index, "first dot", computation_id, depth, _one_first_dot)
        if found is not UNREACHABLE and found is not None:
            return found
    return None


def _one_first_dot(computation, index, depth):
    for instruction in computation.instructions:
        if instruction.opcode == "dot" and index.operands(instruction):
            return instruction
        if instruction.opcode == "fusion":
            found = _first_dot(instruction.called_computation_ids, index, depth)
            if found is not None:
                return found
    return None
