"""Catalog entries of the step-level and environment findings."""

from tb_gpu_advisor.findings.catalog import Entry, Idiom
from tb_gpu_advisor.findings.catalog import links as L

ENTRIES = {
    "steps.checkpoint_stall": Entry(
        category="other",
        title="Checkpoint writes stall training",
        fix_summary="Checkpoint less often, or asynchronously (tf.train.CheckpointOptions(enable_async=True)).",
        fix="""\
Saving checkpoints holds up the steps it falls into while the GPU idles. Save less often and off the
critical path:

    ckpt_options = tf.train.CheckpointOptions(enable_async=True)   # TF >= 2.12
    manager = tf.train.CheckpointManager(ckpt, directory, max_to_keep=3)
    if step % 2000 == 0:
        manager.save(options=ckpt_options)
    # Keras: tf.keras.callbacks.ModelCheckpoint(..., save_freq=2000) instead of every epoch/batch

Write to fast local storage and copy to remote storage in the background.""",
        docs=(L.TF_CHECKPOINT,),
        jax=Idiom(
            fix_summary="Checkpoint less often and asynchronously (orbax CheckpointManager, async saves).",
            fix="""\
Saving checkpoints holds up the steps it falls into while the GPU idles. Save less often and without
blocking the step:

    manager = ocp.CheckpointManager(directory, options=ocp.CheckpointManagerOptions(
        save_interval_steps=2000, max_to_keep=3, enable_async_checkpointing=True))
    manager.save(step, args=ocp.args.StandardSave(state))

Write to fast local storage and copy to remote storage in the background.""",
            docs=(L.ORBAX_CHECKPOINT,)),
    ),
    "steps.summary_stall": Entry(
        category="other",
        title="Summary writes stall training",
        fix_summary="Write summaries every N steps (tf.summary.record_if / update_freq), not every step.",
        fix="""\
Writing TensorBoard summaries (and flushing the writer) takes a visible part of the steps. Write them less
often:

    with writer.as_default(), tf.summary.record_if(lambda: step % 100 == 0):
        tf.summary.scalar("loss", loss, step=step)
    # Keras: tf.keras.callbacks.TensorBoard(update_freq=100) (or "epoch"), histogram_freq=0

Avoid histogram and image summaries inside the step; do not flush the writer every step.""",
        docs=(L.TF_SUMMARY,),
    ),
    "steps.uneven_step_time": Entry(
        category="other",
        title="Step time varies a lot from step to step",
        fix_summary="Find what the slow steps do differently (listed) and remove or spread it.",
        fix="""\
Some steps take much longer than the median. The slow steps are listed in the evidence: open them in the
Trace Viewer. Usual causes: periodic work inside some steps (evaluation, checkpoints, summaries, logging),
input that is slow for some batches (uneven file sizes, cache misses), Python garbage collection, memory
allocation growth, or recompilation for new shapes (pad batches to fixed shapes, drop_remainder=True).""",
        docs=(L.TF_PROFILER, L.TF_GPU_PERFORMANCE),
    ),
    "steps.warmup_in_profile": Entry(
        category="other",
        title="The profile includes warm-up (compilation)",
        fix_summary="Profile steady-state steps: skip the first ones (profile_batch=(10, 20)).",
        fix="""\
The first profiled step compiles or traces the program and is much slower than the rest; it is left out of
the step-variance finding. Profile later steps so averages describe steady state:

    tf.keras.callbacks.TensorBoard(log_dir, profile_batch=(10, 20))
    # custom loops: start tf.profiler.experimental.start(logdir) after a few warm-up steps""",
        docs=(L.TF_PROFILER,),
        jax=Idiom(
            fix_summary="Profile steady-state steps: start jax.profiler after the first steps have compiled.",
            fix="""\
The first profiled step compiles or traces the program and is much slower than the rest; it is left out of
the step-variance finding. Profile later steps so averages describe steady state:

    for step, batch in enumerate(batches):
        if step == 10:
            jax.profiler.start_trace(logdir)
        with jax.profiler.StepTraceAnnotation("train", step_num=step):
            state, metrics = train_step(state, batch)
        if step == 20:
            jax.block_until_ready(state)
            jax.profiler.stop_trace()""",
            docs=(L.JAX_PROFILING,)),
    ),
    "environment.no_tensor_cores": Entry(
        category="other",
        title="This GPU has no Tensor Cores",
        fix_summary="Mixed precision will save memory but not speed up math on this GPU (cc < 7.0).",
        fix="""\
GPUs before compute capability 7.0 (Pascal and older) have no Tensor Cores: float16 math is not faster than
float32 there (and much slower on most consumer Pascal cards), so the precision advice does not apply. For
training speed the options are a newer GPU (cc >= 7.0 for float16 Tensor Cores, >= 8.0 for bfloat16 and
TF32) or the other findings of this report.""",
        docs=(L.CUDA_GPUS, L.NVIDIA_MIXED_PRECISION),
    ),
    "environment.bf16_without_hardware": Entry(
        category="precision",
        title="bfloat16 kernels on a GPU without bfloat16 Tensor Cores",
        fix_summary="On compute capability 7.x use float16: set_global_policy('mixed_float16').",
        fix="""\
bfloat16 Tensor Core math needs compute capability 8.0 (Ampere) or newer; on this GPU bfloat16 kernels fall
back to slower paths. Use float16 with loss scaling instead:

    tf.keras.mixed_precision.set_global_policy("mixed_float16")   # Keras applies loss scaling itself""",
        docs=(L.TF_MIXED_PRECISION, L.NVIDIA_MIXED_PRECISION),
        jax=Idiom(
            fix_summary="On compute capability 7.x compute in float16 with loss scaling instead of bfloat16.",
            fix="""\
bfloat16 Tensor Core math needs compute capability 8.0 (Ampere) or newer; on this GPU bfloat16 kernels fall
back to slower paths. Cast to jnp.float16 instead and scale the loss so small gradients do not underflow
(e.g. the jmp library: jmp.get_policy("params=float32,compute=float16,output=float32") with
jmp.DynamicLossScale).""",
            docs=(L.NVIDIA_MIXED_PRECISION,)),
    ),
    "environment.cuda_older_than_gpu": Entry(
        category="other",
        title="The CUDA version predates this GPU",
        fix_summary="Use a CUDA (and framework build) that supports this GPU's compute capability natively.",
        fix="""\
The CUDA version recorded in the profile is older than the first one with native support for this GPU's
compute capability: kernels run from PTX compiled just in time (slow start-up, often slower kernels) or
come from generic code paths. Install a TensorFlow build for a newer CUDA (pip install
tensorflow[and-cuda]) and a matching driver.""",
        docs=(L.CUDA_COMPATIBILITY, L.CUDA_GPUS),
        jax=Idiom(
            fix_summary="Use a jaxlib built for a CUDA that supports this GPU's compute capability natively.",
            fix="""\
The CUDA version recorded in the profile is older than the first one with native support for this GPU's
compute capability: kernels run from PTX compiled just in time or come from generic code paths. Install
a jaxlib for a newer CUDA (pip install -U "jax[cuda12]") and a matching driver.""",
            docs=(L.CUDA_COMPATIBILITY, L.CUDA_GPUS)),
    ),
    "environment.driver_older_than_runtime": Entry(
        category="other",
        title="The NVIDIA driver is older than the CUDA runtime",
        fix_summary="Upgrade the NVIDIA driver to one that supports the CUDA runtime in use.",
        fix="""\
The CUDA version the driver supports is older than the CUDA runtime the framework uses. It runs only through
minor-version compatibility, which disables PTX just-in-time compilation and some features, or through
the forward-compatibility package. Upgrade the driver (nvidia-smi shows the CUDA version it supports).""",
        docs=(L.CUDA_COMPATIBILITY,),
    ),
}
