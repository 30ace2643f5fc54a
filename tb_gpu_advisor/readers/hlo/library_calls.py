"""Costs of the library calls XLA leaves to cuBLAS/hipBLASLt and cuDNN, from their shapes and backend config:
GEMMs (2 x batch x M x N x K), cuDNN convolutions, and cuDNN fused attention (forward 4*B*H*S^2*D, halved under
a causal mask, backward 2.5x forward)."""

from __future__ import annotations

import json
import math
from typing import Any

from tb_gpu_advisor.readers.hlo.op_cost import MATRIX, OpCost, highest_precision
from tb_gpu_advisor.readers.hlo.op_math import conv_flops, dot_dims, dot_flops
from tb_gpu_advisor.readers.hlo.shapes import byte_size, result_leaves, type_name

_GEMM_TARGETS = ("__cublas$gemm", "__cublas$lt$matmul", "__cublas$lt$matmul$f8")
_CONV_TARGETS = {
    "__cudnn$convForward": "forward",
    "__cudnn$convBiasActivationForward": "forward",
    "__cudnn$convBackwardInput": "backward_input",
    "__cudnn$convBackwardFilter": "backward_filter",
}
_FMHA_PREFIX = "__cudnn$fmha"
_CAUSAL_MASKS = ("CAUSAL", "PADDING_CAUSAL")
ATTENTION_BACKWARD_FACTOR = 2.5


def _logical_bytes(operands, results):
    sizes = [byte_size(o.shape) for o in operands] + [byte_size(r) for r in results]
    return None if any(s is None for s in sizes) else sum(sizes)


def _backend_config(instruction):
    try:
        config = json.loads(instruction.backend_config.decode("utf-8")) if instruction.backend_config else None
    except (UnicodeDecodeError, ValueError):
        return None
    return config if isinstance(config, dict) else None


class _Dims:
    """DotDimensionNumbers from a backend config's JSON (lists of decimal strings)."""

    def __init__(self, config):
        def ints(key: str) -> list[int]:
            return [int(v) for v in config.get(key, [])]

        self.lhs_contracting_dimensions = ints("lhs_contracting_dimensions")
        self.rhs_contracting_dimensions = ints("rhs_contracting_dimensions")
        self.lhs_batch_dimensions = ints("lhs_batch_dimensions")
        self.rhs_batch_dimensions = ints("rhs_batch_dimensions")


def custom_call_cost(instruction: Any, operands: list[Any]) -> OpCost | None:
    target = instruction.custom_call_target
    results = result_leaves(instruction.shape)
    logical = _logical_bytes(operands, results)
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
        return OpCost(
            conv_flops(instruction, *shapes),
            logical,
            MATRIX,
            type_name(operands[0].shape.element_type),
            f"cuDNN convolution ({role.replace('_', ' ')})",
        )
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
            flops = dot_flops(numbers, operands[0].shape, operands[1].shape)
            dims = dot_dims(numbers, operands[0].shape, operands[1].shape) if flops is not None else None
        except (TypeError, ValueError):
            flops = None
    precision = config.get("precision_config") if isinstance(config, dict) else None
    operand = precision.get("operand_precision") if isinstance(precision, dict) else None
    return OpCost(
        flops,
        logical,
        MATRIX,
        dtype,
        "GEMM custom-call shapes and dot_dimension_numbers",
        dims,
        highest_precision(operand) if isinstance(operand, list) else None,
    )


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
