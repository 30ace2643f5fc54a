"""The ops of one training step of an LSTM language model, unrolled op by op or compiled by XLA."""

from __future__ import annotations

from tb_gpu_advisor.scenarios import kernels as k
from tb_gpu_advisor.scenarios.engine import Op
from tb_gpu_advisor.scenarios.optimizers import adam


def _tiny_elementwise(spec, tf_op, functor, elements, binary=True):
    return Op(tf_op, (k.memory_bound(spec, k.eigen(functor, "float", binary), elements, "fp32", 3 if binary else 2),))


def lstm_unrolled(spec, batch, hidden, timesteps, vocab):
    """A custom LSTM cell unrolled over `timesteps` in a tf.function: about 40 small kernels per timestep."""
    cell = batch * hidden
    gates = 4 * cell
    forward, backward = [], []
    for t in range(timesteps):
        s = f"model/rnn/while/lstm_cell_{t}" if t else "model/rnn/lstm_cell"
        g = f"gradient_tape/{s}"
        forward += [
            Op(f"{s}/MatMul:MatMul", (k.gemm(spec, batch, 4 * hidden, hidden, "tf32", "nn", tile=(64, 64)),)),
            Op(f"{s}/MatMul_1:MatMul", (k.gemm(spec, batch, 4 * hidden, hidden, "tf32", "nn", tile=(64, 64)),)),
            _tiny_elementwise(spec, f"{s}/add:AddV2", "scalar_sum_op", gates),
            Op(f"{s}/BiasAdd:BiasAdd", (k.memory_bound(spec, k.bias_add(), gates, "fp32", 2),)),
            _tiny_elementwise(spec, f"{s}/layer_norm/moments/mean:Mean", "scalar_sum_op", gates, False),
            _tiny_elementwise(spec, f"{s}/layer_norm/batchnorm/mul:Mul", "scalar_product_op", gates),
            _tiny_elementwise(spec, f"{s}/Sigmoid:Sigmoid", "scalar_logistic_op", cell, False),
            _tiny_elementwise(spec, f"{s}/Sigmoid_1:Sigmoid", "scalar_logistic_op", cell, False),
            _tiny_elementwise(spec, f"{s}/Tanh:Tanh", "scalar_tanh_op", cell, False),
            _tiny_elementwise(spec, f"{s}/mul:Mul", "scalar_product_op", cell),
            _tiny_elementwise(spec, f"{s}/mul_1:Mul", "scalar_product_op", cell),
            _tiny_elementwise(spec, f"{s}/add_1:AddV2", "scalar_sum_op", cell),
            _tiny_elementwise(spec, f"{s}/Sigmoid_2:Sigmoid", "scalar_logistic_op", cell, False),
            _tiny_elementwise(spec, f"{s}/Tanh_1:Tanh", "scalar_tanh_op", cell, False),
            _tiny_elementwise(spec, f"{s}/mul_2:Mul", "scalar_product_op", cell),
        ]
        backward[:0] = [
            _tiny_elementwise(spec, f"{g}/mul_2/Mul:Mul", "scalar_product_op", cell),
            _tiny_elementwise(spec, f"{g}/mul_2/Mul_1:Mul", "scalar_product_op", cell),
            Op(
                f"{g}/Tanh_1/TanhGrad:TanhGrad",
                (k.memory_bound(spec, k.eigen("scalar_tanh_gradient_op"), cell, "fp32", 3),),
            ),
            Op(
                f"{g}/Sigmoid_2/SigmoidGrad:SigmoidGrad",
                (k.memory_bound(spec, k.eigen("scalar_sigmoid_gradient_op"), cell, "fp32", 3),),
            ),
            _tiny_elementwise(spec, f"{g}/add_1/AddN:AddN", "scalar_sum_op", cell),
            _tiny_elementwise(spec, f"{g}/mul_1/Mul:Mul", "scalar_product_op", cell),
            _tiny_elementwise(spec, f"{g}/mul_1/Mul_1:Mul", "scalar_product_op", cell),
            _tiny_elementwise(spec, f"{g}/mul/Mul:Mul", "scalar_product_op", cell),
            _tiny_elementwise(spec, f"{g}/mul/Mul_1:Mul", "scalar_product_op", cell),
            Op(
                f"{g}/Tanh/TanhGrad:TanhGrad",
                (k.memory_bound(spec, k.eigen("scalar_tanh_gradient_op"), cell, "fp32", 3),),
            ),
            Op(
                f"{g}/Sigmoid_1/SigmoidGrad:SigmoidGrad",
                (k.memory_bound(spec, k.eigen("scalar_sigmoid_gradient_op"), cell, "fp32", 3),),
            ),
            Op(
                f"{g}/Sigmoid/SigmoidGrad:SigmoidGrad",
                (k.memory_bound(spec, k.eigen("scalar_sigmoid_gradient_op"), cell, "fp32", 3),),
            ),
            Op(
                f"{g}/concat:ConcatV2",
                (
                    k.memory_bound(
                        spec,
                        "void tensorflow::functor::concat_variable_kernel"
                        "<float, int, true>(tensorflow::GpuDeviceArrayStruct<float"
                        " const*, 8>, tensorflow::GpuDeviceArrayStruct<int, 8>, "
                        "bool, int, float*)",
                        gates,
                        "fp32",
                        2,
                    ),
                ),
            ),
            _tiny_elementwise(spec, f"{g}/layer_norm/batchnorm/mul/Mul:Mul", "scalar_product_op", gates),
            Op(f"{g}/BiasAdd/BiasAddGrad:BiasAddGrad", (k.memory_bound(spec, k.bias_grad(), gates, "fp32", 1),)),
            Op(f"{g}/MatMul/MatMul:MatMul", (k.gemm(spec, batch, hidden, 4 * hidden, "tf32", "nt", tile=(64, 64)),)),
            Op(f"{g}/MatMul/MatMul_1:MatMul", (k.gemm(spec, hidden, 4 * hidden, batch, "tf32", "tn", tile=(64, 64)),)),
            Op(f"{g}/MatMul_1/MatMul:MatMul", (k.gemm(spec, batch, hidden, 4 * hidden, "tf32", "nt", tile=(64, 64)),)),
            Op(
                f"{g}/MatMul_1/MatMul_1:MatMul", (k.gemm(spec, hidden, 4 * hidden, batch, "tf32", "tn", tile=(64, 64)),)
            ),
            _tiny_elementwise(spec, f"{g}/AddN:AddN", "scalar_sum_op", 4 * hidden * hidden),
        ]
    head = [
        Op("model/dense/MatMul:MatMul", (k.gemm(spec, batch * timesteps, vocab, hidden, "tf32", "nn"),)),
        Op(
            "sparse_categorical_crossentropy/SparseSoftmaxCrossEntropyWithLogits:SparseSoftmaxCrossEntropyWithLogits",
            (
                k.memory_bound(
                    spec,
                    "void tensorflow::(anonymous "
                    "namespace)::GenerateNormalizedProb<float, float, 4>(float const*, float const*, float const*, "
                    "float*, int, int, bool)",
                    batch * timesteps * vocab,
                    "fp32",
                    3,
                ),
            ),
        ),
        Op(
            "gradient_tape/model/dense/MatMul/MatMul:MatMul",
            (k.gemm(spec, batch * timesteps, hidden, vocab, "tf32", "nt"),),
        ),
        Op(
            "gradient_tape/model/dense/MatMul/MatMul_1:MatMul",
            (k.gemm(spec, hidden, vocab, batch * timesteps, "tf32", "tn"),),
        ),
    ]
    variables = [
        ("kernel", hidden * 4 * hidden),
        ("recurrent_kernel", hidden * 4 * hidden),
        ("bias", 4 * hidden),
        ("gamma", 4 * hidden),
        ("beta", 4 * hidden),
        ("dense/kernel", hidden * vocab),
        ("dense/bias", vocab),
        ("embedding", vocab * hidden),
    ]
    embedding = [
        Op(
            "model/embedding/embedding_lookup:ResourceGather",
            (
                k.memory_bound(
                    spec,
                    "void tensorflow::functor::GatherOpKernel<float, int, true>(float const*, int const*, float*, long, "
                    "long, long, long)",
                    batch * timesteps * hidden,
                    "fp32",
                    2,
                ),
            ),
        )
    ]
    return embedding + forward + head + backward + adam(spec, variables)


def lstm_xla(spec, batch, hidden, timesteps, vocab):
    """The same model under `jit_compile=True`: XLA fuses each timestep's elementwise ops into one kernel."""
    cell = batch * hidden
    kernels = [k.xla_fusion(spec, "loop_gather_fusion", batch * timesteps * hidden, "fp32")]
    for t in range(timesteps):
        kernels += [
            k.gemm(spec, batch, 4 * hidden, 2 * hidden, "tf32", "nn", tile=(64, 64), hlo_op=f"cublas-gemm.{2 * t + 1}"),
            k.xla_fusion(spec, f"loop_add_fusion.{t}" if t else "loop_add_fusion", 4 * cell, "fp32", 6),
        ]
    kernels += [
        k.gemm(spec, batch * timesteps, vocab, hidden, "tf32", "nn", hlo_op="cublas-gemm.100"),
        k.xla_fusion(spec, "input_reduce_fusion", batch * timesteps * vocab, "fp32", 2),
        k.xla_fusion(spec, "loop_exponential_fusion", batch * timesteps * vocab, "fp32", 3),
    ]
    for t in reversed(range(timesteps)):
        kernels += [
            k.xla_fusion(spec, f"loop_multiply_fusion.{t}" if t else "loop_multiply_fusion", 4 * cell, "fp32", 8),
            k.gemm(
                spec, batch, 2 * hidden, 4 * hidden, "tf32", "nt", tile=(64, 64), hlo_op=f"cublas-gemm.{200 + 2 * t}"
            ),
            k.gemm(
                spec, 2 * hidden, 4 * hidden, batch, "tf32", "tn", tile=(64, 64), hlo_op=f"cublas-gemm.{201 + 2 * t}"
            ),
        ]
    kernels += [
        k.xla_fusion(spec, "input_reduce_fusion.1", 8 * hidden * hidden, "fp32", 2),
        k.xla_fusion(spec, "loop_add_fusion.100", 8 * hidden * hidden + hidden * vocab * 2, "fp32", 7),
    ]
    return [Op("StatefulPartitionedCall:XlaLaunch", tuple(kernels))]
