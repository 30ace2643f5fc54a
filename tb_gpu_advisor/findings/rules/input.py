"""Input pipeline findings: the GPU waits for input, and the tf.data stages that make it wait."""

from __future__ import annotations

from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Entry, Idiom, register
from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import Evidence, Finding, capped, estimated, grade, ladder
from tb_gpu_advisor.analysis.batch_prep import file_work_ps, prep_calls
from tb_gpu_advisor.analysis.tf_data import (
    FILE_READ_STAGES,
    ITERATOR_PREFIX,
    MAP_SEQUENTIAL_CONCURRENCY,
    MAP_THREADS,
    PARALLEL_MAP_STAGES,
    stages_of,
)
from tb_gpu_advisor.findings.host_time import op_rows
from tb_gpu_advisor.model.host import PY_FUNCTION_TYPES
from tb_gpu_advisor.findings.thresholds import (
    FILES_MIN_SHARE,
    INPUT_HIGH_PCT,
    INPUT_MEDIUM_PCT,
    MAP_POOL_BUSY_SHARE,
    MAP_POOL_WAITING_SHARE,
    PREP_UNTRACED_MIN_MS,
    TF_DATA_SERVICE_MIN_GPUS,
)
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.whatif.estimate import bound as whatif_bound, model as whatif_model
from tb_gpu_advisor.whatif import input as whatif_input
from tb_gpu_advisor.findings.input_steps import input_steps
from tb_gpu_advisor.findings.rules.steps import warmup_step

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.findings.context import Context


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
            pytorch=Idiom(
                fix_summary="Feed the GPU from a DataLoader with worker processes, pinned memory and prefetching.",
                fix="""\
The training loop waits for the next batch while no GPU works: the data loading produces batches more
slowly than the GPU consumes them. Load in parallel worker processes and ahead of time:

    loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size, shuffle=True,
                                         num_workers=8, pin_memory=True, persistent_workers=True,
                                         prefetch_factor=4, drop_last=True)
    for x, y in loader:
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)

Decode once and cache deterministic work; apply random augmentation after the cache, never before it.
Measure the loader alone (iterate it without the model) to know its ceiling.""",
                docs=(L.TORCH_DATA,),
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


UPPER_BOUND = "upper bound: the step time if all of the {what} went away"

# Per framework: how to get Python calls into the profile, and the record-file format its loaders read.
_PYTHON_TRACER = {
    "jax": "enable the Python tracer, jax.profiler.trace(..., python_tracer_level=1)",
    "pytorch": "record Python calls, torch.profiler.profile(..., with_stack=True)",
    "tensorflow": "time the batch preparation alone, around the call that builds the batch",
}
_RECORD_FILES = {
    "jax": "pack the dataset into a few large record files (ArrayRecord, which grain reads; or TFRecord) holding "
    "already-decoded or small encoded examples",
    "pytorch": "pack the dataset into a few large shards (WebDataset tar shards, read by the DataLoader's "
    "workers) holding already-decoded or small encoded examples",
    "tensorflow": "pack the dataset into a few large TFRecord files (tf.train.Example records of already-decoded "
    "or small encoded images) read by tf.data.TFRecordDataset(files, "
    "num_parallel_reads=tf.data.AUTOTUNE)",
}
# What idles while the host prepares, and what starts when it is done, per BatchPrep.device without GPUs.
# Decoding in parallel, in each framework's loader: the lever when decoding, not reading, is most of the file work.
_PARALLEL_DECODE = {
    "jax": "decode in parallel (grain's worker processes, or tf.data's map(decode, num_parallel_calls="
    "tf.data.AUTOTUNE))",
    "pytorch": "decode in parallel (more DataLoader workers: num_workers)",
    "tensorflow": "decode in parallel (tf.data's map(decode, num_parallel_calls=tf.data.AUTOTUNE))",
}
_GPU_DECODE = {
    "jax": "decode on the GPU (NVIDIA DALI, nvJPEG)",
    "pytorch": 'decode on the GPU (torchvision.io.decode_jpeg(..., device="cuda"), or NVIDIA DALI)',
    "tensorflow": "decode on the GPU (NVIDIA DALI, nvJPEG)",
}
_DEVICE_WORDS = {
    "xla_cpu": ("XLA's CPU executor idles", "XLA's CPU executor gets work"),
    "tf_cpu": ("no tf.function runs", "the tf.function step starts"),
}
# PyTorch's iterator of a DataLoader with num_workers=0: batches are built in the training process.
_SINGLE_PROCESS_LOADER = "enumerate(DataLoader)#_SingleProcessDataLoaderIter"


def _wait(ctx):
    """(exposed tf.data/DataLoader input wait ms, its share %) over the analysis window."""
    wait_ms = ctx.pipeline_wait_ms
    return wait_ms, ctx.share_pct(wait_ms)


def _wait_metrics(ctx, wait_ms, share):
    return {
        "input_wait_pct": share,
        "input_wait_ms": round(wait_ms, 3),
        "input_wait_ms_per_step": ctx.per_step_ms(wait_ms),
        "step_time_ms_mean": ctx.mean_step_ms,
    }


def _wait_pointers(ctx):
    waits = intervals.subtract(ctx.host.input_waits, ctx.gpu_busy)
    return {
        "time_ranges_ms": ctx.longest_ranges_ms(waits),
        "steps": ctx.steps_overlapping(waits),
        "tf_data_stages": list(ctx.pipeline.paths[:5]),
    }


def _input_finding(ctx, finding_id, summary, recoverable_ms, basis, extra_metrics=None, pointers=None, fix_note=""):
    """A finding graded on the input ladder by its recoverable share; None below the medium level."""
    wait_ms, share = _wait(ctx)
    recoverable_share = ctx.share_pct(recoverable_ms)
    severity = grade(recoverable_share, INPUT_HIGH_PCT, INPUT_MEDIUM_PCT, low=0.0)
    metrics = {**_wait_metrics(ctx, wait_ms, share), **(extra_metrics or {}), "recoverable_pct": recoverable_share}
    return Finding(
        id=finding_id,
        severity=severity,
        summary=summary,
        evidence=Evidence(
            metrics,
            ladder("input_wait_pct", share, INPUT_HIGH_PCT, INPUT_MEDIUM_PCT),
            {**_wait_pointers(ctx), **(pointers or {})},
        ),
        recoverable_ms=recoverable_ms,
        window_ms=ctx.window_ms,
        speedup_basis=basis,
        fix_note=fix_note,
    )


def _waits_enough(ctx):
    wait_ms, share = _wait(ctx)
    return wait_ms > 0 and share >= INPUT_MEDIUM_PCT


def gpu_waits_for_input(ctx):
    """The GPU idles while the step blocks in IteratorGetNext (only with a GPU: on CPU-only runs the same
    cores produce and consume, so waiting is not idle hardware)."""
    if not ctx.has_gpu or not _waits_enough(ctx):
        return None
    wait_ms, share = _wait(ctx)
    pipeline = ctx.pipeline
    note = ""
    if pipeline.per_device_generators:
        note = (
            f"The trace shows tf.distribute's per-device feed ({pipeline.per_device_generators[0]}), which "
            "pulls batches from the source dataset through RemoteCall __inference__next_func; the source "
            "pipeline's own stages are not in the trace. Tune the source dataset (below) before "
            "strategy.experimental_distribute_dataset(ds)."
        )
    elif pipeline.is_tuned:
        note = (
            f"This pipeline already prefetches and maps in parallel ({pipeline.paths[0]}), so the producer "
            "itself is too slow: see the other findings, cache decoded data, precompute offline, or use "
            "the tf.data service."
        )
    if ctx.framework.name == "pytorch" and any(name.startswith(_SINGLE_PROCESS_LOADER) for name in ctx.host.op_totals):
        note = (
            "The DataLoader builds each batch in the training process (_SingleProcessDataLoaderIter: "
            "num_workers=0) while the GPU waits; worker processes would build the next ones during the step."
        )
    metrics, pointers = _wait_metrics(ctx, wait_ms, share), _wait_pointers(ctx)
    files_note = _file_work_in_waits(ctx, wait_ms, metrics, pointers)
    severity = grade(share, INPUT_HIGH_PCT, INPUT_MEDIUM_PCT)
    condition = "per_device_feed" if pipeline.per_device_generators and not pipeline.is_tuned else None
    return Finding(
        id="input.gpu_waits_for_input",
        severity=severity,
        summary=f"The GPU waits for input {share:.1f}% of the step time ({ctx.time_text(wait_ms)}).",
        evidence=Evidence(metrics, ladder("input_wait_pct", share, INPUT_HIGH_PCT, INPUT_MEDIUM_PCT), pointers),
        recoverable_ms=wait_ms,
        window_ms=ctx.window_ms,
        speedup_basis=UPPER_BOUND.format(what="GPU idle time spent waiting for input"),
        fix_note=f"{note} {files_note}".strip(),
        condition=condition,
    )


def _file_work_in_waits(ctx, wait_ms, metrics, pointers):
    """The record-file note when the known preparation calls inside the exposed input waits (a PyTorch DataLoader
    run in the training process, traced with_stack=True) are mostly file reads and image decoding; adds their
    times to `metrics` and the calls to `pointers` when there are any."""
    waits = intervals.subtract(ctx.host.input_waits, ctx.gpu_busy)
    if len(ctx.window):
        waits = intervals.intersect(waits, ctx.window)
    calls, _ = prep_calls(ctx.host, waits)
    if not calls:
        return ""
    read_ms, decode_ms = (ms(ps) for ps in file_work_ps(calls))
    steps = max(1, ctx.step_count)
    metrics.update(file_read_ms_per_step=round(read_ms / steps, 3), decode_ms_per_step=round(decode_ms / steps, 3))
    pointers["functions"] = [{"function": call.name, "ms": ms(call.ps), "waits": call.waits} for call in calls[:5]]
    if ctx.framework.name not in _RECORD_FILES or read_ms + decode_ms < FILES_MIN_SHARE * wait_ms:
        return ""
    return _file_work_note(ctx, read_ms / steps, decode_ms / steps, "the wait", gpu=True)


def _file_work_note(ctx, read_ms, decode_ms, of, gpu):
    """The advice for file reads and image decoding (`read_ms`, `decode_ms` per step) that are most of `of`: record
    files remove the reads, not the decoding; decoding is sped up by decoding in parallel, storing decoded data, or
    (an NVIDIA GPU run, `gpu`) decoding on the GPU."""
    framework = ctx.framework.name
    reads = (
        f"{_RECORD_FILES[framework]}, so a step reads a few large files sequentially instead of opening many "
        f"small ones; that would save at most the {read_ms:.2f} ms per step of reads"
    )
    if read_ms >= decode_ms:
        text = (
            f"File reads ({read_ms:.2f} ms per step) and image decoding ({decode_ms:.2f} ms per step) are most of "
            f"{of}, mostly reads: {reads}."
        )
        return text + (" Decoding stays unless the records hold decoded data." if decode_ms > 0 else "")
    levers = [_PARALLEL_DECODE[framework], "store the images decoded or resized (decode once, offline; larger files)"]
    if gpu and ctx.has_gpu and not ctx.on_amd:
        levers.append(_GPU_DECODE[framework])
    text = (
        f"Image decoding ({decode_ms:.2f} ms per step) is most of {of}, file reads ({read_ms:.2f} ms per step) "
        f"the smaller part: {'; or '.join(levers)}."
    )
    return text + (f" Record files remove only the reads: {reads}." if read_ms > 0 else "")


def no_prefetch(ctx: Context) -> Finding | None:
    """tf.data in use, no Prefetch stage: producer and step take turns. With prefetch each step takes
    max(producer, consumer) (whatif.input.prefetch)."""
    pipeline = ctx.pipeline
    if not pipeline.in_use or pipeline.has_prefetch or not _waits_enough(ctx) or not ctx.step_set.steps:
        return None
    estimate = whatif_input.prefetch(input_steps(ctx))
    finding = _input_finding(
        ctx,
        "input.no_prefetch",
        f"No Prefetch stage in the tf.data pipeline ({pipeline.paths[0]}); input and step do not overlap.",
        estimate.recoverable_of(ctx.window_ms),
        estimate.basis,
        pointers={"tf_data_stages": list(pipeline.paths[:5])},
    )
    return estimated(finding, estimate)


# Op types whose time in a map may be waiting, not computing (Python callbacks, file reads): with them the map's
# wall time says nothing about the cores it needs.
MAP_WAITING_OP_TYPES = frozenset({"EagerPyFunc", "PyFunc", "PyFuncStateless", "ReadFile"})


def _may_wait(name):
    return name.rpartition(":")[2] in MAP_WAITING_OP_TYPES


def _map_threads_text(concurrency):
    """What the map's worker threads do, in wall time (the trace does not say whether it is CPU time)."""
    if concurrency <= 1:
        return f"its worker threads are inside the map function {concurrency:.0%} of the time (one element at a time)"
    return f"its worker threads are inside the map function {concurrency:.2f} at a time on average"


def sequential_map(ctx: Context) -> Finding | None:
    """A Map stage, or a MapAndBatch whose worker threads are busy ~one core, while the step waits. The fix
    spreads the producer over the host's cores (whatif.input.parallel_map)."""
    pipeline = ctx.pipeline
    if not pipeline.sequential_maps or not _waits_enough(ctx):
        return None
    stage = pipeline.sequential_maps[0]
    concurrency = pipeline.map_concurrency
    in_flight = ctx.host.map_ops_in_flight
    how = (
        _map_threads_text(concurrency)
        if concurrency is not None and not stage.endswith("::Map")
        else "a Map stage runs its function one element at a time"
    )
    if in_flight is not None and concurrency is not None and concurrency >= MAP_SEQUENTIAL_CONCURRENCY:
        how = (
            f"its map function's ops run {in_flight:.2f} at a time while any runs, one element at a time; the "
            f"worker threads look busy {concurrency:.2f} at a time because the executor's callbacks outlast the ops"
        )
    cores = ctx.analysis.configuration.cores_seen
    waiting = sorted({name.rpartition(":")[2] for name, _, _ in ctx.host_ops(_may_wait)})
    estimate = whatif_input.parallel_map(
        input_steps(ctx), pipeline.has_prefetch, cores, tuple(waiting), steps_on_gpu=ctx.has_gpu
    )
    caveat = ""
    python = any(op in whatif_input.PYTHON_CALLBACK_OPS for op in waiting)
    if python:
        caveat = (
            " Its function calls Python: parallel calls help while the function waits (I/O, sleep), not while "
            "it computes under Python's GIL."
        )
    finding = _input_finding(
        ctx,
        "input.sequential_map",
        f"The tf.data map runs sequentially ({stage}: {how}).{caveat}",
        estimate.recoverable_of(ctx.window_ms),
        estimate.basis,
        extra_metrics={
            "map_threads_busy_cores": concurrency,
            "host_cores": None if cores is None else cores.count,
            "host_cores_source": None if cores is None else cores.source,
        },
        pointers={"tf_data_stages": list(pipeline.sequential_maps)},
    )
    if finding is not None and python:
        # One call at a time cannot show whether the function waits or computes under the GIL: a bound, at most
        # medium.
        finding = capped(finding, "medium")
    return estimated(finding, estimate)


# The Python APIs behind the op types of MAP_WAITING_OP_TYPES, as the summary names them.
_WAITING_OP_APIS = {
    "EagerPyFunc": "tf.py_function",
    "PyFunc": "tf.numpy_function",
    "PyFuncStateless": "tf.numpy_function",
    "ReadFile": "tf.io.read_file",
}


def map_pool_saturated(ctx: Context) -> Finding | None:
    """A parallel map whose function runs ops that may wait (MAP_WAITING_OP_TYPES) keeps every thread of tf.data's
    private pool busy while the step waits: the pool, not the calls, caps the producer, and only a larger pool
    lets more calls wait at once. The threads seen (those that ran something) are taken as the pool's size only
    when they are no fewer than the host's cores (the default size), so without a core count it stays quiet; where
    several pools share the thread name (tf.distribute's per-replica
    iterators), idle threads of the others lower the busy share and the rule stays quiet. The op totals are the
    profile's: the waiting ops are taken to run on the pool's threads."""
    pipeline = ctx.pipeline
    threads, concurrency = pipeline.map_threads, pipeline.map_concurrency
    if (
        pipeline.sequential_maps
        or not pipeline.stages & PARALLEL_MAP_STAGES
        or threads < 2
        or concurrency is None
        or concurrency < MAP_POOL_BUSY_SHARE * threads
        or not _waits_enough(ctx)
    ):
        return None
    cores = ctx.analysis.configuration.cores_seen
    if cores is None or threads < cores.count:
        return None  # a default pool has a thread per core: unseen threads may have been free
    ops = ctx.host_ops(_may_wait)
    pool_busy_ps = ctx.host.thread_busy[MAP_THREADS][1]
    waiting_share = min(1.0, sum(total for _, _, total in ops) / pool_busy_ps) if pool_busy_ps > 0 else 0.0
    if waiting_share < MAP_POOL_WAITING_SHARE:
        return None
    wait_ms, share = _wait(ctx)
    kinds = sorted({name.rpartition(":")[2] for name, _, _ in ops})
    apis = ", ".join(f"{_WAITING_OP_APIS[kind]} (op {kind})" for kind in kinds)
    python = [kind for kind in kinds if kind in PY_FUNCTION_TYPES]
    calls = ctx.analysis.py_function_calls
    if python and len(python) == len(kinds) and calls is not None and calls.serialized:
        return (
            None  # the Python calls last longer the more run at once: they compute under the GIL, threads gain nothing
        )
    gil = " (a Python function that computes holds the GIL and gains nothing)" if python else ""
    stage = _parallel_map_stage(pipeline.paths)
    finding = _input_finding(
        ctx,
        "input.map_pool_saturated",
        f"tf.data's thread pool caps the parallel map ({stage}): its {threads} threads are inside the map function "
        f"{concurrency:.2f} at a time on average, {waiting_share:.0%} of that in {apis}, which may wait, while the "
        f"step waits for input {share:.1f}% of the time. A larger pool lets more calls wait at once: it gains only "
        f"if the calls wait rather than compute{gil}.",
        wait_ms,
        "upper bound: all of the input wait gone, 1 / (1 - wait share), reached only if the map's calls "
        "wait rather than compute (calls that compute need cores, not threads"
        + ("; a Python function that computes holds the GIL" if python else "")
        + ")",
        extra_metrics={
            "map_threads": threads,
            "map_threads_busy_cores": concurrency,
            "map_waiting_share": round(waiting_share, 3),
            "host_cores": cores.count,
            "host_cores_source": cores.source,
        },
        pointers={"tf_data_stages": [stage], "host_ops": op_rows(ops)},
    )
    return finding


def _parallel_map_stage(paths):
    """The first parallel map stage's path (`Iterator::Root::Prefetch::MapAndBatch`), also where it is only seen as
    a prefix of a deeper stage's name."""
    for path in paths:
        parts = stages_of(path)
        depth = next((index for index, stage in enumerate(parts) if stage in PARALLEL_MAP_STAGES), None)
        if depth is not None:
            return ITERATOR_PREFIX + "::".join(parts[: depth + 1])
    return None


def python_generator(ctx: Context) -> None:
    """A Generator stage (Dataset.from_generator) feeds a pipeline the step waits on."""
    pipeline = ctx.pipeline
    if not pipeline.generators or not _waits_enough(ctx):
        return None
    wait_ms, _ = _wait(ctx)
    count, total = ctx.host.op_totals.get(pipeline.generators[0], (0, 0))
    return _input_finding(
        ctx,
        "input.python_generator",
        f"The input comes from a Python generator ({pipeline.generators[0]}), which runs under the GIL.",
        wait_ms,
        UPPER_BOUND.format(what="input wait"),
        extra_metrics={"generator_calls": count, "generator_ms": ms(total)},
        pointers={"tf_data_stages": list(pipeline.generators)},
    )


def _read_ms(ctx, paths):
    return sum(ms(ctx.host.op_totals.get(path, (0, 0))[1]) for path in paths)


def demanded_file_reads(ctx: Context) -> Finding | None:
    """XProf's "demanded" reads: a file reader with nothing above it that reads ahead."""
    pipeline = ctx.pipeline
    if not pipeline.demanded_reads or not _waits_enough(ctx):
        return None
    wait_ms, _ = _wait(ctx)
    read_ms = _read_ms(ctx, pipeline.demanded_reads)
    return _input_finding(
        ctx,
        "input.demanded_file_reads",
        f"Files are read on demand ({pipeline.demanded_reads[0]}: reads take {ctx.time_text(read_ms)}).",
        min(wait_ms, read_ms),
        "upper bound: the input wait spent in on-demand reads removed",
        extra_metrics={"demanded_read_ms": round(read_ms, 3)},
        pointers={"tf_data_stages": list(pipeline.demanded_reads)},
    )


def no_cache(ctx: Context) -> Finding | None:
    """Files are read and the pipeline has no cache stage while the step waits."""
    pipeline = ctx.pipeline
    if not pipeline.file_reads or pipeline.has_cache or not _waits_enough(ctx):
        return None
    wait_ms, _ = _wait(ctx)
    read_ms = _read_ms(ctx, pipeline.file_reads)
    return _input_finding(
        ctx,
        "input.no_cache",
        f"Files are read every epoch and nothing is cached (reads take {ctx.time_text(read_ms)}).",
        min(wait_ms, read_ms),
        "upper bound: the input wait spent reading files removed",
        extra_metrics={"file_read_ms": round(read_ms, 3)},
        pointers={"tf_data_stages": [p for p in pipeline.file_reads if p.rpartition("::")[2] in FILE_READ_STAGES]},
    )


def tf_data_service(ctx):
    """Several GPUs starve behind a pipeline that already prefetches and maps in parallel."""
    pipeline = ctx.pipeline
    wait_ms, share = _wait(ctx)
    if len(ctx.active_gpus) < TF_DATA_SERVICE_MIN_GPUS or not pipeline.is_tuned or share < INPUT_HIGH_PCT:
        return None
    finding = _input_finding(
        ctx,
        "input.tf_data_service",
        f"{len(ctx.active_gpus)} GPUs wait {share:.1f}% of the step on a pipeline that already prefetches and "
        "maps in parallel.",
        wait_ms,
        UPPER_BOUND.format(what="input wait"),
        extra_metrics={"active_gpus": len(ctx.active_gpus)},
    )
    return capped(finding, "medium")


def host_batch_prep(ctx: Context) -> Finding | None:
    """JAX, TensorFlow and PyTorch loops: each step starts with the host building its batch on the step thread while
    the device idles (analysis.batch_prep), not behind tf.data's IteratorGetNext or the DataLoader's __next__
    (input.gpu_waits_for_input). How sure depends on what the trace shows there: known preparation calls (Python
    tracer, TensorFlow file ops), other host work, or nothing (an untraced stall)."""
    prep = ctx.analysis.batch_prep
    framework = ctx.framework.name
    if not ctx.batch_prep_shown or not ctx.step_count or prep.total_ps <= 0:
        return None
    # The steps are the steady ones: a warm-up first step (steps.warmup_in_profile) is left out of the step set.
    steady_count = len(ctx.step_set.timed_steps)
    prep_ms = ms(prep.total_ps)
    window_ms = ctx.window_ms
    share = round(100.0 * prep_ms / window_ms, 2) if window_ms > 0 else 0.0
    severity = grade(share, INPUT_HIGH_PCT, INPUT_MEDIUM_PCT)
    if severity is None or (prep.certainty == "low" and prep_ms / steady_count < PREP_UNTRACED_MIN_MS):
        return None
    gain_ms = ms(prep.recoverable_ps)
    mean_ms = window_ms / steady_count
    which = "steady steps, warm-up excluded" if warmup_step(ctx) is not None else "steps"
    calls = [{"function": call.name, "ms": ms(call.ps), "waits": call.waits} for call in prep.calls[:5]]
    if prep.device == "gpu":
        one = len(ctx.active_gpus) <= 1
        idles, starts = ("the GPU idles", "the GPU gets work") if one else ("the GPUs idle", "the GPUs get work")
    else:
        idles, starts = _DEVICE_WORDS[prep.device]
    if prep.certainty == "high":
        what = ", ".join(f"{c['function']} {c['ms'] / ctx.step_count:.2f} ms" for c in calls[:3])
        seen = (
            f"The trace shows the step thread in batch preparation there ({what} per step); "
            "the step is dispatched after it."
        )
        if prep.waits:
            seen += " Most of it is waiting (sleep or file reads), not computing: a background loader hides it."
    elif prep.certainty == "medium" and calls:
        seen = (
            f"Known preparation calls cover {100 * prep.prep_call_share:.0f}% of that time ("
            + ", ".join(c["function"] for c in calls[:3])
            + "); other host events fill most of the rest: "
            "check what else the loop does before calling the step."
        )
    elif prep.certainty == "medium":
        seen = (
            "Host events fill that time but none is a known preparation call (NumPy, file reads, decoding, "
            "copies to the device): check what the loop does before calling the step."
        )
    else:
        seen = (
            "The trace shows almost nothing on the host there: the step thread waited or ran Python the "
            f"profile did not trace ({_PYTHON_TRACER[framework]}, before acting on this)."
        )
    note = f"{seen} Every step pays it before {starts}."
    condition = None
    if framework == "pytorch" and ctx.loader_workers_in_use:
        condition = "loader_workers"
        note += (
            " The DataLoader builds batches in worker processes already (_MultiProcessingDataLoaderIter): this "
            "work runs in the training loop after the loader hands over the batch."
        )
    read_ms, decode_ms = ms(prep.read_ps), ms(prep.decode_ps)
    if read_ms + decode_ms >= FILES_MIN_SHARE * prep_ms:
        note += " " + _file_work_note(
            ctx, read_ms / ctx.step_count, decode_ms / ctx.step_count, "it", gpu=prep.device == "gpu"
        )
    # On CPU a loader that computes (rather than waits) takes cores from the step: the overlap is a ceiling.
    computing_on_cpu = prep.device != "gpu" and prep.prep_call_ps > 0 and not prep.waits
    if computing_on_cpu:
        note += (
            " This is a CPU-only run and the preparation computes: the background loader takes cores from the "
            "step, so the estimate is a ceiling."
        )
    elif prep.device != "gpu":
        note += (
            " This is a CPU-only run: the background loader shares the cores with the step, so the overlap "
            "holds for waiting, less for computing."
        )
    between_ms = ms(prep.between_steps_ps) / (ctx.step_count - 1) if ctx.step_count > 1 else 0.0
    if between_ms >= 0.1 * prep_ms / steady_count:
        note += (
            f" The device also idles {between_ms:.2f} ms between each pair of consecutive step markers, "
            "outside the steps measured here: preparation the marker leaves out."
        )
    if prep.certainty == "low" or (prep.device != "gpu" and not prep.waits):
        severity = "medium" if severity == "high" else severity
    finding = Finding(
        id="input.host_batch_prep",
        severity=severity,
        summary=f"Each step starts with {prep_ms / steady_count:.2f} ms of host batch preparation while {idles} "
        f"({share:.1f}% of the {mean_ms:.2f} ms mean step over {steady_count} {which}; a loader one "
        f"batch ahead would save {gain_ms / steady_count:.2f} ms of it per step; how sure: {prep.certainty}).",
        evidence=Evidence(
            {
                "batch_prep_ms": prep_ms,
                "batch_prep_ms_per_step": round(prep_ms / steady_count, 3),
                "batch_prep_pct": share,
                "step_time_ms_mean": round(mean_ms, 3),
                "steps_measured": steady_count,
                "host_traced_pct": round(100 * prep.traced_share, 1),
                "prep_calls_pct": round(100 * prep.prep_call_share, 1),
                "certainty": prep.certainty,
                "device": prep.device,
                "between_steps_idle_ms": ms(prep.between_steps_ps),
                "file_read_ms_per_step": round(read_ms / ctx.step_count, 3),
                "decode_ms_per_step": round(decode_ms / ctx.step_count, 3),
                "recoverable_pct": round(100.0 * gain_ms / window_ms, 2) if window_ms > 0 else 0.0,
            },
            ladder("batch_prep_pct", share, INPUT_HIGH_PCT, INPUT_MEDIUM_PCT),
            {
                "time_ranges_ms": ctx.longest_ranges_ms(prep.gaps),
                "steps": ctx.steps_overlapping(prep.gaps),
                "functions": calls,
            },
        ),
        recoverable_ms=gain_ms,
        window_ms=window_ms,
        speedup_basis="",
        fix_note=note,
        condition=condition,
    )
    basis = (
        "per step, the preparation overlapped with the rest of that step by a loader one batch ahead: the "
        "step becomes max(preparation, rest)"
    )
    if computing_on_cpu:
        return estimated(
            finding,
            whatif_bound(
                window_ms,
                window_ms - gain_ms,
                f"upper bound: {basis}, with no core taken from the step (on CPU "
                "the loader's computing competes with the step for cores)",
            ),
        )
    # A model where the loader overlaps the step: on a GPU run, or a loader seen waiting. On a CPU-only run where
    # the trace does not show what the preparation does (an untraced stall may be computing), the loader may
    # compete with the step for cores: an upper bound.
    if prep.device == "gpu" or prep.waits:
        return estimated(finding, whatif_model(window_ms, window_ms - gain_ms, f"model: {basis}"))
    return estimated(
        finding,
        whatif_bound(
            window_ms,
            window_ms - gain_ms,
            f"upper bound: {basis}, reached if the preparation waits; on this "
            "CPU-only run the trace does not show what it does, and a loader that "
            "computes competes with the step for cores",
        ),
    )


RULES = (
    gpu_waits_for_input,
    host_batch_prep,
    no_prefetch,
    sequential_map,
    map_pool_saturated,
    python_generator,
    demanded_file_reads,
    no_cache,
    tf_data_service,
)
