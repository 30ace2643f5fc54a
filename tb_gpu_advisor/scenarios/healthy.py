"""A healthy run: a GPT-style decoder in bfloat16 under XLA on one H100, large Tensor-Core kernels back to back."""

from tb_gpu_advisor.scenarios.common import new_run, run_steps
from tb_gpu_advisor.scenarios.devices import H100_SXM5_80GB
from tb_gpu_advisor.scenarios.engine import HostCosts
from tb_gpu_advisor.scenarios.tf_host import TEXT_MAP_OPS, PrefetchedPipeline
from tb_gpu_advisor.scenarios.training import PipelineFeed
from tb_gpu_advisor.scenarios.transformer import decoder_xla

STEPS = 5
BATCH, SEQ, LAYERS, HIDDEN, HEADS, VOCAB = 16, 1024, 12, 1024, 16, 50304
SPEC = H100_SXM5_80GB
XLA_COSTS = HostCosts(before_launch_us=24.0, launch_us=3.0, after_launch_us=2.0, between_ops_us=1.5)


def build(steps=STEPS, jitter=None):
    """A GPT-style decoder (12 layers, hidden 1024, 350M parameters), batch 16 of 1,024 tokens, bfloat16 under
    `tf.function(jit_compile=True)` on 1x H100: cuBLAS `sm90_xmma_gemm_bf16bf16_*` GEMMs, cuDNN flash attention
    and XLA fusions run back to back; input is prefetched. The GPU is busy about 99% of each step.

    Advice: nothing urgent; no finding should be high. Larger batches or FP8 are the next steps.
    """
    run = new_run("healthy", SPEC, hostname="h100-train-01")
    tokens = BATCH * SEQ * 4
    pipeline = PrefetchedPipeline(run.process, BATCH, 900.0, SEQ * 4, workers=8, map_ops=TEXT_MAP_OPS)
    feed = PipelineFeed(pipeline, ((tokens, 5.5), (tokens, 5.5)))
    run_steps(
        run, steps, feed, decoder_xla(SPEC, BATCH, SEQ, LAYERS, HIDDEN, HEADS, VOCAB), costs=XLA_COSTS, jitter=jitter
    )
    return run.builder
