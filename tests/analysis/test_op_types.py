"""op_type: the kind of operation of kernel names seen in real TensorFlow, JAX/XLA, PyTorch and ROCm traces."""

import pytest

from tb_gpu_advisor.analysis.op_types import OP_TYPES, op_type, op_type_rollup


@pytest.mark.parametrize(
    "name, op, expected",
    [
        ("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn", "model/dense/MatMul", "matmul_conv"),
        ("volta_scudnn_128x64_relu_interior_nn_v1", "model/conv2d/Conv2D", "matmul_conv"),
        ("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4>(Params)", "dot.3", "matmul_conv"),
        ("Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI16x16x16x1", "custom-call.2", "matmul_conv"),
        ("triton_gemm_dot_1", "triton_gemm_dot_1", "matmul_conv"),
        (
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
            "CollectiveReduceV2",
            "collective",
        ),
        ("loop_all_reduce_fusion", "all-reduce-start.1", "collective"),
        (
            "void tensorflow::functor::SwapDimension1And2InTensor3UsingTiles<unsigned int, 256, 32, 32, false>",
            "transpose",
            "copy",
        ),
        ("__amd_rocclr_copyBuffer", None, "copy"),
        ("loop_transpose_fusion", "transpose.4", "copy"),
        (
            "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<scalar_sum_op>>>, long>(int)",
            "model/add",
            "elementwise",
        ),
        ("loop_add_fusion", "add.7", "elementwise"),
        (
            "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>",
            "aten::add_",
            "elementwise",
        ),
        ("input_reduce_fusion_3", "reduce.12", "reduction"),
        (
            "void tensorflow::BiasGradNHWC_SharedAtomics<float>(int, float const*, float*, int)",
            "BiasAddGrad",
            "reduction",
        ),
        (
            "void at::native::(anonymous namespace)::softmax_warp_forward<float, float, float, 10>",
            "aten::softmax",
            "reduction",
        ),
        ("redzone_checker", None, "other"),
    ],
)
def test_op_type(name, op, expected):
    assert op_type(name, op) == expected


def test_every_answer_is_a_known_type():
    assert op_type("", None) in OP_TYPES and op_type(None, None) in OP_TYPES


def test_rollup_shares_add_up_and_come_largest_first():
    rows = [
        {"name": "ampere_sgemm_128x64_tn", "total_us": 30.0, "occurrences": 3},
        {"name": "loop_add_fusion", "total_us": 10.0, "occurrences": 5},
        {"name": "ampere_sgemm_64x64_nn", "total_us": 40.0, "occurrences": 1},
    ]
    rollup = op_type_rollup(rows)
    assert [r["op_type"] for r in rollup] == ["matmul_conv", "elementwise"]
    assert rollup[0] == {"op_type": "matmul_conv", "total_us": 70.0, "kernels": 2, "occurrences": 4, "share_pct": 87.5}
    assert op_type_rollup([]) == []


@pytest.mark.parametrize(
    "name, op, expected",
    [
        # Review issue 31 R1: a dtype cast is no convolution, random numbers are no copy (V100 real trace).
        (
            "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<"
            "Eigen::Tensor<Eigen::half, 1, 1, long>, 16, Eigen::MakePointer>, Eigen::TensorConversionOp<Eigen::half, "
            "Eigen::TensorMap<Eigen::Tensor<float const, 1, 1, long>, 16, Eigen::MakePointer> const> const> const, "
            "Eigen::GpuDevice>, long>(long)",
            "",
            "elementwise",
        ),
        (
            "void tensorflow::functor::FillPhiloxRandomKernelLaunch<tensorflow::random::UniformDistribution<"
            "tensorflow::random::PhiloxRandom, Eigen::half> >(unsigned long long const*)",
            "",
            "elementwise",
        ),
        ("loop_convert_fusion", "convert.3", "elementwise"),
        ("wrapped_convert", "convert.1", "elementwise"),
        # Review issue 31 D2: cuDNN's batch-norm kernels are normalisation, not a GEMM or convolution.
        ("cudnn::bn_bw_1C11_kernel_new", "model/FusedBatchNormGradV3", "reduction"),
        ("cudnn::detail::implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false>", "Conv2D", "matmul_conv"),
        ("void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true>", "Conv2D", "copy"),
        ("nvjet_tst_128x64_64x8_2x1_v_bz_coopA_TNN", "aten::mm", "matmul_conv"),
        ("fusion_12", "model/MatMul", "matmul_conv"),
        ("redzone_checker", "model/Sum_1", "reduction"),
        ("redzone_checker", "model/MaxPool", "other"),
    ],
)
def test_op_type_words(name, op, expected):
    assert op_type(name, op) == expected


def test_words_are_whole_words_and_camel_case_pairs():
    from tb_gpu_advisor.analysis.op_types import name_words

    words = name_words("Eigen::TensorConversionOp<MatMul>s16816gemm")
    assert {"conversion", "matmul", "gemm"} <= words and "conv" not in words


@pytest.mark.parametrize(
    "name, op, fusible",
    [
        ("void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<...>, long>(int)", "model/add", True),
        ("void tensorflow::functor::RowReduceKernel<float const*, float*, cub::Sum>", "model/Mean", True),
        ("void tensorflow::(anonymous namespace)::GenerateNormalizedProb<float, float, 4>", "model/Softmax", True),
        ("void tensorflow::functor::GatherOpKernel<float, int, true>", "model/embedding/GatherV2", True),
        ("void tensorflow::functor::ConcatKernel<float, int>", "model/concat", True),
        # a library's kernel is one fused kernel already
        ("void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, 512, true, 1>", "model/bn/FusedBatchNormV3", False),
        ("void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true>", "Conv2D", False),
        ("Memcpy DtoD (Device -> Device)", "model/Identity", False),
        ("void tensorflow::functor::SwapDimension1And2InTensor3<float>", "model/transpose", False),
        ("ampere_sgemm_128x64_tn", "model/dense/MatMul", False),
        ("ncclDevKernel_AllReduce_Sum_f32_RING_LL", "", False),
    ],
)
def test_xla_fusible_kinds_are_op_types_element_wise_and_reduction_kinds_with_concats_and_gathers(name, op, fusible):
    from tb_gpu_advisor.analysis.op_types import is_xla_fusible_kernel

    assert is_xla_fusible_kernel(name, op) is fusible
    # the card's kinds are unchanged: fusible is a set built from them
    if fusible:
        assert op_type(name, op) in ("elementwise", "reduction", "copy")
