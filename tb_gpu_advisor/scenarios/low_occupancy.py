"""Low occupancy: a point-cloud model whose custom grouping op launches 16 blocks of 32 threads on 108 SMs;
and the fix, which launches one thread per centroid in 128-thread blocks."""

from tb_gpu_advisor.scenarios import kernels as k
from tb_gpu_advisor.scenarios.common import new_run, run_steps
from tb_gpu_advisor.scenarios.devices import A100_SXM4_80GB
from tb_gpu_advisor.scenarios.engine import Op
from tb_gpu_advisor.scenarios.optimizers import adam, single_kernel_op
from tb_gpu_advisor.scenarios.tf_host import PrefetchedPipeline
from tb_gpu_advisor.scenarios.training import PipelineFeed

STEPS = 5
BATCH, POINTS, CENTROIDS, NEIGHBORS = 16, 4096, 1024, 32
SPEC = A100_SXM4_80GB
QUERY_BALL = "query_ball_point_gpu(int, int, int, float, int, float const*, float const*, int*, int*)"
GROUP_POINT = "group_point_gpu(int, int, int, int, float const*, int const*, float*)"
GROUP_POINT_GRAD = "group_point_grad_gpu(int, int, int, int, float const*, int const*, float*)"


def _pointnet_ops(query_ball_launch, group_launch):
    """PointNet++ set abstraction + classifier; the two launches are (grid, block, registers, duration_us)."""
    grouped = BATCH * CENTROIDS * NEIGHBORS
    ops = [
        single_kernel_op(
            "pointnet/sa1/FarthestPointSample:FarthestPointSample",
            "farthestpointsamplingKernel(int, int, int, float const*, float*, int*)",
            1210.0,
            (32, 1, 1),
            (512, 1, 1),
            30,
            static_shared=20480,
        ),
        Op(
            "pointnet/sa1/GatherPoint:GatherPoint",
            (
                k.memory_bound(
                    SPEC,
                    "gatherpointKernel(int, int, int, float const*, int const*, float*)",
                    BATCH * CENTROIDS * 3,
                    "fp32",
                    2,
                    16,
                ),
            ),
        ),
    ]
    grid, block, registers, duration = query_ball_launch
    ops.append(
        single_kernel_op("pointnet/sa1/QueryBallPoint:QueryBallPoint", QUERY_BALL, duration, grid, block, registers)
    )
    grid, block, registers, duration = group_launch
    ops.append(single_kernel_op("pointnet/sa1/GroupPoint:GroupPoint", GROUP_POINT, duration, grid, block, registers))
    width = 3
    for index, out in enumerate((64, 64, 128)):
        prefix = f"pointnet/sa1/mlp_{index}"
        ops += [
            Op(f"{prefix}/Conv2D:Conv2D", (k.gemm(SPEC, grouped, out, width, "tf32", "nn"),)),
            Op(f"{prefix}/BiasAdd:BiasAdd", (k.memory_bound(SPEC, k.bias_add(), grouped * out, "fp32", 2),)),
            Op(f"{prefix}/Relu:Relu", (k.memory_bound(SPEC, k.eigen("scalar_max_op"), grouped * out, "fp32", 2),)),
        ]
        width = out
    ops += [
        Op(
            "pointnet/sa1/Max:Max",
            (
                k.memory_bound(
                    SPEC,
                    "void tensorflow::functor::ColumnReduceKernel<float "
                    "const*, float*, tensorflow::functor::MaxReducer<float>>"
                    "(float const*, float*, int, int, tensorflow::functor::"
                    "MaxReducer<float>, float)",
                    grouped * 128,
                    "fp32",
                    1,
                ),
            ),
        ),
        Op("pointnet/fc1/MatMul:MatMul", (k.gemm(SPEC, BATCH, 512, CENTROIDS * 128 // 64, "tf32"),)),
        Op("pointnet/fc2/MatMul:MatMul", (k.gemm(SPEC, BATCH, 40, 512, "tf32"),)),
        Op(
            "sparse_categorical_crossentropy/SparseSoftmaxCrossEntropyWithLogits:SparseSoftmaxCrossEntropyWithLogits",
            (
                k.memory_bound(
                    SPEC,
                    "void tensorflow::(anonymous "
                    "namespace)::GenerateNormalizedProb<float, float, 4>(float const*, float const*, float const*, "
                    "float*, int, int, bool)",
                    BATCH * 40,
                    "fp32",
                    3,
                ),
            ),
        ),
    ]
    for index, out in reversed(list(enumerate((64, 64, 128)))):
        prefix = f"gradient_tape/pointnet/sa1/mlp_{index}"
        width = (3, 64, 64)[index]
        ops += [
            Op(
                f"{prefix}/ReluGrad:ReluGrad",
                (
                    k.memory_bound(
                        SPEC,
                        "void tensorflow::functor::ReluGradKernel<float>(float const*, float const*, float*, int)",
                        grouped * out,
                        "fp32",
                        3,
                    ),
                ),
            ),
            Op(f"{prefix}/BiasAddGrad:BiasAddGrad", (k.memory_bound(SPEC, k.bias_grad(), grouped * out, "fp32", 1),)),
            Op(
                f"{prefix}/Conv2DBackpropFilter:Conv2DBackpropFilter",
                (k.gemm(SPEC, width, out, grouped, "tf32", "tn"),),
            ),
        ]
    ops.append(
        single_kernel_op(
            "gradient_tape/pointnet/sa1/GroupPointGrad:GroupPointGrad",
            GROUP_POINT_GRAD,
            group_launch[3] * 1.5,
            group_launch[0],
            group_launch[1],
            group_launch[2],
        )
    )
    variables = [(f"mlp_{i}/kernel", w * o) for i, (w, o) in enumerate(((3, 64), (64, 64), (64, 128)))]
    variables += [(f"mlp_{i}/bias", o) for i, o in enumerate((64, 64, 128))]
    variables += [("fc1/kernel", 2048 * 512), ("fc1/bias", 512), ("fc2/kernel", 512 * 40), ("fc2/bias", 40)]
    return ops + adam(SPEC, variables)


def _build(name, query_ball_launch, group_launch, steps, jitter):
    run = new_run(name, SPEC, hostname="a100-train-11")
    pipeline = PrefetchedPipeline(run.process, BATCH, 300.0, POINTS * 12, workers=4)
    feed = PipelineFeed(pipeline, ((BATCH * POINTS * 12, 34.0), (BATCH * 4, 2.0)))
    run_steps(run, steps, feed, _pointnet_ops(query_ball_launch, group_launch), jitter=jitter)
    return run.builder


def build(steps=STEPS, jitter=None):
    """PointNet++ classification (batch 16, 4,096 points) on 1x A100-SXM4-80GB with the custom ops from the
    original `tf_ops`: `query_ball_point_gpu` is launched `<<<batch, 32>>>`, so it runs 16 blocks of one warp
    each on a 108-SM GPU (theoretical occupancy 18.75%, limited by its 168 registers per thread), and it takes
    14.2 ms of a 24.3 ms step.

    Advice: launch one thread per centroid in blocks of 128-256 threads with a grid that covers every SM
    (several blocks per SM), and reduce register use (`__launch_bounds__`, `-maxrregcount`).
    """
    return _build(
        "low_occupancy",
        ((BATCH, 1, 1), (32, 1, 1), 168, 14200.0),
        ((BATCH, 1, 1), (32, 1, 1), 64, 1850.0),
        steps,
        jitter,
    )


def build_fixed(steps=STEPS, jitter=None):
    """The same model with the grouping kernels launched one thread per centroid in 128-thread blocks (128 and
    512 blocks) and 40 registers per thread: theoretical occupancy 75%, and the grouping takes 0.9 ms instead of
    14 ms."""
    grouped_blocks = BATCH * CENTROIDS * NEIGHBORS // 1024
    return _build(
        "low_occupancy_fixed",
        ((BATCH * CENTROIDS // 128, 1, 1), (128, 1, 1), 40, 905.0),
        ((grouped_blocks, 1, 1), (128, 1, 1), 32, 118.0),
        steps,
        jitter,
    )
