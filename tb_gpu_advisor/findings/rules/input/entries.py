"""The input family's catalog words: titles, explanations and fixes of its findings."""

from __future__ import annotations

from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Entry, Idiom, register


ENTRIES = register(
    "input",
    {
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
                docs=(L.TF_DATA_PERFORMANCE, L.JAX_DEVICE_PUT),
            ),
            variants=(
                (
                    "per_device_feed",
                    Idiom(
                        fix_summary="Profile the source dataset alone (its stages are not in this trace); tune what it "
                        "lacks.",
                        fix="""\
The step blocks in tf.distribute's per-device feed, which pulls each batch from the source dataset through
a function call; the source pipeline's own stages are not in this trace, so what it lacks is unknown here.
Time the source dataset alone (iterate it without the model) and give it what it is missing:

    ds = ds.map(parse_and_decode, num_parallel_calls=tf.data.AUTOTUNE)   # if it maps sequentially
    ds = ds.batch(batch_size, drop_remainder=True).prefetch(tf.data.AUTOTUNE)
    dist_ds = strategy.experimental_distribute_dataset(ds)

A Dataset.from_generator source runs Python under the GIL and cannot go parallel: read records natively
(TFRecordDataset with interleave) instead. With one captured step, recapture more to see whether the wait
recurs.""",
                        docs=(L.TF_DATA_PERFORMANCE, L.TF_DATA_ANALYSIS, L.TF_DISTRIBUTED),
                    ),
                ),
            ),
        ),
        "input.main_process_loader": Entry(
            category="input",
            title="The step waits for a DataLoader that loads in the training process",
            fix_summary="Load in worker processes: DataLoader(num_workers=N, persistent_workers=True, prefetch_factor=2).",
            fix="""\
The DataLoader builds each batch in the training process (num_workers=0: _SingleProcessDataLoaderIter), so
loading and the step take turns: the step waits in enumerate(DataLoader) for every batch. Worker processes
build the next batches while the step runs:

    loader = torch.utils.data.DataLoader(
        dataset, batch_size=batch_size, shuffle=True,
        num_workers=4,               # 0 loads in the training process; leave cores for the step on a CPU run
        persistent_workers=True,     # keep workers between epochs
        prefetch_factor=2)           # batches each worker keeps ready

On a CPU-only run the workers share the cores with the step: loading that waits (file or network reads)
overlaps fully, loading that computes only as far as idle cores allow. With several ranks on one machine,
count every rank's workers against the cores.""",
            docs=(L.TORCH_DATA, L.TORCH_TUNING),
        ),
        "input.host_batch_prep": Entry(
            category="input",
            title="The host prepares each batch while the device idles",
            fix_summary="Build batches in a tf.data pipeline that prefetches, so the next one is ready before the step.",
            fix="""\
Each step starts with the training loop building its batch on the step thread (Python and NumPy work, file
reads and image decoding, the conversion to tensors) while the device has nothing to run; only then is the
tf.function step called. Move that work into tf.data, which runs it on background threads ahead of the step:

    ds = tf.data.Dataset.from_tensor_slices((paths, labels))        # read and decode as tf.data stages
    ds = ds.map(read_and_decode, num_parallel_calls=tf.data.AUTOTUNE).batch(batch_size)
    # or keep the Python batch builder: tf.data.Dataset.from_generator(make_batches, output_signature=...)
    ds = ds.prefetch(tf.data.AUTOTUNE)
    # one GPU: also copy the next batch to it during the step (the last stage)
    ds = ds.apply(tf.data.experimental.prefetch_to_device("/gpu:0"))
    for x, y in ds:
        loss = train_step(x, y)

Measure the pipeline alone (iterate it without the model) to know whether it keeps up with the step.""",
            docs=(L.TF_DATA_PERFORMANCE, L.TF_DATA_PREFETCH_TO_DEVICE),
            jax=Idiom(
                fix_summary="Load batches in the background (grain, tf.data) and device_put the next one during the step.",
                fix="""\
Each step starts with the loop building its batch on the step thread (NumPy work, reads, jnp.asarray /
jax.device_put) while the device has nothing to run; only then is the jitted step dispatched. Build batches
in the background and keep the next one on the device before the step asks for it:

    # a loader with worker processes, reading ahead (grain)
    loader = grain.DataLoader(data_source=source, sampler=sampler, operations=transforms,
                              worker_count=8, worker_buffer_size=2)
    # or tf.data without TensorFlow on the device
    loader = ds.map(preprocess, num_parallel_calls=tf.data.AUTOTUNE).batch(b).prefetch(tf.data.AUTOTUNE)
    batches = flax.jax_utils.prefetch_to_device(iter(loader.as_numpy_iterator()), size=2)
    # or by hand: a thread fills a queue.Queue(maxsize=2) with jax.device_put(batch) one step ahead
    for batch in batches:
        state, metrics = train_step(state, batch)

Measure the loader alone (iterate it without the model) to know whether it keeps up with the step.""",
                docs=(L.JAX_DEVICE_PUT, L.GRAIN, L.TF_DATA_PERFORMANCE),
            ),
            pytorch=Idiom(
                fix_summary="Build batches in DataLoader worker processes (num_workers>0, pin_memory, persistent_workers).",
                fix="""\
Each step starts with the training loop building its batch in the main process (Python and NumPy work, file
reads and image decoding, torch.from_numpy, the copy to the GPU) while the GPU has nothing to run. Put that
work in a Dataset and let DataLoader worker processes build the next batches during the step:

    class Examples(torch.utils.data.Dataset):
        def __len__(self): return len(paths)
        def __getitem__(self, i): return read_and_decode(paths[i]), labels[i]   # what the loop did per example

    loader = torch.utils.data.DataLoader(Examples(), batch_size=batch_size, shuffle=True,
                                         num_workers=8,            # 0 builds batches in the training process
                                         pin_memory=True, persistent_workers=True, prefetch_factor=4)
    for x, y in loader:
        x, y = x.to("cuda", non_blocking=True), y.to("cuda", non_blocking=True)

Measure the loader alone (iterate it without the model) to know whether it keeps up with the step.""",
                docs=(L.TORCH_DATA, L.TORCH_PINNED),
            ),
            variants=(
                (
                    "tf_data_prefetch",
                    Idiom(
                        fix_summary="Move the loop's work between next(iterator) and the step into tf.data or the "
                        "tf.function.",
                        fix="""\
The step already reads its batches from a tf.data pipeline that prefetches, but the training loop still
works on each batch between taking it and calling the step (the time above) while the device has nothing
to run. Move that work where it overlaps the step:

    ds = ds.map(per_example_work, num_parallel_calls=tf.data.AUTOTUNE)   # before batch and prefetch
    ds = ds.batch(batch_size).map(per_batch_work).prefetch(tf.data.AUTOTUNE)
    # or inside the compiled step, as TensorFlow ops
    @tf.function
    def train_step(x, y): ...

If the loop only calls the step, the step thread waited for something else there (a lock, Python's GIL held
by another thread): check what else runs in the process.""",
                        docs=(L.TF_DATA_PERFORMANCE,),
                    ),
                ),
                (
                    "pytorch:loader_workers",
                    Idiom(
                        fix_summary="Move the per-batch work the loop does after the DataLoader into the Dataset or collate_fn.",
                        fix="""\
The DataLoader's worker processes build the batches already, but the training loop still works on each
batch before the step (the calls above) while the GPU has nothing to run. Move that work where the
workers run it ahead of the step:

    class Examples(torch.utils.data.Dataset):
        def __getitem__(self, i): return transform(load(i))   # per-example work the loop did
    loader = torch.utils.data.DataLoader(Examples(), batch_size=batch_size, num_workers=8,
                                         collate_fn=collate,     # per-batch work the loop did
                                         pin_memory=True, persistent_workers=True, prefetch_factor=4)

Measure the loader alone (iterate it without the model) to know whether it keeps up with the step.""",
                        docs=(L.TORCH_DATA,),
                    ),
                ),
            ),
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
                docs=(L.TF_DATA_PERFORMANCE, L.JAX_DEVICE_PUT),
            ),
        ),
        "input.sequential_map": Entry(
            category="input",
            title="tf.data map runs one element at a time",
            fix_summary="Use ds.map(fn, num_parallel_calls=tf.data.AUTOTUNE): one call per tf.data pool thread.",
            fix="""\
The map function of the pipeline runs one element at a time (a Map stage, or MapAndBatch whose worker threads
are busy about one core's worth of time). Let tf.data run several calls at once, one per thread of its pool
(the host's cores by default):

    ds = ds.map(preprocess, num_parallel_calls=tf.data.AUTOTUNE)
    # deterministic=False also lets a slow element not hold up the others, at the cost of element order

If the function is cheap per element, vectorize it instead: batch first, then map over whole batches:

    ds = ds.batch(batch_size).map(preprocess_batch, num_parallel_calls=tf.data.AUTOTUNE)

Note: tf.py_function and tf.numpy_function hold Python's GIL, so parallel calls help only while the
function waits (I/O, sleep) or releases the GIL; rewrite hot Python in TensorFlow ops.

When the function waits (remote storage, an RPC) rather than computes, a larger pool lets more calls wait
at once (AUTOTUNE follows the pool's size):

    import os
    options = tf.data.Options()
    options.threading.private_threadpool_size = 4 * os.cpu_count()
    ds = ds.with_options(options)""",
            docs=(L.TF_DATA_PERFORMANCE, L.TF_DATA_ANALYSIS),
        ),
        "input.map_pool_saturated": Entry(
            category="input",
            title="tf.data's thread pool caps a parallel map that may wait",
            fix_summary="Raise options.threading.private_threadpool_size (k x cores); keep num_parallel_calls=AUTOTUNE.",
            fix="""\
The map already runs in parallel, but tf.data runs its calls on its private thread pool, sized to the host's
cores by default, and never has more calls in flight than that pool has threads, even when each call only
waits (a Python function reading remote storage or sleeping, an RPC, ReadFile on a slow filesystem). Every
thread of the pool is inside the map function while the step waits. When the calls wait rather than compute,
a larger pool lets more of them wait at once:

    import os
    options = tf.data.Options()
    options.threading.private_threadpool_size = 4 * os.cpu_count()   # try k = 2, 4, 8 times the cores
    ds = ds.map(read_fn, num_parallel_calls=tf.data.AUTOTUNE)  # AUTOTUNE follows the pool; a fixed number caps it
    ds = ds.with_options(options)

Measure the pipeline alone (iterate it without the model) with each pool size. Calls that compute gain
nothing from a larger pool: they need cores the host does not have, and a Python function that computes holds
the GIL. Alternatives that remove the waiting instead of overlapping more of it:

    # read asynchronously and in larger pieces: several files at once, bigger records
    ds = tf.data.Dataset.from_tensor_slices(files).interleave(
        tf.data.TFRecordDataset, cycle_length=16, num_parallel_calls=tf.data.AUTOTUNE, deterministic=False)
    # or let other machines read and preprocess: tf.data.experimental.service.distribute(...)
    # or replace tf.py_function / tf.numpy_function with TensorFlow ops (tf.io.read_file, tf.io.decode_*)""",
            docs=(L.TF_DATA_THREADING, L.TF_DATA_PERFORMANCE, L.TF_DATA_SERVICE),
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

If one map function both decodes and randomly augments, split it in two so the cache can sit between them.
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
    },
)
