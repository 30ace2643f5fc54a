"""Exact multiply-add counts of dots and convolutions from shapes, dimension numbers and windows."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tb_gpu_advisor.readers.hlo.shapes import COMPLEX, TUPLE, elements

MAX_WINDOW = 10**6  # window positions of one spatial dimension we count
MAX_CONV_POSITIONS = 10**8  # output x window positions of a base-dilated dimension, counted one by one


def dot_dims(numbers: Any, lhs: Any, rhs: Any) -> tuple[int, int, int, int] | None:
    """(batch, M, N, K) of a dot: M and N the products of the free dimensions; None for bad dimensions."""
    lhs_dims, rhs_dims = list(lhs.dimensions), list(rhs.dimensions)
    try:
        batch = math.prod(lhs_dims[d] for d in numbers.lhs_batch_dimensions)
        contracting = math.prod(lhs_dims[d] for d in numbers.lhs_contracting_dimensions)
        m = math.prod(
            s
            for d, s in enumerate(lhs_dims)
            if d not in numbers.lhs_batch_dimensions and d not in numbers.lhs_contracting_dimensions
        )
        n = math.prod(
            s
            for d, s in enumerate(rhs_dims)
            if d not in numbers.rhs_batch_dimensions and d not in numbers.rhs_contracting_dimensions
        )
    except IndexError:
        return None
    return (batch, m, n, contracting)


def dot_flops(numbers: Any, lhs: Any, rhs: Any, result: Any = None) -> int | None:
    """2 x batch x M x N x K from the operand shapes and dot dimension numbers; None for complex or bad dims."""
    if lhs.element_type in COMPLEX or rhs.element_type in COMPLEX:
        return None
    lhs_dims, rhs_dims = list(lhs.dimensions), list(rhs.dimensions)
    try:
        batch = math.prod(lhs_dims[d] for d in numbers.lhs_batch_dimensions)
        contracting = math.prod(lhs_dims[d] for d in numbers.lhs_contracting_dimensions)
        rhs_contracting = math.prod(rhs_dims[d] for d in numbers.rhs_contracting_dimensions)
        lhs_free = math.prod(
            s
            for d, s in enumerate(lhs_dims)
            if d not in numbers.lhs_batch_dimensions and d not in numbers.lhs_contracting_dimensions
        )
        rhs_free = math.prod(
            s
            for d, s in enumerate(rhs_dims)
            if d not in numbers.rhs_batch_dimensions and d not in numbers.rhs_contracting_dimensions
        )
    except IndexError:
        return None
    if contracting != rhs_contracting:
        return None
    if result is not None and result.element_type != TUPLE and elements(result) != batch * lhs_free * rhs_free:
        return None
    return 2 * batch * lhs_free * rhs_free * contracting


def valid_positions(window_dim: Any, input_size: int, output_size: int) -> int:
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


def conv_flops(instruction: Any, input_shape: Any, kernel_shape: Any, output_shape: Any) -> int | None:
    """2 x multiply-adds that read an input element (padding excluded), as XLA counts a convolution."""
    if input_shape.element_type in COMPLEX:
        return None
    numbers, window = instruction.convolution_dimension_numbers, instruction.window
    try:
        pairs = 1
        for i, dim in enumerate(window.dimensions):
            pairs *= valid_positions(
                dim,
                input_shape.dimensions[numbers.input_spatial_dimensions[i]],
                output_shape.dimensions[numbers.output_spatial_dimensions[i]],
            )
        batch = output_shape.dimensions[numbers.output_batch_dimension]
        out_features = output_shape.dimensions[numbers.output_feature_dimension]
        in_features = kernel_shape.dimensions[numbers.kernel_input_feature_dimension]
    except IndexError:
        return None
    if len(window.dimensions) != len(numbers.input_spatial_dimensions):
        return None
    return 2 * batch * out_features * in_features * pairs
