"""Catalog entries of the input-pipeline findings (tf.data)."""

from tb_gpu_advisor.findings.catalog import Entry, Idiom
from tb_gpu_advisor.findings.catalog import links as L

ENTRIES = {
    "input.gpu_waits_for_input": Entry(
        category="input",
        title="The GPU waits for the input pipeline",
        fix_summary="Overlap and parallelize tf.data: map(num_parallel_calls=AUTOTUNE), prefetch(AUTOTUNE).",
        fix="""\
The training step blocks in IteratorGetNext while no GPU works: the input pipeline produces batches more
slowly than the GPU consumes them. Make it produce in parallel and ahead of time:

    ds = tf.data.TFRecordDataset(files, num_parallel_reads=tf.data.AUTOTUNE)  # or interleave(...)
    ds = ds.map(parse_and_decode, num_parallel_calls=tf.data.AUTOTUNE, deterministic=False)
    ds = ds.cache()               # after the deterministic decode, if it fits in memory or on disk
    ds = ds.shuffle(10_000).map(augment, num_parallel_calls=tf.data.AUTOTUNE)   # random work after cache()
    ds = ds.batch(batch_size, drop_remainder=True)
    ds = ds.prefetch(tf.data.AUTOTUNE)  # always last

Never cache() after a random augmentation: the cache would replay the first epoch's random choices.
Measure the pipeline alone (iterate it without the model) to know its ceiling; if it is still slower than
the step, move decoding/augmentation offline or to the GPU, or spread it over more hosts (tf.data service).""",
        docs=(L.TF_DATA_PERFORMANCE, L.TF_DATA_ANALYSIS, L.TF_GPU_PERFORMANCE),
        jax=Idiom(
            fix_summary="Parallelize and prefetch the tf.data pipeline; put the next batch on the device ahead.",
            fix="""\
The training loop blocks in tf.data's IteratorGetNext while no GPU works: the input pipeline produces
batches more slowly than the jitted step consumes them. Make it produce in parallel and ahead of time, and
copy the next batch to the device while the current step runs:

    ds = ds.map(parse_and_decode, num_parallel_calls=tf.data.AUTOTUNE, deterministic=False)
    ds = ds.cache()                                  # after the deterministic decode, never after augmenting
    ds = ds.shuffle(10_000).map(augment, num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.batch(batch_size, drop_remainder=True).prefetch(tf.data.AUTOTUNE)
    batches = flax.jax_utils.prefetch_to_device(ds.as_numpy_iterator(), 2)   # or jax.device_put one ahead

Measure the pipeline alone to know its ceiling; if it is still slower than the step, preprocess offline,
or use a loader with worker processes (grain).""",
            docs=(L.TF_DATA_PERFORMANCE, L.JAX_DEVICE_PUT)),
    ),
    "input.no_prefetch": Entry(
        category="input",
        title="The tf.data pipeline does not prefetch",
        fix_summary="End the pipeline with ds.prefetch(tf.data.AUTOTUNE) to overlap input with the step.",
        fix="""\
No Prefetch stage appears in the pipeline, so each batch is produced only when the step asks for it and
the producer and the training step take turns instead of overlapping. Add prefetch as the last stage:

    ds = ds.batch(batch_size).prefetch(tf.data.AUTOTUNE)

For GPU input, prefetching to the device also hides the host-to-device copy:

    ds = ds.apply(tf.data.experimental.prefetch_to_device("/gpu:0"))  # single GPU, as the last stage""",
        docs=(L.TF_DATA_PERFORMANCE,),
        jax=Idiom(
            fix_summary="End the pipeline with ds.prefetch(tf.data.AUTOTUNE) and keep one batch in flight on the "
                        "device.",
            fix="""\
No Prefetch stage appears in the tf.data pipeline, so each batch is produced only when the step asks for
it. Prefetch on the host and keep the next batch on the device:

    ds = ds.batch(batch_size).prefetch(tf.data.AUTOTUNE)
    batches = flax.jax_utils.prefetch_to_device(ds.as_numpy_iterator(), 2)
    # or: next_batch = jax.device_put(host_batch) for step n+1 before running step n""",
            docs=(L.TF_DATA_PERFORMANCE, L.JAX_DEVICE_PUT)),
    ),
    "input.sequential_map": Entry(
        category="input",
        title="tf.data map runs one element at a time",
        fix_summary="Use ds.map(fn, num_parallel_calls=tf.data.AUTOTUNE) so preprocessing uses every core.",
        fix="""\
The map function of the pipeline runs sequentially (a Map stage, or MapAndBatch whose worker threads are
busy about one core's worth of time). Let tf.data run it on several cores:

    ds = ds.map(preprocess, num_parallel_calls=tf.data.AUTOTUNE, deterministic=False)

If the function is cheap per element, vectorize it instead: batch first, then map over whole batches:

    ds = ds.batch(batch_size).map(preprocess_batch, num_parallel_calls=tf.data.AUTOTUNE)

Note: tf.py_function and tf.numpy_function hold Python's GIL, so parallel calls help only while the
function waits (I/O, sleep) or releases the GIL; rewrite hot Python in TensorFlow ops.""",
        docs=(L.TF_DATA_PERFORMANCE, L.TF_DATA_ANALYSIS),
    ),
    "input.python_generator": Entry(
        category="input",
        title="The input comes from a Python generator",
        fix_summary="Replace tf.data.Dataset.from_generator with TFRecord files or from_tensor_slices.",
        fix="""\
A Generator stage (tf.data.Dataset.from_generator) runs your Python generator under the GIL: it cannot run
in parallel or ahead of Python-side work. Preferred fixes, best first:

    # 1. Write the data once to TFRecord files and read them in parallel
    ds = tf.data.Dataset.from_tensor_slices(filenames).interleave(
        tf.data.TFRecordDataset, num_parallel_calls=tf.data.AUTOTUNE, deterministic=False)
    # 2. If the data fits in memory, slice arrays instead of yielding them
    ds = tf.data.Dataset.from_tensor_slices((features, labels))
    # 3. Otherwise shard the generator and interleave several of them
    ds = tf.data.Dataset.range(num_shards).interleave(
        lambda i: tf.data.Dataset.from_generator(gen, args=(i,), output_signature=signature),
        num_parallel_calls=tf.data.AUTOTUNE)

and end the pipeline with .prefetch(tf.data.AUTOTUNE).""",
        docs=(L.TF_DATA_PERFORMANCE,),
    ),
    "input.demanded_file_reads": Entry(
        category="input",
        title="Files are read on demand, not interleaved",
        fix_summary="Read files in parallel: interleave(TFRecordDataset, num_parallel_calls=AUTOTUNE).",
        fix="""\
A file-reading stage has no Interleave, parallel map or Prefetch above it, so every read happens when the
step asks for data and waits on storage latency. Read several files concurrently and ahead of time:

    files = tf.data.Dataset.list_files(pattern, shuffle=True)
    ds = files.interleave(tf.data.TFRecordDataset, cycle_length=tf.data.AUTOTUNE,
                          num_parallel_calls=tf.data.AUTOTUNE, deterministic=False)
    # or: tf.data.TFRecordDataset(filenames, num_parallel_reads=tf.data.AUTOTUNE)
    ds = ds.map(parse, num_parallel_calls=tf.data.AUTOTUNE).batch(batch_size).prefetch(tf.data.AUTOTUNE)""",
        docs=(L.TF_DATA_PERFORMANCE, L.TF_DATA_ANALYSIS),
    ),
    "input.no_cache": Entry(
        category="input",
        title="Files are re-read and re-decoded every epoch",
        fix_summary="Add ds.cache() after the deterministic decode step (memory, or cache(filename) on disk).",
        fix="""\
The pipeline reads files and has no cache stage, so every epoch repeats the reads and decoding. Cache after
the expensive deterministic work and before random augmentation:

    ds = ds.map(decode, num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.cache()                     # in memory; ds.cache("/local_ssd/cache") on disk if it does not fit
    ds = ds.shuffle(buffer).map(augment, num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.batch(batch_size).prefetch(tf.data.AUTOTUNE)

The first epoch fills the cache; later epochs read from it.""",
        docs=(L.TF_DATA_PERFORMANCE,),
    ),
    "input.tf_data_service": Entry(
        category="input",
        title="A tuned input pipeline still starves several GPUs",
        fix_summary="Offload preprocessing to more CPUs with tf.data service (distribute on CPU workers).",
        fix="""\
The pipeline already prefetches and runs its maps in parallel, yet the GPUs of this host still wait for
it: this host's CPUs cannot produce data fast enough for all its GPUs. Move preprocessing to dedicated CPU
machines with the tf.data service:

    # on CPU machines: tf.data.experimental.service.DispatchServer / WorkerServer
    ds = ds.apply(tf.data.experimental.service.distribute(
        processing_mode="parallel_epochs", service="grpc://dispatcher:5000"))
    ds = ds.prefetch(tf.data.AUTOTUNE)

Alternatives: preprocess offline once (write the decoded data), lighten per-element work, or cache decoded
data (before any random augmentation).""",
        docs=(L.TF_DATA_SERVICE, L.TF_DATA_PERFORMANCE),
    ),
}
