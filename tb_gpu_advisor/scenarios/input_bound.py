"""Input-bound ResNet-50 on one V100 (a sequential tf.data map), and the same run with a parallel, prefetching
pipeline."""

from tb_gpu_advisor.scenarios.common import new_run, run_steps
from tb_gpu_advisor.scenarios.devices import V100_SXM2_16GB
from tb_gpu_advisor.scenarios.engine import transfer_us
from tb_gpu_advisor.scenarios.models import resnet50
from tb_gpu_advisor.scenarios.tf_host import PrefetchedPipeline, SequentialPipeline
from tb_gpu_advisor.scenarios.training import PipelineFeed

STEPS = 5
BATCH = 64
ELEMENT_US = 2500.0  # read, parse, decode, crop and resize one ImageNet JPEG on one core
IMAGE_BYTES = 224 * 224 * 3  # uint8 HWC, cast to float16 on the GPU
SPEC = V100_SXM2_16GB


def _build(name, make_pipeline, steps, jitter):
    run = new_run(name, SPEC, hostname="v100-train-01")
    images = BATCH * IMAGE_BYTES
    copies = ((images, transfer_us(images, SPEC.host_link_gbps)), (BATCH * 4, 2.0))
    feed = PipelineFeed(make_pipeline(run.process), copies, src="pinned", is_async=True)
    run_steps(run, steps, feed, resnet50(SPEC, BATCH, "fp16"), jitter=jitter)
    return run.builder


def build(steps=STEPS, jitter=None):
    """ResNet-50, mixed precision, batch 64 on 1x V100-SXM2-16GB, fed by
    `TFRecordDataset(files).map(parse_and_augment).shuffle(1024).batch(64)`: the map runs on one core, so every
    step waits 160 ms in `IteratorGetNext` while the GPU has 64 ms of work: the GPU is busy 29% of the step.

    Advice: parallelize the map (`num_parallel_calls=tf.data.AUTOTUNE`) and add `.prefetch(tf.data.AUTOTUNE)`.
    """
    return _build(
        "input_bound", lambda process: SequentialPipeline(process, BATCH, ELEMENT_US, IMAGE_BYTES), steps, jitter
    )


def build_fixed(steps=STEPS, jitter=None):
    """The same training with `map(parse_and_augment, num_parallel_calls=AUTOTUNE)` and `.prefetch(AUTOTUNE)`:
    16 tf.data threads build the next batch in about 10 ms while the GPU runs the current step, and
    `IteratorGetNext` returns at once. The GPU is busy almost all the time; no input finding should remain.
    """
    return _build(
        "input_bound_fixed",
        lambda process: PrefetchedPipeline(process, BATCH, ELEMENT_US, IMAGE_BYTES, workers=16),
        steps,
        jitter,
    )
