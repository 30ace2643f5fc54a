"""Before/after trace pairs (a problem and its fix) for comparing runs: input, launch and transfer bound.

Each `write_<pair>(logdir, fixed, seed)` writes one run with TraceBuilder and returns its file path; step
durations jitter by a few percent from a seeded generator, so two seeds of the same side differ only by noise.
"""

import random

from tb_gpu_advisor.testing.builder import TraceBuilder

STEPS = 16
JITTER = 0.03  # relative spread of each duration
_GEMM = "ampere_sgemm_128x64_tn"
_RELU = "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<float>, long>(int)"


def _jitter(rng, value):
    return value * (1 + rng.uniform(-JITTER, JITTER))


def _compute(gpu, python, rng, start, kernels=6):
    """A forward/backward burst of GEMM and elementwise kernels; returns its end time (us)."""
    t = start
    for index in range(kernels):
        name, duration = (_GEMM, 300) if index % 2 == 0 else (_RELU, 60)
        duration = _jitter(rng, duration)
        gpu.kernel(
            name,
            t,
            duration,
            grid=(216, 1, 1),
            block=(256, 1, 1),
            launch=(python, t - 20, 8),
            tf_op="model/dense/MatMul:MatMul" if name == _GEMM else "model/dense/Relu:Relu",
        )
        t += duration + 10
    return t


def write_input_pair(logdir, fixed, seed=0, run=None):
    """Input bound (each step waits ~6 ms on tf.data) vs prefetch-fixed (the wait hides behind compute)."""
    rng = random.Random(seed)
    builder = TraceBuilder()
    python, feeder, gpu = builder.thread("python"), builder.thread("tf_data_iterator_get_next/1"), builder.gpu(0)
    t = 1000.0
    for step in range(STEPS):
        wait = _jitter(rng, 150 if fixed else 6000)
        feeder.input_wait(t + 20, wait)
        end = _compute(gpu, python, rng, t + 20 + wait + 40) + 30
        python.step(step, t, end - t)
        t = end + 5
    return builder.write_run(logdir, run=run or ("prefetch" if fixed else "input_bound"))


def write_launch_pair(logdir, fixed, seed=0, run=None):
    """Launch bound (200 tiny kernels a step, each launched by a 15 us host call) vs fused (4 kernels)."""
    rng = random.Random(seed)
    builder = TraceBuilder()
    python, gpu = builder.thread("python"), builder.gpu(0)
    t = 1000.0
    for step in range(STEPS):
        cursor = t + 10
        if fixed:
            for index in range(4):
                duration = _jitter(rng, 160)
                gpu.kernel(
                    f"fused_layer_block_{index}",
                    cursor + 12,
                    duration,
                    grid=(432, 1, 1),
                    block=(256, 1, 1),
                    launch=(python, cursor, 10),
                )
                cursor += duration + 14
        else:
            for index in range(200):
                call = _jitter(rng, 15)
                gpu.kernel(
                    f"elementwise_op_{index % 8}",
                    cursor + call + 2,
                    3,
                    grid=(4, 1, 1),
                    block=(64, 1, 1),
                    occupancy_pct=6.0,
                    launch=(python, cursor, call),
                )
                cursor += call + 6
        python.step(step, t, cursor + 10 - t)
        t = cursor + 15
    return builder.write_run(logdir, run=run or ("fused" if fixed else "launch_bound"))


def write_transfer_pair(logdir, fixed, seed=0, run=None):
    """Transfer bound (a 64 MB pageable synchronous H2D copy a step) vs pinned (an async copy, 8x faster)."""
    rng = random.Random(seed)
    builder = TraceBuilder()
    python, gpu = builder.thread("python"), builder.gpu(0)
    size = 64 * 2**20
    t = 1000.0
    for step in range(STEPS):
        copy = _jitter(rng, 2_600 if fixed else 21_000)
        gpu.memcpy(
            "h2d",
            t + 30,
            copy,
            size,
            src="pinned" if fixed else "pageable",
            is_async=fixed,
            stream=9,
            launch=(python, t + 10, 15 if fixed else copy + 20),
        )
        end = _compute(gpu, python, rng, t + 30 + copy + 40) + 30
        python.step(step, t, end - t)
        t = end + 5
    return builder.write_run(logdir, run=run or ("pinned" if fixed else "transfer_bound"))


PAIRS = {"input": write_input_pair, "launch": write_launch_pair, "transfer": write_transfer_pair}
# The breakdown category each pair's fix removes (compare must name it).
EXPECTED_DRIVER = {"input": "input_wait", "launch": "launch", "transfer": "h2d"}
