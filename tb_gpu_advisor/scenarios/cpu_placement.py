"""Placement: a float64 MatMul in the middle of a GPU step has no GPU kernel, so TensorFlow runs it on the CPU
between a copy of its input back to the host and a copy of its result out again; and the fix (float32)."""

from tb_gpu_advisor.scenarios.common import new_run, run_steps
from tb_gpu_advisor.scenarios.devices import H100_SXM5_80GB
from tb_gpu_advisor.scenarios.engine import COMPUTE_STREAM, D2H_STREAM, H2D_STREAM, Op, launch_ops, memcpy, transfer_us
from tb_gpu_advisor.scenarios.kernels import gemm
from tb_gpu_advisor.scenarios.tf_host import TEXT_MAP_OPS, PrefetchedPipeline
from tb_gpu_advisor.scenarios.training import PipelineFeed
from tb_gpu_advisor.scenarios.transformer import encoder_step

STEPS = 5
BATCH, SEQ, LAYERS, HIDDEN, HEADS = 256, 128, 2, 512, 8
SPEC = H100_SXM5_80GB
CROSS_OP = "text_classifier/feature_cross/MatMul:MatMul"
CROSS_CPU_US = 7_400.0  # a float64 [256 x 4096] x [4096 x 512] product on a few cores
CROSS_IN = BATCH * 4096 * 8  # float64 features read back from the GPU
CROSS_OUT = BATCH * HIDDEN * 8


def _ops():
    return encoder_step(SPEC, BATCH, SEQ, LAYERS, HIDDEN, HEADS, "fp16", name="text_classifier", vocab=20000)


def _split(ops):
    """The encoder's ops before and after the point where the feature cross joins the pooled output."""
    cut = len(ops) // 3
    return ops[:cut], ops[cut:]


def _launch_with_cpu_cross(thread, gpu, ops, start_us, *, costs, not_before_us=0.0):
    """The first part on the GPU; the cross's input copied back, the MatMul on the CPU (no launch inside its op
    event), its result copied out; then the rest, which needs that result."""
    before, after = _split(ops)
    t = launch_ops(thread, gpu, before, start_us, costs=costs, not_before_us=not_before_us)
    host_end, back = memcpy(
        thread,
        gpu,
        "d2h",
        t,
        CROSS_IN,
        transfer_us(CROSS_IN, SPEC.host_link_gbps),
        src="device",
        dst="pinned",
        is_async=True,
        stream=D2H_STREAM,
        not_before_us=gpu.ready(COMPUTE_STREAM),
    )
    thread.event("_Recv:_Recv", t, back + 1.0 - t)
    start = back + 1.5
    thread.event(CROSS_OP, start, CROSS_CPU_US)
    t = start + CROSS_CPU_US + 1.0
    host_end, sent = memcpy(
        thread,
        gpu,
        "h2d",
        t,
        CROSS_OUT,
        transfer_us(CROSS_OUT, SPEC.host_link_gbps),
        src="pinned",
        dst="device",
        is_async=True,
        stream=H2D_STREAM,
    )
    thread.event("_Send:_Send", t, host_end + 1.0 - t)
    return launch_ops(thread, gpu, after, host_end + 1.5, costs=costs, not_before_us=sent)


def _cross_on_gpu(ops):
    """The float32 cross as one more GPU op at the same point."""
    before, after = _split(ops)
    return before + [Op(CROSS_OP, (gemm(SPEC, BATCH, HIDDEN, 4096, "fp32", hlo_op=None),))] + after


def _pipeline(run):
    return PrefetchedPipeline(run.process, BATCH, 560.0, SEQ * 4, workers=8, map_ops=TEXT_MAP_OPS)


def _feed(pipeline):
    tokens = BATCH * SEQ * 4
    return PipelineFeed(pipeline, ((tokens, 3.0), (BATCH * 4, 2.0)))


def build(steps=STEPS, jitter=None):
    """A text classifier (2-layer encoder, batch 256 x 128 tokens, mixed precision, tf.data prefetching, a
    `tf_gpu_private` launch thread) on 1x H100 with a feature-cross layer computed in float64. TensorFlow has no
    float64 GPU kernel for it in this build, and soft placement puts `feature_cross/MatMul` on the CPU: each step
    copies its 4 MB input back to the host, runs the MatMul for 7.4 ms on the CPU while the GPU idles, and copies
    the result out again. The op's host event holds no kernel launch.

    Advice: find it with `tf.debugging.set_log_device_placement(True)` (and
    `tf.config.set_soft_device_placement(False)` to fail instead of falling back), and compute the cross in
    float32 (or bfloat16) so it runs on the GPU.
    """
    run = new_run("cpu_placed_op", SPEC, hostname="h100-train-06", executor_pool="tf_gpu_private_0")
    run_steps(run, steps, _feed(_pipeline(run)), _ops(), jitter=jitter, launch=_launch_with_cpu_cross)
    return run.builder


def build_fixed(steps=STEPS, jitter=None):
    """The same classifier with the feature cross in float32: one more cuBLAS GEMM on the GPU at the same point
    of the step, no copy back to the host and none out again, and no compute op left on the CPU.
    """
    run = new_run("cpu_placed_op_fixed", SPEC, hostname="h100-train-06", executor_pool="tf_gpu_private_0")
    run_steps(run, steps, _feed(_pipeline(run)), _cross_on_gpu(_ops()), jitter=jitter)
    return run.builder
