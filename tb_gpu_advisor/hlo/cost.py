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

import json
import math
from dataclasses import dataclass, replace

import numpy as np

from tb_gpu_advisor.hlo.shapes import COMPLEX, TUPLE, byte_size, elements, result_leaves, type_name

MATRIX, VECTOR = "matrix", "vector"
ELEMENTWISE = frozenset((
    "add", "subtract", "multiply", "divide", "maximum", "minimum", "abs", "negate", "compare", "select", "clamp",
    "and", "or", "xor", "not", "remainder", "sign", "floor", "ceil", "round-nearest-afz", "round-nearest-even",
    "convert", "shift-left", "shift-right-arithmetic", "shift-right-logical", "popcnt", "count-leading-zeros",
    "real", "imag", "complex", "is-finite", "reduce-precision", "stochastic-convert"))
TRANSCENDENTAL = frozenset((
    "exponential", "exponential-minus-one", "log", "log-plus-one", "logistic", "power", "sqrt", "cbrt", "rsqrt",
    "tanh", "sine", "cosine", "tan", "atan2", "erf"))
NO_FLOPS = frozenset((
    "parameter", "constant", "broadcast", "reshape", "bitcast", "transpose", "copy", "slice", "dynamic-slice",
    "dynamic-update-slice", "concatenate", "pad", "iota", "get-tuple-element", "tuple", "reverse", "gather",
    "bitcast-convert", "copy-start", "copy-done", "after-all", "partition-id", "replica-id",
    "optimization-barrier", "domain", "get-dimension-size", "set-dimension-size"))
_GEMM_TARGETS = ("__cublas$gemm", "__cublas$lt$matmul", "__cublas$lt$matmul$f8")
_CONV_TARGETS = {"__cudnn$convForward": "forward", "__cudnn$convBiasActivationForward": "forward",
                 "__cudnn$convBackwardInput": "backward_input", "__cudnn$convBackwardFilter": "backward_filter"}
_FMHA_PREFIX = "__cudnn$fmha"
_CAUSAL_MASKS = ("CAUSAL", "PADDING_CAUSAL")
ATTENTION_BACKWARD_FACTOR = 2.5
# More work than this in one kernel is an impossible value (a corrupt or hostile module): not costed.
MAX_KERNEL_WORK = 10**24
MAX_WINDOW = 10**6  # window positions of one spatial dimension we count
MAX_CONV_POSITIONS = 10**8  # output x window positions of a base-dilated dimension, counted one by one
_NOT_COSTED = object()  # an op whose FLOPs we do not model: the FLOPs of what contains it are unknown


@dataclass(frozen=True)
class OpCost:
    """The work of one execution of an HLO instruction; `flops` or `bytes` is None when not exactly known."""

    flops: int | None
    bytes: int | None
    compute: str  # MATRIX (dot, convolution, GEMM, attention) or VECTOR: which compute roof applies
    dtype: str | None  # element type of the matrix inputs, or of the result for vector work
    method: str  # what the FLOPs were counted from
    matrix_dims: tuple | None = None  # (batch, M, N, K) of a GEMM or of a fusion's first dot


class ModuleIndex:
    """One HloModuleProto's instructions by id and by name, and its computations by id."""

    def __init__(self, module):
        self.computations = {c.id: c for c in module.computations}
        self.by_id, self.by_name = {}, {}
        for computation in module.computations:
            for instruction in computation.instructions:
                self.by_id[instruction.id] = instruction
                self.by_name.setdefault(instruction.name, instruction)

    def operands(self, instruction):
        found = [self.by_id.get(i) for i in instruction.operand_ids]
        return None if any(o is None for o in found) else found


def instruction_cost(instruction, index):
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
        return _custom_call(instruction, operands)
    if opcode == "fusion":
        flops, matrix_dtype = _computation_flops(instruction.called_computation_ids, index, set())
        if matrix_dtype:
            return OpCost(flops, logical, MATRIX, matrix_dtype, "fusion with a dot or convolution",
                          _first_dot_dims(instruction.called_computation_ids, index, set()))
        return OpCost(flops, logical, VECTOR, _result_type(instruction), "element-wise/reduction fusion")
    flops, matrix_dtype = _op_flops(instruction, operands, index, set())
    if flops is _NOT_COSTED:
        return None
    if matrix_dtype:
        dims = (_dot_dims(instruction.dot_dimension_numbers, operands[0].shape, operands[1].shape)
                if opcode == "dot" else None)
        return OpCost(flops, logical, MATRIX, matrix_dtype, opcode, dims)
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


def _computation_flops(computation_ids, index, seen):
    """(FLOPs of the computations, dtype of their first dot/convolution or None); FLOPs None if any op is
    not costed exactly."""
    total, matrix_dtype = 0, None
    for computation_id in computation_ids:
        computation = index.computations.get(computation_id)
        if computation is None or computation_id in seen:
            return None, matrix_dtype
        seen = seen | {computation_id}
        for instruction in computation.instructions:
            operands = index.operands(instruction)
            flops, dtype = (None, None) if operands is None else _op_flops(instruction, operands, index, seen)
            matrix_dtype = matrix_dtype or dtype
            if flops is _NOT_COSTED or flops is None or total is None:
                total = None
            else:
                total += flops
    return total, matrix_dtype


def _op_flops(instruction, operands, index, seen):
    """(FLOPs, matrix input dtype or None) of one op inside a computation; FLOPs _NOT_COSTED if unknown."""
    opcode = instruction.opcode
    if opcode == "dot":
        return _dot_flops(instruction.dot_dimension_numbers, operands[0].shape, operands[1].shape,
                          instruction.shape), type_name(operands[0].shape.element_type)
    if opcode == "convolution":
        return (_conv_flops(instruction, operands[0].shape, operands[1].shape, instruction.shape),
                type_name(operands[0].shape.element_type))
    if opcode == "fusion":
        flops, dtype = _computation_flops(instruction.called_computation_ids, index, seen)
        return (_NOT_COSTED if flops is None else flops), dtype
    if opcode in NO_FLOPS or opcode in TRANSCENDENTAL:
        return 0, None
    if opcode in ELEMENTWISE:
        if instruction.shape.element_type in COMPLEX:
            return _NOT_COSTED, None
        return elements(instruction.shape), None
    if opcode == "reduce":
        per_reduction, _ = _computation_flops(instruction.called_computation_ids, index, seen)
        if per_reduction is None or instruction.shape.element_type == TUPLE:
            return _NOT_COSTED, None
        inputs = elements(operands[0].shape)
        return (inputs - elements(instruction.shape)) * per_reduction, None
    return _NOT_COSTED, None


def _first_dot_dims(computation_ids, index, seen):
    """(batch, M, N, K) of the first dot in the computations (nested fusions searched), or None."""
    for computation_id in computation_ids:
        computation = index.computations.get(computation_id)
        if computation is None or computation_id in seen:
            continue
        for instruction in computation.instructions:
            operands = index.operands(instruction)
            if instruction.opcode == "dot" and operands:
                return _dot_dims(instruction.dot_dimension_numbers, operands[0].shape, operands[1].shape)
            if instruction.opcode == "fusion":
                found = _first_dot_dims(instruction.called_computation_ids, index, seen | {computation_id})
                if found:
                    return found
    return None


def _dot_dims(numbers, lhs, rhs):
    """(batch, M, N, K) of a dot: M and N the products of the free dimensions; None for bad dimensions."""
    lhs_dims, rhs_dims = list(lhs.dimensions), list(rhs.dimensions)
    try:
        batch = math.prod(lhs_dims[d] for d in numbers.lhs_batch_dimensions)
        contracting = math.prod(lhs_dims[d] for d in numbers.lhs_contracting_dimensions)
        m = math.prod(s for d, s in enumerate(lhs_dims)
                      if d not in numbers.lhs_batch_dimensions and d not in numbers.lhs_contracting_dimensions)
        n = math.prod(s for d, s in enumerate(rhs_dims)
                      if d not in numbers.rhs_batch_dimensions and d not in numbers.rhs_contracting_dimensions)
    except IndexError:
        return None
    return (batch, m, n, contracting)


def _dot_flops(numbers, lhs, rhs, result=None):
    """2 x batch x M x N x K from the operand shapes and dot dimension numbers; None for complex or bad dims."""
    if lhs.element_type in COMPLEX or rhs.element_type in COMPLEX:
        return None
    lhs_dims, rhs_dims = list(lhs.dimensions), list(rhs.dimensions)
    try:
        batch = math.prod(lhs_dims[d] for d in numbers.lhs_batch_dimensions)
        contracting = math.prod(lhs_dims[d] for d in numbers.lhs_contracting_dimensions)
        rhs_contracting = math.prod(rhs_dims[d] for d in numbers.rhs_contracting_dimensions)
        lhs_free = math.prod(s for d, s in enumerate(lhs_dims)
                             if d not in numbers.lhs_batch_dimensions and d not in numbers.lhs_contracting_dimensions)
        rhs_free = math.prod(s for d, s in enumerate(rhs_dims)
                             if d not in numbers.rhs_batch_dimensions and d not in numbers.rhs_contracting_dimensions)
    except IndexError:
        return None
    if contracting != rhs_contracting:
        return None
    if result is not None and result.element_type != TUPLE and elements(result) != batch * lhs_free * rhs_free:
        return None
    return 2 * batch * lhs_free * rhs_free * contracting


def _valid_positions(window_dim, input_size, output_size):
    """Pairs (output position, window position) of one spatial dimension that read an input element."""
    stride = window_dim.stride or 1
    dilation = window_dim.window_dilation or 1
    base = window_dim.base_dilation or 1
    if min(stride, dilation, base, window_dim.size, input_size, output_size) < 0 or window_dim.size > MAX_WINDOW:
        raise ValueError("convolution window out of range")
    extent = (input_size - 1) * base  # last position of the base-dilated input
    count = 0
    if base == 1:  # closed form per window position: the outputs o with 0 <= o*stride + offset <= extent
        for k in range(window_dim.size):
            offset = k * dilation - window_dim.padding_low
            low = -(offset // stride) if offset < 0 else 0  # ceil(-offset / stride)
            high = min(output_size - 1, (extent - offset) // stride) if extent >= offset else -1
            count += max(0, high - low + 1)
        return count
    if output_size * window_dim.size > MAX_CONV_POSITIONS:
        raise ValueError("dilated convolution too large to count")
    outputs = np.arange(output_size, dtype=np.int64) * stride - window_dim.padding_low
    for k in range(window_dim.size):
        positions = outputs + k * dilation
        count += int(np.count_nonzero((positions >= 0) & (positions <= extent) & (positions % base == 0)))
    return count


def _conv_flops(instruction, input_shape, kernel_shape, output_shape):
    """2 x multiply-adds that read an input element (padding excluded), as XLA counts a convolution."""
    if input_shape.element_type in COMPLEX:
        return None
    numbers, window = instruction.convolution_dimension_numbers, instruction.window
    try:
        pairs = 1
        for i, dim in enumerate(window.dimensions):
            pairs *= _valid_positions(dim, input_shape.dimensions[numbers.input_spatial_dimensions[i]],
                                      output_shape.dimensions[numbers.output_spatial_dimensions[i]])
        batch = output_shape.dimensions[numbers.output_batch_dimension]
        out_features = output_shape.dimensions[numbers.output_feature_dimension]
        in_features = kernel_shape.dimensions[numbers.kernel_input_feature_dimension]
    except IndexError:
        return None
    if len(window.dimensions) != len(numbers.input_spatial_dimensions):
        return None
    return 2 * batch * out_features * in_features * pairs


def _backend_config(instruction):
    try:
        config = json.loads(instruction.backend_config.decode("utf-8")) if instruction.backend_config else None
    except (UnicodeDecodeError, ValueError):
        return None
    return config if isinstance(config, dict) else None


class _Dims:
    """DotDimensionNumbers from a backend config's JSON (lists of decimal strings)."""

    def __init__(self, config):
        def ints(key):
            return [int(v) for v in config.get(key, [])]
        self.lhs_contracting_dimensions = ints("lhs_contracting_dimensions")
        self.rhs_contracting_dimensions = ints("rhs_contracting_dimensions")
        self.lhs_batch_dimensions = ints("lhs_batch_dimensions")
        self.rhs_batch_dimensions = ints("rhs_batch_dimensions")


def _custom_call(instruction, operands):
    target = instruction.custom_call_target
    results = result_leaves(instruction.shape)
    logical = _logical_bytes(instruction, operands, results)
    if target in _GEMM_TARGETS or "hipblaslt" in target.lower():
        return _gemm(instruction, operands, logical)
    if target in _CONV_TARGETS and len(operands) >= 2 and results:
        role = _CONV_TARGETS[target]
        if role == "forward":
            shapes = operands[0].shape, operands[1].shape, results[0]
        elif role == "backward_input":
            shapes = results[0], operands[1].shape, operands[0].shape
        else:
            shapes = operands[0].shape, results[0], operands[1].shape
        return OpCost(_conv_flops(instruction, *shapes), logical, MATRIX,
                      type_name(operands[0].shape.element_type), f"cuDNN convolution ({role.replace('_', ' ')})")
    if target.startswith(_FMHA_PREFIX) and len(operands) >= 3:
        return _attention(instruction, operands, logical)
    return None


def _gemm(instruction, operands, logical):
    config = (_backend_config(instruction) or {}).get("gemm_backend_config")
    dtype = type_name(operands[0].shape.element_type) if operands else None
    flops = dims = None
    if isinstance(config, dict) and isinstance(config.get("dot_dimension_numbers"), dict) and len(operands) >= 2:
        try:
            numbers = _Dims(config["dot_dimension_numbers"])
            flops = _dot_flops(numbers, operands[0].shape, operands[1].shape)
            dims = _dot_dims(numbers, operands[0].shape, operands[1].shape) if flops is not None else None
        except (TypeError, ValueError):
            flops = None
    return OpCost(flops, logical, MATRIX, dtype, "GEMM custom-call shapes and dot_dimension_numbers", dims)


def _attention(instruction, operands, logical):
    """cuDNN fused attention: 2*B*H*Sq*Skv*(D + Dv), halved when causal, x2.5 for the backward call."""
    config = (_backend_config(instruction) or {}).get("cudnn_fmha_backend_config")
    q, k, v = (o.shape for o in operands[:3])
    dtype = type_name(q.element_type)
    method = "cuDNN fused attention (4*B*H*S^2*D forward; causal /2; backward x2.5)"
    flops = None
    if isinstance(config, dict):
        try:
            flops = _attention_forward_flops(config, q, k, v)
        except (TypeError, ValueError, IndexError, KeyError):
            flops = None
    if flops is not None:
        if str(config.get("mask_type", "")) in _CAUSAL_MASKS:
            flops //= 2
        if "Backward" in instruction.custom_call_target:
            flops = int(flops * ATTENTION_BACKWARD_FACTOR)
    return OpCost(flops, logical, MATRIX, dtype, method)


def _attention_forward_flops(config, q, k, v):
    score = config.get("intermediate_tensor_shape", {}).get("dimensions")
    if not score or len(score) != 4:
        return None
    batch, heads, seq_q, seq_kv = (int(d) for d in score)
    bmm1 = config.get("bmm1_dot_dimension_numbers")
    bmm2 = config.get("bmm2_dot_dimension_numbers")
    # Without dimension numbers, the head dimension is the last of Q and V in both of cuDNN's layouts.
    head_dim = q.dimensions[int(bmm1["lhs_contracting_dimensions"][0])] if bmm1 else q.dimensions[-1]
    if bmm2:
        skip = {int(d) for d in bmm2.get("rhs_batch_dimensions", []) + bmm2.get("rhs_contracting_dimensions", [])}
        free = [s for d, s in enumerate(v.dimensions) if d not in skip]
        value_dim = math.prod(free)
    else:
        value_dim = v.dimensions[-1]
    return 2 * batch * heads * seq_q * seq_kv * (int(head_dim) + int(value_dim))
