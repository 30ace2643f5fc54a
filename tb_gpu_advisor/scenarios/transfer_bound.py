"""Transfer-bound: a segmentation model fed 64 MB NumPy batches through pageable, synchronous copies; and the
fix, which copies from pinned memory on a side stream while the previous step computes."""

from tb_gpu_advisor.scenarios.common import new_run, run_steps
from tb_gpu_advisor.scenarios.devices import A100_PCIE_40GB
from tb_gpu_advisor.scenarios.engine import H2D_STREAM, memcpy, transfer_us
from tb_gpu_advisor.scenarios.models import unet
from tb_gpu_advisor.scenarios.tf_host import PrefetchedPipeline
from tb_gpu_advisor.scenarios.training import NumpyFeed, PipelineFeed

STEPS = 5
BATCH, SIZE, BASE = 16, 512, 8
SPEC = A100_PCIE_40GB
PAGEABLE_GBPS = 9.0  # cudaMemcpy from pageable memory: staged through a driver buffer, about 40% of pinned
IMAGES = BATCH * SIZE * SIZE * 3 * 4  # float32
MASKS = BATCH * SIZE * SIZE * 4  # int32


def build(steps=STEPS, jitter=None):
    """A 3-level U-Net (mixed precision, batch 16 of 512x512 float32 images) on 1x A100-PCIE-40GB, trained with
    `train_step(images, masks)` on NumPy arrays: before every step Python copies 67 MB from pageable memory,
    synchronously (`EagerCopyToDevice`), at 9 GB/s, so the GPU waits about 7.5 ms per step for its input.

    Advice: feed through tf.data and copy ahead of time (`.prefetch(...)`, or
    `tf.data.experimental.prefetch_to_device('/gpu:0')`), so copies come from pinned memory, run
    asynchronously on a copy stream and overlap compute; send uint8 images and cast on the GPU.
    """
    run = new_run("transfer_bound", SPEC, hostname="a100-pcie-07")
    feed = NumpyFeed(((IMAGES, transfer_us(IMAGES, PAGEABLE_GBPS)), (MASKS, transfer_us(MASKS, PAGEABLE_GBPS))))
    run_steps(run, steps, feed, unet(SPEC, BATCH, SIZE, BASE), jitter=jitter)
    return run.builder


class _PrefetchToDevice(PipelineFeed):
    """tf.data with `prefetch_to_device`: the next batch is copied from pinned memory by the tf.data thread, on
    the host-to-device stream, while the current step computes."""

    def in_function(self, process, gpu, executor, link, start_us):
        element_id = process.new_id()
        end = self.pipeline.get_next(link, start_us + 2.0, element_id)
        executor.event("IteratorGetNext:IteratorGetNext", start_us, end + 2.0 - start_us)
        t = self.pipeline.build_batch(end + 6.0, element_id)
        for size, duration in self.copies:
            t, _ = memcpy(
                self.pipeline.producer,
                gpu,
                "h2d",
                t + 2.0,
                size,
                duration,
                src="pinned",
                dst="device",
                is_async=True,
                stream=H2D_STREAM,
            )
        return end + 3.5, 0.0


def build_fixed(steps=STEPS, jitter=None):
    """The same training fed by tf.data with `prefetch_to_device('/gpu:0')`: each batch is copied from pinned
    memory (24 GB/s) on the copy stream during the previous step, so copies no longer hold up compute.
    """
    run = new_run("transfer_bound_fixed", SPEC, hostname="a100-pcie-07")
    pipeline = PrefetchedPipeline(run.process, BATCH, 800.0, SIZE * SIZE * 16, workers=8)
    feed = _PrefetchToDevice(
        pipeline, ((IMAGES, transfer_us(IMAGES, SPEC.host_link_gbps)), (MASKS, transfer_us(MASKS, SPEC.host_link_gbps)))
    )
    run_steps(run, steps, feed, unet(SPEC, BATCH, SIZE, BASE), jitter=jitter)
    return run.builder
