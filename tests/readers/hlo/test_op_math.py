"""Convolution multiply-adds counted exactly: padding, strides and dilations, closed form against brute force."""

import itertools

import pytest

from tb_gpu_advisor.readers.hlo import schema
from tb_gpu_advisor.readers.hlo.modules import op_costs
from tb_gpu_advisor.testing.hlo import HloModuleBuilder, shape


def _cost(module, name):
    return op_costs({1: module.to_bytes()}, [(1, name)])[(1, name)]


def _brute_force_conv_macs(in_size, window, stride, pad_low, dilation, base, out_size):
    extent = (in_size - 1) * base
    return sum(
        1
        for o, k in itertools.product(range(out_size), range(window))
        if 0 <= o * stride + k * dilation - pad_low <= extent and (o * stride + k * dilation - pad_low) % base == 0
    )


@pytest.mark.parametrize("stride, pad, dilation, base", [(1, 1, 1, 1), (2, 0, 1, 1), (1, 2, 2, 1), (1, 1, 1, 2)])
def test_convolution_counts_only_multiply_adds_inside_the_input(stride, pad, dilation, base):
    height, window, batch, cin, cout = 9, 3, 2, 5, 7
    dilated = (height - 1) * base + 1
    out = (dilated + 2 * pad - ((window - 1) * dilation + 1)) // stride + 1
    module = HloModuleBuilder()
    x = module.entry.parameter("x", shape("f32", batch, height, height, cin))
    w = module.entry.parameter("w", shape("f32", window, window, cin, cout))
    numbers = schema.ConvolutionDimensionNumbers(
        input_batch_dimension=0,
        input_feature_dimension=3,
        input_spatial_dimensions=[1, 2],
        kernel_input_feature_dimension=2,
        kernel_output_feature_dimension=3,
        kernel_spatial_dimensions=[0, 1],
        output_batch_dimension=0,
        output_feature_dimension=3,
        output_spatial_dimensions=[1, 2],
    )
    dim = dict(
        size=window, stride=stride, padding_low=pad, padding_high=pad, window_dilation=dilation, base_dilation=base
    )
    window_proto = schema.Window(dimensions=[schema.WindowDimension(**dim), schema.WindowDimension(**dim)])
    module.entry.add(
        "conv",
        "convolution",
        shape("f32", batch, out, out, cout),
        (x, w),
        convolution_dimension_numbers=numbers,
        window=window_proto,
    )
    per_dim = _brute_force_conv_macs(height, window, stride, pad, dilation, base, out)
    cost = _cost(module, "conv")
    assert cost.flops == 2 * batch * cout * cin * per_dim * per_dim
    assert cost.bytes == 4 * (batch * height * height * cin + window * window * cin * cout + batch * out * out * cout)


@pytest.mark.parametrize(
    "stride, pad, dilation, size, window",
    [(1, 0, 1, 1, 1), (3, 5, 2, 7, 4), (2, 7, 3, 5, 6), (1, 30, 1, 4, 3), (4, 0, 1, 50, 50)],
)
def test_closed_form_conv_positions_match_brute_force(stride, pad, dilation, size, window):
    from tb_gpu_advisor.readers.hlo.op_math import valid_positions

    out = max(1, (size + 2 * pad - ((window - 1) * dilation + 1)) // stride + 1)
    dim = schema.WindowDimension(
        size=window, stride=stride, padding_low=pad, padding_high=pad, window_dilation=dilation
    )
    assert valid_positions(dim, size, out) == _brute_force_conv_macs(size, window, stride, pad, dilation, 1, out)
