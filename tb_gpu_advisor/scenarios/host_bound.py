"""Host-bound: CPU-only text ops and tf.data work saturate TensorFlow's inter-op threads, which also launch the
GPU kernels, so the H100 starves; and the fix (preprocessing in tf.data, a private GPU launch thread)."""

from tb_gpu_advisor.scenarios.common import new_run, run_steps
from tb_gpu_advisor.scenarios.devices import H100_SXM5_80GB
from tb_gpu_advisor.scenarios.engine import Op, transfer_us
from tb_gpu_advisor.scenarios.tf_host import TEXT_MAP_OPS, PrefetchedPipeline
from tb_gpu_advisor.scenarios.training import PipelineFeed
from tb_gpu_advisor.scenarios.transformer import encoder_step

STEPS = 5
BATCH, SEQ, LAYERS, HIDDEN, HEADS = 256, 128, 2, 512, 8
SPEC = H100_SXM5_80GB
# CPU ops of the tokenizer inside the train step: (op, host microseconds). The GPU work needs their output.
TOKENIZER_OPS = (
    ("StringSplit/StringSplitV2:StringSplitV2", 5200.0),
    ("StringToHashBucketFast:StringToHashBucketFast", 2900.0),
    ("RaggedToTensor/RaggedTensorToTensor:RaggedTensorToTensor", 2300.0),
    ("feature_hashing/EagerPyFunc:EagerPyFunc", 6400.0),
)
# tf.data's map function, run on the same inter-op pool, between two GPU launches of the train step.
SHARED_POOL_OP = ("ParseSingleExample/ParseExample/ParseExampleV2:ParseExampleV2", 85.0)


def _starved_ops():
    ops = [Op(name, (), host_us) for name, host_us in TOKENIZER_OPS]
    for op in encoder_step(SPEC, BATCH, SEQ, LAYERS, HIDDEN, HEADS, "fp16", name="text_classifier", vocab=20000):
        ops += [op, Op(SHARED_POOL_OP[0], (), SHARED_POOL_OP[1])]
    return ops


def build(steps=STEPS, jitter=None):
    """A small text classifier (2-layer encoder, batch 64 x 128 tokens, mixed precision) on 1x H100 whose
    `train_step` tokenizes raw strings itself: `StringSplitV2`, `StringToHashBucketFast`, `RaggedTensorToTensor`
    and a `tf.py_function` run on the CPU for about 17 ms before the first kernel can start, and tf.data's map
    function runs on the same two inter-op threads that launch the GPU kernels (`TF_GPU_THREAD_MODE` is the
    default `global`), so launches come about 100 us apart while kernels take 5-30 us. The GPU is idle most of
    the step; the host is busy all of it.

    Advice: move tokenization into the tf.data pipeline (`map(..., num_parallel_calls=AUTOTUNE)` and
    `prefetch`), give the GPU its own launch threads (`TF_GPU_THREAD_MODE=gpu_private`) and size the pools
    (`tf.config.threading.set_inter_op_parallelism_threads`).
    """
    run = new_run("host_bound", SPEC, hostname="h100-train-04")
    pipeline = PrefetchedPipeline(run.process, BATCH, 180.0, 1024, workers=2, map_ops=TEXT_MAP_OPS[:1])
    # The token ids the CPU ops produce are copied from pageable memory, synchronously.
    token_ids = BATCH * SEQ * 4
    feed = PipelineFeed(pipeline, ((token_ids, transfer_us(token_ids, 10.0)),), src="pageable", is_async=False)
    run_steps(run, steps, feed, _starved_ops(), jitter=jitter)
    return run.builder


def build_fixed(steps=STEPS, jitter=None):
    """The same model with tokenization in tf.data (parallel map, prefetch) and `TF_GPU_THREAD_MODE=gpu_private`:
    a dedicated `tf_gpu_private` thread launches the kernels back to back, and the GPU is busy most of the step.
    """
    run = new_run("host_bound_fixed", SPEC, hostname="h100-train-04", executor_pool="tf_gpu_private_0")
    pipeline = PrefetchedPipeline(run.process, BATCH, 560.0, SEQ * 4, workers=8, map_ops=TEXT_MAP_OPS)
    tokens = BATCH * SEQ * 4
    feed = PipelineFeed(pipeline, ((tokens, 3.0), (BATCH * 4, 2.0)))
    run_steps(
        run,
        steps,
        feed,
        encoder_step(SPEC, BATCH, SEQ, LAYERS, HIDDEN, HEADS, "fp16", name="text_classifier", vocab=20000),
        jitter=jitter,
    )
    return run.builder
