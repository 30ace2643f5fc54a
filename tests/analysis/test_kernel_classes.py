"""The kernel classifier against the hand-labelled table of every kernel name in every real trace."""

import pathlib

import pytest

from tb_gpu_advisor.analysis.kernel_names import KERNEL_CLASSES, is_elementwise, kernel_class
from tests.data import REAL
from tests.data.extract_kernel_names import all_kernel_names

TABLE = pathlib.Path(__file__).resolve().parents[1] / "data" / "kernel_classes.tsv"


def _labelled():
    rows = []
    for line in TABLE.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            label, sources, name = line.split("\t", 2)
            rows.append((label, sources, name))
    return rows


LABELLED = _labelled()


def test_table_is_well_formed():
    assert len(LABELLED) == 290
    assert {label for label, _, _ in LABELLED} <= set(KERNEL_CLASSES)
    assert len({name for _, _, name in LABELLED}) == len(LABELLED)


@pytest.mark.parametrize(
    "label, sources, name", LABELLED, ids=[f"{i}:{n[:40]}" for i, (_, _, n) in enumerate(LABELLED)]
)
def test_classifier_matches_the_hand_label(label, sources, name):
    assert kernel_class(name) == label
    assert is_elementwise(name) == (label == "elementwise")


def test_library_kernels_are_never_elementwise_even_with_relu_in_the_name():
    assert kernel_class("volta_fp16_s884cudnn_fp16_256x128_ldg8_relu_f2f_exp_small_nhwc_tn_v1") == "library"
    assert kernel_class("cudnn_ampere_scudnn_128x64_relu_xregs_large_nn_v1") == "library"
    for name in (
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_relu",
        "ck::kernel_gemm_xdl<Relu>",
        "ck_tile::kentry<Sigmoid>",
        "rcclKernel_AllReduce_RING_LL_Sum_float",
        "ncclDevKernel_Tanh",
    ):
        assert not is_elementwise(name), name


def test_every_kernel_name_of_the_real_traces_is_labelled():
    found = {name for _, name in all_kernel_names(REAL)}
    assert len(found) == 289
    assert found <= {name for _, _, name in LABELLED}


def test_fbgemm_kernels_are_not_matrix_math_by_their_namespace():
    """`gemm` inside `fbgemm_gpu::` is a library's name, not a matrix multiply: its permute and offset kernels
    are ordinary kernels, while cuBLAS's sgemm, CUTLASS's s1688gemm and a GEMM inside fbgemm stay matrix math."""
    from tb_gpu_advisor.analysis.kernel_names import is_library_math

    assert not is_library_math(
        "void fbgemm_gpu::permute_2D_lengths_kernel<int>(int, int, int const*, int const*, int*)"
    )
    assert is_library_math("volta_sgemm_128x64_nn")
    assert is_library_math("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4>(Params)")
    assert is_library_math("void fbgemm_gpu::f8f8bf16_rowwise_gemm_kernel<cutlass::bfloat16_t>(Params)")
