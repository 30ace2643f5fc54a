"""Launch-bound: an unrolled custom LSTM whose thousand tiny kernels wait on their launches, and its XLA fix."""

from tb_gpu_advisor.scenarios.common import new_run, run_steps
from tb_gpu_advisor.scenarios.devices import A100_SXM4_40GB
from tb_gpu_advisor.scenarios.engine import HostCosts
from tb_gpu_advisor.scenarios.lstm_models import lstm_unrolled, lstm_xla
from tb_gpu_advisor.scenarios.tf_host import TEXT_MAP_OPS, PrefetchedPipeline
from tb_gpu_advisor.scenarios.training import PipelineFeed

STEPS = 4
BATCH, HIDDEN, TIMESTEPS, VOCAB = 32, 256, 24, 8192
SPEC = A100_SXM4_40GB
# TensorFlow's executor dispatching one small op: bookkeeping around a 4 us cuLaunchKernel.
EXECUTOR_COSTS = HostCosts(before_launch_us=3.0, launch_us=4.0, after_launch_us=2.0, between_ops_us=2.5)
# XLA's runtime walking its thunk sequence: only the launch itself, back to back.
XLA_COSTS = HostCosts(before_launch_us=24.0, launch_us=3.5, after_launch_us=2.0, between_ops_us=1.5)


def _build(name, ops, costs, steps, jitter):
    run = new_run(name, SPEC, hostname="a100-train-03")
    tokens = BATCH * TIMESTEPS * 4
    pipeline = PrefetchedPipeline(run.process, BATCH, 120.0, TIMESTEPS * 4, workers=4, map_ops=TEXT_MAP_OPS)
    feed = PipelineFeed(pipeline, ((tokens, 2.5), (tokens, 2.5)), src="pinned", is_async=True)
    run_steps(run, steps, feed, ops, costs=costs, jitter=jitter)
    return run.builder


def build(steps=STEPS, jitter=None):
    """A character-level language model with a custom layer-norm LSTM cell (cuDNN cannot run it), unrolled over
    24 timesteps inside `tf.function`, batch 32, hidden 256, on 1x A100-SXM4-40GB: every step launches 853
    kernels, most of them 2 to 6 us long, and the executor needs 11.5 us to dispatch each one, so the GPU idles
    between kernels three quarters of the step.

    Advice: compile the step with XLA (`tf.function(jit_compile=True)`) so the elementwise ops fuse into a few
    kernels, or raise the batch size so each kernel does more work; CUDA graphs also cut launch cost.
    """
    return _build("launch_bound", lstm_unrolled(SPEC, BATCH, HIDDEN, TIMESTEPS, VOCAB), EXECUTOR_COSTS, steps, jitter)


def build_fixed(steps=STEPS, jitter=None):
    """The same model under `tf.function(jit_compile=True)`: XLA fuses each timestep's gates into one loop
    fusion and launches its program from one thread at 3.5 us a kernel; 126 kernels run back to back, the GPU
    is busy 85% of the step and the step is 12x shorter.
    """
    return _build("launch_bound_fixed", lstm_xla(SPEC, BATCH, HIDDEN, TIMESTEPS, VOCAB), XLA_COSTS, steps, jitter)
