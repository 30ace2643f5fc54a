"""Kernel names shortened without losing the qualified name; rows of the same kernel told apart."""

from tb_gpu_advisor.report.kernel_sections import kernel_row_labels
from tb_gpu_advisor.report.units import kernel_label, kernel_name, launch_dims

_ANON = (
    "void tensorflow::(anonymous namespace)::GenerateNormalizedProb<float, float, 4>(float const*, "
    "float const*, float const*, float*, int, int, bool)"
)


def test_anonymous_namespace_is_part_of_the_name():
    assert kernel_name(_ANON, 80) == "tensorflow::(anonymous namespace)::GenerateNormalizedProb<...>"
    assert kernel_name(_ANON, 38) != "tensorflow::"
    assert kernel_name(_ANON, 38).startswith("tensorflow::(anonymous")


def test_templates_and_parameters_collapse():
    assert (
        kernel_name("void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<float>, long>(int)", 80)
        == "Eigen::internal::EigenMetaKernel<...>"
    )
    assert kernel_name("ampere_sgemm_128x64_tn", 80) == "ampere_sgemm_128x64_tn"
    assert launch_dims([32, 37, 1], [256, 1, 1]) == "32x37 / 256"
    assert launch_dims([1, 1, 1], None) == "1 / ?"


def _row(name, grid, block, op):
    return {"name": name, "grid": grid, "block": block, "op_name": op}


def test_rows_of_one_kernel_show_launch_then_op():
    rows = [
        _row("wrapped_broadcast.kd", [16384, 1, 1], [256, 1, 1], "jit(f)/broadcast_in_dim"),
        _row("wrapped_broadcast.kd", [256, 1, 1], [256, 1, 1], "jit(f)/broadcast_in_dim"),
        _row("copy.kd", [1, 1, 1], [512, 1, 1], ""),
        _row("copy.kd", [1, 1, 1], [512, 1, 1], "copy.1"),
        _row("unique_kernel", [1, 1, 1], [32, 1, 1], ""),
    ]
    assert kernel_row_labels(rows, 38) == [
        "wrapped_broadcast.kd [16384 / 256]",
        "wrapped_broadcast.kd [256 / 256]",
        "copy.kd [no op]",
        "copy.kd [copy.1]",
        "unique_kernel",
    ]
    assert all(
        len(label) <= 38
        for label in kernel_row_labels(
            [
                _row(_ANON, [1, 1, 1], [32, 1, 1], "a/very/long/op/name/that/goes/on"),
                _row(_ANON, [1, 1, 1], [32, 1, 1], "b/very/long/op/name/that/goes/on"),
            ],
            38,
        )
    )


def test_ops_are_told_apart_by_the_part_that_differs_and_labels_never_repeat():
    kernel = "void tensorflow::functor::ApplyAdamKernel<float>(int, float*)"
    rows = [
        _row(kernel, [864, 1, 1], [256, 1, 1], "Adam/Adam/update_5/ResourceApplyAdam"),
        _row(kernel, [864, 1, 1], [256, 1, 1], "Adam/Adam/update_7/ResourceApplyAdam"),
    ]
    assert kernel_row_labels(rows, 60) == [
        "tensorflow::functor::ApplyAdamKernel<...> [update_5]",
        "tensorflow::functor::ApplyAdamKernel<...> [update_7]",
    ]
    same = [_row(kernel, [864, 1, 1], [256, 1, 1], "Adam/x"), _row(kernel, [864, 1, 1], [256, 1, 1], "Adam/x")]
    # The number fits the width: a namespace qualifier gives way to it.
    assert kernel_row_labels(same, 44) == [
        "tensorflow::functor::ApplyAdamKernel<...>",
        "functor::ApplyAdamKernel<...> (2)",
    ]


_EIGEN = (
    "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<"
    "Eigen::Tensor<{out}, 1, 1, long>, 16, Eigen::MakePointer>, {expr} const> const, Eigen::GpuDevice>, long>"
    "(Eigen::TensorEvaluator<...>, long)"
)
_CAST = (
    "Eigen::TensorConversionOp<Eigen::half, Eigen::TensorMap<Eigen::Tensor<float const, 1, 1, long>, 16, "
    "Eigen::MakePointer> const>"
)
_COMPARE = (
    "Eigen::TensorCwiseUnaryOp<Eigen::internal::scalar_right<bool, Eigen::half, "
    "Eigen::internal::greater_equal<Eigen::half>, false>, Eigen::TensorMap<Eigen::Tensor<Eigen::half const, "
    "1, 1, long>, 16, Eigen::MakePointer> const>"
)


def test_templated_kernels_keep_their_function_and_the_arguments_that_tell_them_apart():
    """The 80-column text table: the function name and what it computes, never `Eigen.....> [TensorC...1024]`;
    namespaces go first, then the launch shape beside a detail (rows still alike are numbered)."""
    rows = [
        _row(_EIGEN.format(out="Eigen::half", expr=_CAST), [160, 1, 1], [1024, 1, 1], ""),
        _row(_EIGEN.format(out="bool", expr=_COMPARE), [160, 1, 1], [1024, 1, 1], ""),
        _row(
            _EIGEN.format(out="Eigen::half", expr=_CAST.replace("float const", "bool const")),
            [160, 1, 1],
            [1024, 1, 1],
            "",
        ),
        _row(_EIGEN.format(out="Eigen::half", expr=_CAST), [1, 1, 1], [1024, 1, 1], ""),
    ]
    labels = kernel_row_labels(rows, 37)
    assert labels == [
        "EigenMetaKernel<TensorConversionOp>",
        "EigenMetaKernel<greater_equal>",
        "EigenM...rnel<TensorConversionOp> (2)",
        "EigenM...rnel<TensorConversionOp> (3)",
    ]
    assert kernel_row_labels(rows, 80) == [
        "Eigen::internal::EigenMetaKernel<TensorConversionOp> [160 / 1024]",
        "Eigen::internal::EigenMetaKernel<greater_equal> [160 / 1024]",
        "Eigen::internal::EigenMetaKernel<TensorConversionOp> [160 / 1024] (2)",
        "Eigen::internal::EigenMetaKernel<TensorConversionOp> [1 / 1024]",
    ]
    assert (
        kernel_label(
            "void tensorflow::functor::FillPhiloxRandomKernelLaunch<tensorflow::random::"
            "UniformDistribution<tensorflow::random::PhiloxRandom, Eigen::half> >(int)",
            37,
        )
        == "FillPhiloxRandomKernelLaunch<...>"
    )


def test_a_long_plain_name_gives_way_to_the_op_that_tells_it_apart():
    gemm = (
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_"
        "kernel__5x_cublas"
    )
    rows = [
        _row(gemm, [132, 1, 1], [384, 1, 1], "cublas-gemm.10"),
        _row(gemm, [132, 1, 1], [384, 1, 1], "cublas-gemm.20"),
    ]
    assert kernel_row_labels(rows, 37) == [
        "sm90_xmma_g...cublas [cublas-gemm.10]",
        "sm90_xmma_g...cublas [cublas-gemm.20]",
    ]
