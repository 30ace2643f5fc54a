"""The kernels of an optimizer update (SGD with momentum, Adam) as TensorFlow launches them, and a one-kernel op."""

from __future__ import annotations

from tb_gpu_advisor.scenarios import kernels as k
from tb_gpu_advisor.scenarios.engine import Kernel, Op


def sgd_momentum(spec, variables):
    """Keras SGD with momentum: one ResourceApplyKerasMomentum (an Eigen kernel) per variable."""
    name = (
        "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap"
        "<Eigen::Tensor<float, 1, 1, long>, 16, Eigen::MakePointer>, Eigen::TensorCwiseBinaryOp<Eigen::"
        "internal::scalar_difference_op<float, float>, Eigen::TensorMap<Eigen::Tensor<float, 1, 1, long>, 16, "
        "Eigen::MakePointer> const, Eigen::TensorCwiseBinaryOp<Eigen::internal::scalar_product_op<float, "
        "float>, Eigen::TensorMap<Eigen::Tensor<float, 1, 1, long>, 16, Eigen::MakePointer> const, Eigen::"
        "TensorCwiseNullaryOp<Eigen::internal::scalar_constant_op<float>, Eigen::TensorMap<Eigen::Tensor<float,"
        " 1, 1, long>, 16, Eigen::MakePointer> const> const> const> const> const, Eigen::GpuDevice>, long>"
        "(Eigen::TensorEvaluator<...>, long)"
    )
    return [
        Op(
            f"SGD/SGD/update_{index}/ResourceApplyKerasMomentum:ResourceApplyKerasMomentum",
            (k.memory_bound(spec, name, size, "fp32", 4),),
        )
        for index, (_, size) in enumerate(variables)
    ]


def adam(spec, variables):
    """tf.keras Adam as ResourceApplyAdam: one ApplyAdamKernel per variable."""
    name = (
        "void tensorflow::functor::ApplyAdamKernel<float>(int, float*, float*, float*, float const*, "
        "float const*, float const*, float const*, float const*, float const*, float const*, bool)"
    )
    return [
        Op(
            f"Adam/Adam/update_{index}/ResourceApplyAdam:ResourceApplyAdam",
            (k.memory_bound(spec, name, size, "fp32", 7, 40),),
        )
        for index, (_, size) in enumerate(variables)
    ]


def single_kernel_op(tf_op, name, duration_us, grid, block, registers, static_shared=0, dynamic_shared=0):
    """An op with one hand-specified kernel (custom ops, where a roofline would not say how slow they are)."""
    return Op(tf_op, (Kernel(name, duration_us, grid, block, registers, static_shared, dynamic_shared),))
