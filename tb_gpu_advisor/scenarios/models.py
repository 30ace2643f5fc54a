"""The ops (and kernels) of one training step of the convolutional models the scenarios train (ResNet-50, U-Net), as
TensorFlow launches them."""

from tb_gpu_advisor.scenarios import kernels as k
from tb_gpu_advisor.scenarios.engine import Op
from tb_gpu_advisor.scenarios.optimizers import adam, sgd_momentum

_RESNET50_STAGES = ((3, 64, 256, 56), (4, 128, 512, 28), (6, 256, 1024, 14), (3, 512, 2048, 7))
_FP = {"fp16": ("half", "Eigen::half", "__half"), "fp32": ("float", "float", "float")}


def _eigen_op(spec, tf_op, functor, elements, dtype, binary=True):
    name = k.eigen(functor, _FP[dtype][1], binary)
    return Op(tf_op, (k.memory_bound(spec, name, elements, dtype, 3 if binary else 2),))


def _conv_layer(spec, prefix, batch, h, w, c, out, r, stride, math_kind):
    """Forward (conv, batch norm) ops of one conv layer, and its backward ops in forward order."""
    size = batch * (h // stride) * (w // stride) * out
    tdtype = _FP[math_kind][2]
    forward = [
        Op(f"{prefix}/Conv2D:Conv2D", (k.conv(spec, "fprop", batch, h, w, c, out, r, r, stride, math_kind),)),
        Op(
            f"{prefix}_bn/FusedBatchNormV3:FusedBatchNormV3",
            (k.memory_bound(spec, k.batch_norm("forward", tdtype), size, math_kind, 3, 40, 512),),
        ),
    ]
    backward = [
        Op(
            f"gradient_tape/{prefix}_bn/FusedBatchNormGradV3:FusedBatchNormGradV3",
            (k.memory_bound(spec, k.batch_norm("backward", tdtype), size, math_kind, 4, 48, 512),),
        ),
        Op(
            f"gradient_tape/{prefix}/Conv2DBackpropFilter:Conv2DBackpropFilter",
            (k.conv(spec, "wgrad", batch, h, w, c, out, r, r, stride, math_kind),),
        ),
    ]
    if c != 3:
        backward.append(
            Op(
                f"gradient_tape/{prefix}/Conv2DBackpropInput:Conv2DBackpropInput",
                (k.conv(spec, "dgrad", batch, h, w, c, out, r, r, stride, math_kind),),
            )
        )
    return (
        forward,
        backward,
        [(f"{prefix}/kernel", r * r * c * out), (f"{prefix}_bn/gamma", out), (f"{prefix}_bn/beta", out)],
    )


def _relu(spec, prefix, elements, math_kind):
    dtype = _FP[math_kind][1]
    return (
        _eigen_op(spec, f"{prefix}/Relu:Relu", "scalar_max_op", elements, math_kind),
        Op(
            f"gradient_tape/{prefix}/ReluGrad:ReluGrad",
            (
                k.memory_bound(
                    spec,
                    f"void tensorflow::functor::ReluGradKernel<{dtype}>({dtype} const*, {dtype} const*, {dtype}*, int)",
                    elements,
                    math_kind,
                    3,
                ),
            ),
        ),
    )


def resnet50(spec, batch, math_kind="fp16", classes=1000):
    """ResNet-50 v1.5 (NHWC) forward, backward and SGD-momentum update: about 600 kernels a step."""
    forward, backward, variables = [], [], []

    def layer(prefix, h, c, out, r, stride=1, relu=True):
        f, b, v = _conv_layer(spec, prefix, batch, h, h, c, out, r, stride, math_kind)
        forward.extend(f)
        variables.extend(v)
        if relu:
            fr, br = _relu(spec, prefix, batch * (h // stride) ** 2 * out, math_kind)
            forward.append(fr)
            b.insert(0, br)
        backward[:0] = b

    layer("resnet50/conv1_conv", 224, 3, 64, 7, stride=2)
    pooled = batch * 56 * 56 * 64
    forward.append(
        Op(
            "resnet50/pool1_pool/MaxPool:MaxPool",
            (
                k.memory_bound(
                    spec,
                    "void cudnn::pooling_fw_4d_kernel<__half, float, cudnn::maxpooling_func<float, (cudnnNanPropagation_t)0>,"
                    " (cudnnPoolingMode_t)0, false>(cudnnTensorStruct, __half const*, cudnnTensorStruct, __half*, "
                    "cudnnPoolingStruct, float, float, int, cudnn::reduced_divisor, cudnn::reduced_divisor)",
                    pooled * 4,
                    math_kind,
                    1.25,
                ),
            ),
        )
    )
    backward.insert(
        0,
        Op(
            "gradient_tape/resnet50/pool1_pool/MaxPool/MaxPoolGrad:MaxPoolGrad",
            (
                k.memory_bound(
                    spec,
                    "void cudnn::pooling_bw_kernel_max_nchw_fully_packed_large<__half, float, 2, (cudnnNanPropagation_t)0>"
                    "(cudnnTensorStruct, __half const*, cudnnTensorStruct, __half const*, __half const*, __half*, "
                    "cudnnTensorStruct, float, float, cudnnPoolingStruct, int, cudnn::reduced_divisor, float)",
                    pooled * 4,
                    math_kind,
                    2.5,
                ),
            ),
        ),
    )
    channels = 64
    for stage, (blocks, mid, out, size) in enumerate(_RESNET50_STAGES, start=2):
        for block in range(1, blocks + 1):
            prefix = f"resnet50/conv{stage}_block{block}"
            first = block == 1
            stride = 2 if first and stage > 2 else 1
            in_size = size * stride
            if first:
                layer(f"{prefix}_0_conv", in_size, channels, out, 1, stride, relu=False)
            layer(f"{prefix}_1_conv", in_size, channels if first else out, mid, 1)
            layer(f"{prefix}_2_conv", in_size, mid, mid, 3, stride)
            layer(f"{prefix}_3_conv", size, mid, out, 1, relu=False)
            elements = batch * size * size * out
            forward.append(_eigen_op(spec, f"{prefix}_add/add:AddV2", "scalar_sum_op", elements, math_kind))
            fr, br = _relu(spec, f"{prefix}_out", elements, math_kind)
            forward.append(fr)
            backward.insert(0, br)
            channels = out
    head = [
        Op(
            "resnet50/avg_pool/Mean:Mean",
            (
                k.memory_bound(
                    spec,
                    "void tensorflow::functor::ColumnReduceKernel"
                    "<Eigen::half const*, Eigen::half*, cub::Sum>(Eigen::half const*, Eigen::half*, int, int, "
                    "cub::Sum, std::iterator_traits<Eigen::half const*>::value_type)",
                    batch * 49 * 2048,
                    math_kind,
                    1,
                ),
            ),
        ),
        Op("resnet50/predictions/MatMul:MatMul", (k.gemm(spec, batch, classes, 2048, math_kind, "nn"),)),
        Op(
            "sparse_categorical_crossentropy/SparseSoftmaxCrossEntropyWithLogits:SparseSoftmaxCrossEntropyWithLogits",
            (
                k.memory_bound(
                    spec,
                    "void tensorflow::(anonymous "
                    "namespace)::GenerateNormalizedProb<float, float, 4>(float const*, float const*, float const*, "
                    "float*, int, int, bool)",
                    batch * classes,
                    "fp32",
                    3,
                ),
            ),
        ),
    ]
    head_grad = [
        Op(
            "gradient_tape/resnet50/predictions/MatMul/MatMul_1:MatMul",
            (k.gemm(spec, 2048, classes, batch, math_kind, "nt"),),
        ),
        Op(
            "gradient_tape/resnet50/predictions/MatMul/MatMul:MatMul",
            (k.gemm(spec, batch, 2048, classes, math_kind, "tn"),),
        ),
    ]
    variables.append(("resnet50/predictions/kernel", 2048 * classes))
    casts = (
        [
            Op(f"{name}/Cast:Cast", (k.memory_bound(spec, k.eigen_cast_to_half(), size, "fp32", 2),))
            for name, size in variables
            if name.endswith("kernel")
        ]
        if math_kind == "fp16"
        else []
    )
    return casts + forward + head + head_grad + backward + sgd_momentum(spec, variables)


def unet(spec, batch, size, base=32, math_kind="fp16"):
    """A 3-level U-Net with batch norm for `size` x `size` RGB images (segmentation), and Adam."""
    forward, backward, variables = [], [], []
    levels = [(size >> level, base << level) for level in range(4)]
    channels = 3

    def layer(prefix, h, c, out, r=3):
        f, b, v = _conv_layer(spec, prefix, batch, h, h, c, out, r, 1, math_kind)
        fr, br = _relu(spec, prefix, batch * h * h * out, math_kind)
        forward.extend(f + [fr])
        backward[:0] = [br] + b
        variables.extend(v)

    for level, (h, width) in enumerate(levels):
        layer(f"unet/down{level}_conv1", h, channels, width)
        layer(f"unet/down{level}_conv2", h, width, width)
        channels = width
        if level < 3:
            forward.append(
                Op(
                    f"unet/down{level}_pool/MaxPool:MaxPool",
                    (
                        k.memory_bound(
                            spec,
                            "void cudnn::pooling_fw_4d_kernel<__half, float, cudnn::maxpooling_func<float, "
                            "(cudnnNanPropagation_t)0>, (cudnnPoolingMode_t)0, false>(cudnnTensorStruct, __half const*, "
                            "cudnnTensorStruct, __half*, cudnnPoolingStruct, float, float, int, cudnn::reduced_divisor, "
                            "cudnn::reduced_divisor)",
                            batch * h * h * width,
                            math_kind,
                            1.25,
                        ),
                    ),
                )
            )
    for level in (2, 1, 0):
        h, width = levels[level]
        forward.append(
            Op(
                f"unet/up{level}/ResizeNearestNeighbor:ResizeNearestNeighbor",
                (
                    k.memory_bound(
                        spec,
                        "void tensorflow::(anonymous namespace)::ResizeNearestNeighborNHWC<Eigen::half, false, false>"
                        "(int, Eigen::half const*, int, int, int, int, int, float, float, Eigen::half*)",
                        batch * h * h * width * 2,
                        math_kind,
                        1.25,
                    ),
                ),
            )
        )
        layer(f"unet/up{level}_conv1", h, width * 3, width)
        layer(f"unet/up{level}_conv2", h, width, width)
    head = [
        Op("unet/logits/Conv2D:Conv2D", (k.conv(spec, "fprop", batch, size, size, base, 1, 1, 1, 1, math_kind),)),
        Op(
            "binary_crossentropy/logistic_loss:SigmoidCrossEntropyWithLogits",
            (
                k.memory_bound(
                    spec, k.eigen("scalar_logistic_op", "float", binary=False), batch * size * size, "fp32", 3
                ),
            ),
        ),
        Op(
            "gradient_tape/unet/logits/Conv2DBackpropInput:Conv2DBackpropInput",
            (k.conv(spec, "dgrad", batch, size, size, base, 1, 1, 1, 1, math_kind),),
        ),
    ]
    variables.append(("unet/logits/kernel", base))
    cast = [Op("unet/Cast:Cast", (k.memory_bound(spec, k.eigen_cast_to_half(), batch * size * size * 3, "fp32", 1.5),))]
    return cast + forward + head + backward + adam(spec, variables)
