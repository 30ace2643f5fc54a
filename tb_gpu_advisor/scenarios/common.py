"""What every single-GPU scenario sets up: the trace builder, the TensorFlow process, one GPU, its metadata."""

from dataclasses import dataclass

from tb_gpu_advisor.scenarios.engine import Gpu
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


def run_steps(run, steps, feed, ops, **kwargs):
    """`steps` identical training steps back to back on the first GPU; returns the end of the last one."""
    t = START_US
    for index in range(steps):
        executor = run.executors[index % len(run.executors)]
        t = train_step(run.process, run.gpus[0], executor, FIRST_STEP + index, t, feed, ops, **kwargs)
        t += BETWEEN_STEPS_US
    return t
