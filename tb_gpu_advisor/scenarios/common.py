"""What every single-GPU scenario sets up: the trace builder, the TensorFlow process, one GPU, its metadata."""

import copy
from dataclasses import dataclass

from tb_gpu_advisor.scenarios.engine import GRAPH_COSTS, Gpu
from tb_gpu_advisor.scenarios.jitter import grid_us, scaled_copies, scaled_costs, scaled_ops
from tb_gpu_advisor.scenarios.tf_host import TfProcess
from tb_gpu_advisor.scenarios.training import train_step
from tb_gpu_advisor.testing.builder import TraceBuilder

FIRST_STEP = 100  # profiling starts after warm-up, as with profile_batch or a delayed profiler start
START_US = 1000.0
BETWEEN_STEPS_US = 8.0  # Python's loop overhead between one step marker and the next
CUDA_VERSIONS = {"cuda_version": "12050", "cuda_runtime_version": "12050", "cuda_driver_version": "12080"}


@dataclass
class Run:
    builder: TraceBuilder
    process: TfProcess
    gpus: list
    executors: list


def new_run(seed, spec, hostname, gpu_count=1, executor_threads=1, executor_pool="tf_Compute"):
    """A trace with `gpu_count` GPUs of `spec`, a Python thread and `executor_threads` threads that launch."""

    builder = TraceBuilder(hostname=hostname, first_correlation_id=184_213)
    builder.metadata(**CUDA_VERSIONS)
    process = TfProcess(builder, seed)
    gpus = [Gpu(builder.gpu(ordinal, **spec.plane_kwargs()), spec) for ordinal in range(gpu_count)]
    executors = [process.pool_thread(executor_pool) for _ in range(executor_threads)]
    return Run(builder, process, gpus, executors)


def run_steps(run, steps, feed, ops, *, jitter=None, costs=GRAPH_COSTS, **kwargs):
    """`steps` training steps back to back on the first GPU; returns the end of the last one.

    Without `jitter` every step is identical; with it (a `Jitter`) each step's kernel, copy, host and tf.data
    times vary as its seeded noise says.
    """
    t = START_US
    noise = jitter.steps(steps) if jitter is not None else [None] * steps
    pipeline = getattr(feed, "pipeline", None)
    element_us = getattr(pipeline, "element_us", None)
    for index, step_noise in enumerate(noise):
        executor = run.executors[index % len(run.executors)]
        step_feed, step_ops, step_costs = feed, ops, costs
        if step_noise is not None:
            step_feed = copy.copy(feed)
            step_feed.copies = scaled_copies(feed.copies, step_noise)
            step_ops, step_costs = scaled_ops(ops, step_noise), scaled_costs(costs, step_noise)
            if element_us is not None:
                pipeline.element_us = grid_us(element_us * step_noise.host)
        t = train_step(
            run.process, run.gpus[0], executor, FIRST_STEP + index, t, step_feed, step_ops, costs=step_costs, **kwargs
        )
        t += BETWEEN_STEPS_US
    if element_us is not None:
        pipeline.element_us = element_us
    return t
