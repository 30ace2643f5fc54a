"""JAX input problems: the batch built on the step thread while the GPU idles, and image batches sent as float32;
and their fixes (a loader ahead of the step, uint8 sent ahead)."""

from tb_gpu_advisor.scenarios.devices import H100_SXM5_80GB
from tb_gpu_advisor.scenarios.engine import transfer_us
from tb_gpu_advisor.scenarios.jax_loop import Batch, new_jax_run, run_jax_steps
from tb_gpu_advisor.scenarios.transformer import decoder_xla
from tb_gpu_advisor.testing.hlo import HloModuleBuilder, shape

STEPS = 5
SPEC = H100_SXM5_80GB
# ViT-B/16 at 256x256 pixels: 256 patches of 768, 12 layers, 1000 classes, bfloat16 under jax.jit.
BATCH, PATCHES, LAYERS, HIDDEN, HEADS, CLASSES = 64, 256, 12, 768, 12, 1000
SIDE = 256
PIXELS = BATCH * SIDE * SIDE * 3
LABELS = BATCH * 4
# The loader inside the step: read the records (a file read), decode the JPEGs, augment, stack (Python tracer).
INLINE_CALLS = (
    ("$loader.py:61 read", 6_000.0),
    ("$loader.py:74 decode", 11_000.0),
    ("$augment.py:33 random_crop_flip", 3_500.0),
    ("$shape_base.py:379 stack", 1_500.0),
)


def vit_module(image_dtype, batch=BATCH):
    """The jitted step's HLO entry: the image batch (`image_dtype`), the labels, and the work that reads them."""
    module = HloModuleBuilder("jit_train_step")
    images = module.entry.parameter("batch_image", shape(image_dtype, batch, SIDE, SIDE, 3))
    labels = module.entry.parameter("batch_label", shape("s32", batch))
    pixels = (
        images
        if image_dtype == "f32"
        else module.entry.add("convert", "convert", shape("f32", batch, SIDE, SIDE, 3), (images,))
    )
    module.entry.add("reduce_labels", "negate", shape("s32", batch), (labels,))
    module.entry.add("scaled", "multiply", shape("f32", batch, SIDE, SIDE, 3), (pixels, pixels))
    return module.to_bytes()


def _vit():
    return decoder_xla(SPEC, BATCH, PATCHES, LAYERS, HIDDEN, HEADS, CLASSES)


def _copies(bytes_per_pixel):
    images = PIXELS * bytes_per_pixel
    return ((images, transfer_us(images, SPEC.host_link_gbps)), (LABELS, 2.0))


def build(steps=STEPS, jitter=None):
    """A ViT-B/16 (bfloat16, `jax.jit`, batch 64 of 256x256 images) on 1x H100, fed by a Python loader called
    inside the loop: each step first reads the records (6 ms), decodes the JPEGs (11 ms), augments (3.5 ms) and
    stacks the batch (1.5 ms) on the step thread, then `jax.device_put`s it (uint8) and dispatches the jitted step:
    the GPU idles for the 22 ms of preparation every step. The Python tracer names each call.

    Advice: build batches ahead, in the background (grain with worker processes, or tf.data with
    `as_numpy_iterator()`), and keep the next batch on the device (`flax.jax_utils.prefetch_to_device`).
    """
    run = new_jax_run(SPEC, "h100-jax-03", vit_module("u8"))
    run_jax_steps(run, steps, Batch(INLINE_CALLS, _copies(1)), _vit(), jitter=jitter)
    return run.builder


def build_fixed(steps=STEPS, jitter=None):
    """The same ViT fed by grain (8 worker processes, outside this trace) and `flax.jax_utils.prefetch_to_device`:
    taking a batch from its queue issues the next batch's `jax.device_put`, which copies while the current step
    computes; the step thread builds nothing and dispatches at once.
    """
    run = new_jax_run(SPEC, "h100-jax-03", vit_module("u8"))
    run_jax_steps(run, steps, Batch((), _copies(1), sent_ahead=True), _vit(), jitter=jitter)
    return run.builder


# The float32 pair: a small ViT (4 layers of 384) on larger batches, where the input copy is a visible part of
# the step.
SMALL_BATCH, SMALL_LAYERS, SMALL_HIDDEN, SMALL_HEADS = 256, 4, 384, 6


def _small_vit():
    return decoder_xla(SPEC, SMALL_BATCH, PATCHES, SMALL_LAYERS, SMALL_HIDDEN, SMALL_HEADS, CLASSES)


def _small_copies(bytes_per_pixel):
    images = SMALL_BATCH * SIDE * SIDE * 3 * bytes_per_pixel
    return ((images, transfer_us(images, SPEC.host_link_gbps)), (SMALL_BATCH * 4, 2.0))


def build_float_images(steps=STEPS, jitter=None):
    """A small ViT (4 layers of 384, bfloat16, `jax.jit`, batch 256 of 256x256 images) on 1x H100 fed by grain,
    whose transform converts the images to float32 (`astype(np.float32) / 255`), and a loop that calls
    `jax.device_put` inside the step: each step first copies a 201 MB float32 batch (256x256x256x3) at 48 GB/s,
    4.2 ms while the GPU waits. The jitted step's HLO is in the trace, so its input's dtype and shape are known.

    Advice: send uint8 (a quarter of the bytes) and convert inside the jitted step; put the next batch on the
    device while the current step runs (`flax.jax_utils.prefetch_to_device`).
    """
    run = new_jax_run(SPEC, "h100-jax-05", vit_module("f32", SMALL_BATCH))
    run_jax_steps(run, steps, Batch((), _small_copies(4)), _small_vit(), jitter=jitter)
    return run.builder


def build_float_images_fixed(steps=STEPS, jitter=None):
    """The same small ViT sending uint8 images (50 MB a batch, a quarter of the bytes), converted to float inside
    the jitted step, and put on the device one step ahead (`prefetch_to_device`) while the previous step computes.
    """
    run = new_jax_run(SPEC, "h100-jax-05", vit_module("u8", SMALL_BATCH))
    run_jax_steps(run, steps, Batch((), _small_copies(1), sent_ahead=True), _small_vit(), jitter=jitter)
    return run.builder
