"""A transformer encoder/decoder training step, as TensorFlow's executor launches it and as XLA compiles it."""

from tb_gpu_advisor.scenarios import kernels as k
from tb_gpu_advisor.scenarios.engine import Op
from tb_gpu_advisor.scenarios.optimizers import adam

_EIGEN_TYPE = {"fp32": "float", "fp16": "Eigen::half"}
_ROW_MAX = (
    "void tensorflow::functor::RowReduceKernel<{t} const*, {t}*, tensorflow::functor::MaxReducer<{t}>>"
    "({t} const*, {t}*, int, int, tensorflow::functor::MaxReducer<{t}>, {t})"
)
_SOFTMAX = (
    "void tensorflow::(anonymous namespace)::GenerateNormalizedProb<{t}, float, 4>({t} const*, {t} const*, "
    "float const*, {t}*, int, int, bool)"
)


def _dense(spec, prefix, rows, n_in, n_out, math_kind):
    return Op(f"{prefix}/MatMul:MatMul", (k.gemm(spec, rows, n_out, n_in, math_kind, "nn"),))


def _dense_grads(spec, prefix, rows, n_in, n_out, math_kind):
    return [
        Op(f"gradient_tape/{prefix}/MatMul/MatMul:MatMul", (k.gemm(spec, rows, n_in, n_out, math_kind, "nt"),)),
        Op(f"gradient_tape/{prefix}/MatMul/MatMul_1:MatMul", (k.gemm(spec, n_in, n_out, rows, math_kind, "tn"),)),
    ]


def _eigen(spec, tf_op, functor, elements, math_kind, binary=True):
    return Op(
        tf_op,
        (
            k.memory_bound(
                spec, k.eigen(functor, _EIGEN_TYPE[math_kind], binary), elements, math_kind, 3 if binary else 2
            ),
        ),
    )


def encoder_step(spec, batch, seq, layers, hidden, heads, math_kind, name="distilbert", vocab=30522):
    """Forward, backward and Adam of a BERT-style encoder fine-tuned for classification (TF ops, no XLA)."""
    rows, head_dim, ffn = batch * seq, hidden // heads, 4 * hidden
    t = _EIGEN_TYPE[math_kind]
    forward, backward, variables = [], [], []
    for layer in range(layers):
        p = f"{name}/transformer/layer_{layer}"
        att = f"{p}/attention"
        forward += [
            _dense(spec, f"{att}/q_lin", rows, hidden, hidden, math_kind),
            _dense(spec, f"{att}/k_lin", rows, hidden, hidden, math_kind),
            _dense(spec, f"{att}/v_lin", rows, hidden, hidden, math_kind),
            Op(
                f"{att}/MatMul:BatchMatMulV2",
                (k.gemm(spec, seq, seq, head_dim, math_kind, "tn", batch=batch * heads, tile=(64, 64)),),
            ),
            Op(
                f"{att}/Softmax:Softmax",
                (
                    k.memory_bound(spec, _ROW_MAX.format(t=t), batch * heads * seq * seq, math_kind, 1),
                    k.memory_bound(spec, _SOFTMAX.format(t=t), batch * heads * seq * seq, math_kind, 2),
                ),
            ),
            Op(
                f"{att}/MatMul_1:BatchMatMulV2",
                (k.gemm(spec, seq, head_dim, seq, math_kind, "nn", batch=batch * heads, tile=(64, 64)),),
            ),
            _dense(spec, f"{att}/out_lin", rows, hidden, hidden, math_kind),
            _eigen(spec, f"{p}/add:AddV2", "scalar_sum_op", rows * hidden, math_kind),
            Op(
                f"{p}/sa_layer_norm/FusedBatchNormV3:FusedBatchNormV3",
                (k.memory_bound(spec, k.batch_norm("forward", "float"), rows * hidden, "fp32", 3, 40, 512),),
            ),
            _dense(spec, f"{p}/ffn/lin1", rows, hidden, ffn, math_kind),
            _eigen(spec, f"{p}/ffn/gelu/Erf:Erf", "scalar_erf_op", rows * ffn, math_kind, False),
            _eigen(spec, f"{p}/ffn/gelu/mul_1:Mul", "scalar_product_op", rows * ffn, math_kind),
            _dense(spec, f"{p}/ffn/lin2", rows, ffn, hidden, math_kind),
            _eigen(spec, f"{p}/add_1:AddV2", "scalar_sum_op", rows * hidden, math_kind),
            Op(
                f"{p}/output_layer_norm/FusedBatchNormV3:FusedBatchNormV3",
                (k.memory_bound(spec, k.batch_norm("forward", "float"), rows * hidden, "fp32", 3, 40, 512),),
            ),
        ]
        grads = []
        grads.append(
            Op(
                f"gradient_tape/{p}/output_layer_norm/FusedBatchNormGradV3:FusedBatchNormGradV3",
                (k.memory_bound(spec, k.batch_norm("backward", "float"), rows * hidden, "fp32", 4, 48, 512),),
            )
        )
        grads += _dense_grads(spec, f"{p}/ffn/lin2", rows, ffn, hidden, math_kind)
        grads += [
            _eigen(spec, f"gradient_tape/{p}/ffn/gelu/mul_1/Mul:Mul", "scalar_product_op", rows * ffn, math_kind),
            _eigen(spec, f"gradient_tape/{p}/ffn/gelu/Erf/mul:Mul", "scalar_product_op", rows * ffn, math_kind),
        ]
        grads += _dense_grads(spec, f"{p}/ffn/lin1", rows, hidden, ffn, math_kind)
        grads.append(
            Op(
                f"gradient_tape/{p}/sa_layer_norm/FusedBatchNormGradV3:FusedBatchNormGradV3",
                (k.memory_bound(spec, k.batch_norm("backward", "float"), rows * hidden, "fp32", 4, 48, 512),),
            )
        )
        grads += _dense_grads(spec, f"{att}/out_lin", rows, hidden, hidden, math_kind)
        grads += [
            Op(
                f"gradient_tape/{att}/MatMul_1/MatMul:BatchMatMulV2",
                (k.gemm(spec, seq, seq, head_dim, math_kind, "nt", batch=batch * heads, tile=(64, 64)),),
            ),
            Op(
                f"gradient_tape/{att}/MatMul_1/MatMul_1:BatchMatMulV2",
                (k.gemm(spec, seq, head_dim, seq, math_kind, "tn", batch=batch * heads, tile=(64, 64)),),
            ),
            _eigen(
                spec, f"gradient_tape/{att}/Softmax/mul:Mul", "scalar_product_op", batch * heads * seq * seq, math_kind
            ),
            Op(
                f"gradient_tape/{att}/MatMul/MatMul:BatchMatMulV2",
                (k.gemm(spec, seq, head_dim, seq, math_kind, "nn", batch=batch * heads, tile=(64, 64)),),
            ),
            Op(
                f"gradient_tape/{att}/MatMul/MatMul_1:BatchMatMulV2",
                (k.gemm(spec, seq, head_dim, seq, math_kind, "tn", batch=batch * heads, tile=(64, 64)),),
            ),
        ]
        for lin in ("v_lin", "k_lin", "q_lin"):
            grads += _dense_grads(spec, f"{att}/{lin}", rows, hidden, hidden, math_kind)
        grads.append(_eigen(spec, f"gradient_tape/{p}/AddN:AddN", "scalar_sum_op", rows * hidden, math_kind))
        backward[:0] = grads
        variables += [(f"{p}/{w}", hidden * hidden) for w in ("q", "k", "v", "out")]
        variables += [(f"{p}/lin1", hidden * ffn), (f"{p}/lin2", ffn * hidden)]
        variables += [(f"{p}/{n}", hidden) for n in ("ln1_gamma", "ln1_beta", "ln2_gamma", "ln2_beta")]
    embed = [
        Op(
            f"{name}/embeddings/word_embeddings/Gather:ResourceGather",
            (
                k.memory_bound(
                    spec,
                    "void tensorflow::functor::GatherOpKernel<float, int, true>(float const*, int const*, float*, long, "
                    "long, long, long)",
                    rows * hidden,
                    "fp32",
                    2,
                ),
            ),
        )
    ]
    head = [
        _dense(spec, f"{name}/classifier", batch, hidden, 2, "fp32"),
        Op(
            "sparse_categorical_crossentropy/SparseSoftmaxCrossEntropyWithLogits:SparseSoftmaxCrossEntropyWithLogits",
            (k.memory_bound(spec, _SOFTMAX.format(t="float"), batch * 2, "fp32", 3),),
        ),
    ]
    embed_grad = [
        Op(
            f"gradient_tape/{name}/embeddings/word_embeddings/UnsortedSegmentSum:UnsortedSegmentSum",
            (
                k.memory_bound(
                    spec,
                    "void tensorflow::functor::UnsortedSegmentCustomKernel<float, int, tensorflow::"
                    "functor::AtomicSumOpGpu<float>>(long, long, long, int const*, float const*, float*)",
                    rows * hidden,
                    "fp32",
                    3,
                ),
            ),
        )
    ]
    variables += [("word_embeddings", vocab * hidden), ("classifier/kernel", hidden * 2)]
    casts = []
    if math_kind == "fp16":
        cast = k.eigen_cast_to_half()
        casts = [
            Op(f"{name}/{var}/Cast:Cast", (k.memory_bound(spec, cast, size, "fp32", 1.5),))
            for var, size in variables
            if size >= hidden * hidden
        ]
    return embed + casts + forward + head + backward + embed_grad + adam(spec, variables)


def _fmha(spec, direction, batch, heads, seq, head_dim, hlo_op):
    """cuDNN's fused flash attention kernel, as XLA calls it on Hopper."""
    flops = (4.0 if direction == "fprop" else 10.0) * batch * heads * seq * seq * head_dim
    name = (
        f"cudnn_generated_fort_native_sdpa_sm90_flash_{direction}_wgmma_bf16_knob_3_64x128x{head_dim}_4x1x1_kernel0_0"
    )
    nbytes = 4 * batch * heads * seq * head_dim * 2
    # Flash attention sustains about 70% of the GEMM rate: softmax and masking share the SMs with the MMAs.
    duration = k.roofline_us(spec, flops / 0.7, nbytes, "bf16")
    return k.Kernel(name, duration, (seq // 128, heads, batch), (384, 1, 1), 168, 0, 164_096, hlo_op)


def decoder_xla(spec, batch, seq, layers, hidden, heads, vocab, hlo=None):
    """A GPT-style decoder step compiled by XLA in bfloat16: one XlaLaunch op launching every kernel. With `hlo`
    (a scenarios.decoder_hlo.DecoderHlo) each kernel's HLO instruction is also written into that module."""
    rows, ffn, head_dim = batch * seq, 4 * hidden, hidden // heads
    kernels, fusion = [], iter(range(1, 10**6))

    def gemm(m, n, kk, layout="nn"):
        kernel = k.gemm(spec, m, n, kk, "bf16", layout, tile=(128, 256), hlo_op=f"cublas-gemm.{next(fusion)}")
        if hlo is not None:
            hlo.gemm(kernel.hlo_op, m, n, kk)
        return kernel

    def fuse(kind, elements, passes=3):
        kernel = k.xla_fusion(spec, f"{kind}_fusion.{next(fusion)}", elements, "bf16", passes)
        if hlo is not None:
            hlo.fusion(kernel.hlo_op, kind, elements, passes)
        return kernel

    def attention(direction):
        kernel = _fmha(spec, direction, batch, heads, seq, head_dim, f"custom-call.{next(fusion)}")
        if hlo is not None:
            hlo.attention(kernel.hlo_op, direction, batch, heads, seq, head_dim)
        return kernel

    kernels.append(fuse("loop_gather", rows * hidden, 2))
    for _ in range(layers):
        kernels += [
            fuse("input_reduce", rows * hidden, 2),
            gemm(rows, 3 * hidden, hidden),
            attention("fprop"),
            gemm(rows, hidden, hidden),
            fuse("loop_add", rows * hidden),
            fuse("input_reduce", rows * hidden, 2),
            gemm(rows, ffn, hidden),
            fuse("loop_multiply", rows * ffn, 2),
            gemm(rows, hidden, ffn),
            fuse("loop_add", rows * hidden),
        ]
    kernels += [
        fuse("input_reduce", rows * hidden, 2),
        gemm(rows, vocab, hidden),
        fuse("input_reduce", rows * vocab, 1),
        fuse("loop_exponential", rows * vocab, 2),
        gemm(rows, hidden, vocab, "nt"),
        gemm(hidden, vocab, rows, "tn"),
    ]
    for _ in range(layers):
        kernels += [
            fuse("loop_add", rows * hidden),
            gemm(rows, ffn, hidden, "nt"),
            gemm(ffn, hidden, rows, "tn"),
            fuse("loop_multiply", rows * ffn, 3),
            gemm(rows, hidden, ffn, "nt"),
            gemm(hidden, ffn, rows, "tn"),
            fuse("input_reduce", rows * hidden, 4),
            fuse("loop_add", rows * hidden),
            gemm(rows, hidden, hidden, "nt"),
            gemm(hidden, hidden, rows, "tn"),
            attention("bprop"),
            gemm(rows, hidden, 3 * hidden, "nt"),
            gemm(hidden, 3 * hidden, rows, "tn"),
            fuse("input_reduce", rows * hidden, 4),
            fuse("loop_add", rows * hidden),
        ]
    params = layers * 12 * hidden * hidden + vocab * hidden
    kernels += [fuse("input_reduce", params, 1), fuse("loop_multiply", params, 8), fuse("loop_multiply", params, 3)]
    return [Op("StatefulPartitionedCall:XlaLaunch", tuple(kernels))]
