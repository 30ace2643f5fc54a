"""FP32 on Tensor Cores' doorstep: BERT fine-tuning in float32 with TF32 off on an A100, and mixed precision."""

from tb_gpu_advisor.scenarios.common import new_run, run_steps
from tb_gpu_advisor.scenarios.devices import A100_SXM4_80GB
from tb_gpu_advisor.scenarios.tf_host import TEXT_MAP_OPS, PrefetchedPipeline
from tb_gpu_advisor.scenarios.training import PipelineFeed
from tb_gpu_advisor.scenarios.transformer import encoder_step

STEPS = 5
BATCH, SEQ, LAYERS, HIDDEN, HEADS = 32, 128, 6, 768, 12
SPEC = A100_SXM4_80GB


def _build(name, math_kind, steps, jitter):
    run = new_run(name, SPEC, hostname="a100-train-05")
    tokens = BATCH * SEQ * 4
    pipeline = PrefetchedPipeline(run.process, BATCH, 240.0, SEQ * 8, workers=8, map_ops=TEXT_MAP_OPS)
    feed = PipelineFeed(pipeline, ((tokens, 3.0), (tokens, 3.0), (BATCH * 4, 2.0)))
    run_steps(run, steps, feed, encoder_step(SPEC, BATCH, SEQ, LAYERS, HIDDEN, HEADS, math_kind), jitter=jitter)
    return run.builder


def build(steps=STEPS, jitter=None):
    """DistilBERT-base fine-tuning (6 layers, batch 32, sequence 128) on 1x A100-SXM4-80GB in float32 with
    TF32 turned off (`tf.config.experimental.enable_tensor_float_32_execution(False)`, often set for
    reproducibility): every matmul runs as `ampere_sgemm_*` on the CUDA cores and none on the Tensor Cores;
    `sgemm` kernels take over 90% of the step.

    Advice: train in mixed precision (`keras.mixed_precision.set_global_policy("mixed_float16")`, or bfloat16),
    or at least allow TF32; keep dimensions multiples of 8.
    """
    return _build("fp32_on_tensor_cores", "fp32", steps, jitter)


def build_fixed(steps=STEPS, jitter=None):
    """The same fine-tuning under `mixed_float16`: matmuls run as `ampere_fp16_s16816gemm_*` on the Tensor
    Cores, elementwise kernels in half precision; layer norms, the loss and Adam stay in float32. The step is
    about 5x shorter."""
    return _build("fp32_on_tensor_cores_fixed", "fp16", steps, jitter)
