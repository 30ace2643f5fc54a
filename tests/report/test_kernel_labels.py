"""Kernel names shortened without losing the qualified name; rows of the same kernel told apart."""

from tb_gpu_advisor.report.sections import kernel_row_labels
from tb_gpu_advisor.report.units import kernel_name, launch_dims

_ANON = ("void tensorflow::(anonymous namespace)::GenerateNormalizedProb<float, float, 4>(float const*, "
         "float const*, float const*, float*, int, int, bool)")


def test_anonymous_namespace_is_part_of_the_name():
    assert kernel_name(_ANON, 80) == "tensorflow::(anonymous namespace)::GenerateNormalizedProb<...>"
    assert kernel_name(_ANON, 38) != "tensorflow::"
    assert kernel_name(_ANON, 38).startswith("tensorflow::(anonymous")


def test_templates_and_parameters_collapse():
    assert kernel_name("void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<float>, long>(int)", 80) == \
        "Eigen::internal::EigenMetaKernel<...>"
    assert kernel_name("ampere_sgemm_128x64_tn", 80) == "ampere_sgemm_128x64_tn"
    assert launch_dims([32, 37, 1], [256, 1, 1]) == "32x37 / 256"
    assert launch_dims([1, 1, 1], None) == "1 / ?"


def _row(name, grid, block, op):
    return {"name": name, "grid": grid, "block": block, "op_name": op}


def test_rows_of_one_kernel_show_launch_then_op():
    rows = [_row("wrapped_broadcast.kd", [16384, 1, 1], [256, 1, 1], "jit(f)/broadcast_in_dim"),
            _row("wrapped_broadcast.kd", [256, 1, 1], [256, 1, 1], "jit(f)/broadcast_in_dim"),
            _row("copy.kd", [1, 1, 1], [512, 1, 1], ""),
            _row("copy.kd", [1, 1, 1], [512, 1, 1], "copy.1"),
            _row("unique_kernel", [1, 1, 1], [32, 1, 1], "")]
    assert kernel_row_labels(rows, 38) == [
        "wrapped_broadcast.kd [16384 / 256]", "wrapped_broadcast.kd [256 / 256]", "copy.kd [no op]",
        "copy.kd [copy.1]", "unique_kernel"]
    assert all(len(label) <= 38 for label in kernel_row_labels(
        [_row(_ANON, [1, 1, 1], [32, 1, 1], "a/very/long/op/name/that/goes/on"),
         _row(_ANON, [1, 1, 1], [32, 1, 1], "b/very/long/op/name/that/goes/on")], 38))


def test_ops_are_told_apart_by_the_part_that_differs_and_labels_never_repeat():
    kernel = "void tensorflow::functor::ApplyAdamKernel<float>(int, float*)"
    rows = [_row(kernel, [864, 1, 1], [256, 1, 1], "Adam/Adam/update_5/ResourceApplyAdam"),
            _row(kernel, [864, 1, 1], [256, 1, 1], "Adam/Adam/update_7/ResourceApplyAdam")]
    assert kernel_row_labels(rows, 60) == ["tensorflow::functor::ApplyAdamKernel<...> [update_5]",
                                           "tensorflow::functor::ApplyAdamKernel<...> [update_7]"]
    same = [_row(kernel, [864, 1, 1], [256, 1, 1], "Adam/x"), _row(kernel, [864, 1, 1], [256, 1, 1], "Adam/x")]
    assert kernel_row_labels(same, 44) == ["tensorflow::functor::ApplyAdamKernel<...>",
                                           "tensorflow::functor::ApplyAdamKernel<...> (2)"]
