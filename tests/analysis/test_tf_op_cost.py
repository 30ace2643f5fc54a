"""TensorFlow ops outside XLA: cost only what the op type and input shapes determine exactly."""

import pytest

from tb_gpu_advisor.analysis.tf_op_cost import parse_shapes, tf_op_cost


def test_parse_shapes():
    assert parse_shapes("(half[4,384,1024];half[])") == [("half", [4, 384, 1024]), ("half", [])]
    assert parse_shapes("(string[];int64[])") is None
    assert parse_shapes("(float[?,3])") is None
    assert parse_shapes("float[3]") is None


def test_binary_elementwise_broadcasts():
    cost = tf_op_cost("Mul", "(half[4,384,1024];half[])")
    assert cost.flops == 4 * 384 * 1024
    assert cost.bytes == (4 * 384 * 1024 + 1) * 2 + 4 * 384 * 1024 * 2
    assert cost.dtype == "f16"


def test_comparison_writes_bool():
    cost = tf_op_cost("GreaterEqual", "(half[4,16,384,384];half[])")
    assert cost.bytes == (4 * 16 * 384 * 384 + 1) * 2 + 4 * 16 * 384 * 384


def test_transcendental_is_zero_flops():
    cost = tf_op_cost("Tanh", "(float[1000])")
    assert (cost.flops, cost.bytes) == (0, 8000)


def test_matmul_exact_when_every_transpose_agrees():
    cost = tf_op_cost("MatMul", "(half[1536,1024];half[1024,4096])")
    assert cost.flops == 2 * 1536 * 4096 * 1024 and cost.matrix_dims == (1, 1536, 4096, 1024)
    assert cost.bytes == (1536 * 1024 + 1024 * 4096 + 1536 * 4096) * 2


def test_matmul_ambiguous_transpose_is_null():
    # [a,b] x [b,a] with a != b: no transpose gives a x a output, both transposed give b x b: different work.
    assert tf_op_cost("MatMul", "(float[64,128];float[128,64])") is None


def test_batch_matmul_broadcasts_batch_dims():
    cost = tf_op_cost("BatchMatMulV2", "(half[4,16,384,64];half[4,16,64,384])")
    assert cost is None  # transposing both gives 64x64 outputs: ambiguous
    cost = tf_op_cost("BatchMatMulV2", "(half[4,16,384,64];half[1,16,64,512])")
    assert cost.flops == 2 * 4 * 16 * 384 * 512 * 64


@pytest.mark.parametrize(
    "op, shape",
    [
        ("Cast", "(float[10])"),
        ("Conv2D", "(float[1,8,8,3];float[3,3,3,8])"),
        ("Mul", "(half[3];float[3])"),
        ("Add", "(float[3];float[4])"),
    ],
)
def test_undetermined_ops_are_null(op, shape):
    assert tf_op_cost(op, shape) is None


def test_impossible_shapes_are_null():
    assert tf_op_cost("Mul", "(float[99999999999999999999999999,99999999999999];float[])") is None
