"""The host family's catalog words: titles, explanations and fixes of its findings."""

from __future__ import annotations

from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Entry, Idiom, register
from tb_gpu_advisor.findings.compiled import COMPILED_FUSED_OPTIMIZER_HOST_IDIOM, COMPILED_HOST_IDIOM
from tb_gpu_advisor.findings.rules.host_stalls import STALL_ENTRIES


# Host time measured during warm-up is mostly first-use setup; the framework-specific fix comes after.
HOST_WARMUP_IDIOM = Idiom(
    fix_summary="Recapture after warm-up: this host time includes first-use setup (compilation, allocation).",
    fix="""\
Warm-up is inside this capture (see the trace confidence): the first steps trace and compile the model,
load kernels and grow the allocator, host work that steady-state steps do not pay. Profile steady-state
steps before changing code:

    TensorFlow/Keras: TensorBoard(log_dir, profile_batch=(10, 19))
    JAX: jax.profiler.start_trace(logdir) after the first steps have compiled
    PyTorch: torch.profiler.profile(schedule=torch.profiler.schedule(wait=5, warmup=2, active=10))

If the GPU still idles while the host works there, shorten the host's part of each step: compile the step
(tf.function, jax.jit, torch.compile), keep logging and host syncs out of it.""",
    docs=(L.TF_PROFILER, L.TORCH_PROFILER),
)

_LOCK_CONTENTION = Idiom(
    fix_summary="Shorten the critical section the feeding thread waits for, or hand data over through a queue.",
    fix="""\
The thread that feeds the device waits to acquire a lock that another thread holds, and the device idles
meanwhile. Keep only the shared-state update inside the lock and do slow work (I/O, logging, NumPy, device
reads) outside it; if threads exchange batches or metrics, pass them through a queue instead of guarding a
shared object:

    with lock:                       # before: the whole update, slow work included, under the lock
        pending = list(buffer); buffer.clear()
    write_metrics(pending)           # slow work after releasing it

    results = queue.Queue()          # or: hand values over instead of sharing them
    results.put(metrics)             # producer; the step thread never blocks on it (get_nowait elsewhere)

The evidence names the threads that released a lock during the waits: the holders.""",
    docs=(L.PYTHON_THREADING,),
)

# The step is jitted already (a few PjitFunction calls per step): jax.jit is not the fix for the host time
# between its dispatches.
JAX_JITTED_HOST_IDIOM = Idiom(
    fix_summary="The step is jitted already: thin the loop around it, read results rarely, prefetch batches.",
    fix="""\
Part of every step the GPU has nothing to do while the host runs Python or runtime work between the step's
jitted calls. The step is compiled already (a few dispatches per step), so jax.jit is not the fix; the host
work around it is:

    for step, batch in enumerate(batches):
        state, metrics = train_step(state, batch)       # returns at once: asynchronous dispatch
        if step % 100 == 0:
            log(jax.device_get(metrics))                 # read values rarely: a read waits for the GPU

Prepare the next batch ahead (a background thread, flax.jax_utils.prefetch_to_device, grain workers) and
move host computations into the jitted step or out of the loop. The evidence lists the host events that
took the most time.""",
    docs=(L.JAX_GPU_TIPS,),
)

ENTRIES = register(
    "host",
    {
        "host.feeder_blocked": Entry(
            category="host",
            title="The thread that feeds the device waits on another thread while the device idles",
            fix_summary="Feed the step from tf.data (parallel map, prefetch) or more producer threads, not one "
            "slow producer.",
            fix="""\
The step's thread blocks in a Python queue, condition or future while the device has nothing to do: the
thread that fills it delivers batches slower than the step uses them. Feed the step from tf.data, which
prepares batches in parallel and ahead of the step:

    ds = tf.data.Dataset.from_generator(make_examples, output_signature=spec)   # instead of a queue
    ds = ds.map(parse, num_parallel_calls=tf.data.AUTOTUNE)     # preparation spread over cores
    ds = ds.batch(batch_size).prefetch(tf.data.AUTOTUNE)       # batches ready before the step asks

Keeping a Python producer: run several producer threads into one queue.Queue(maxsize=2 * producers).
The evidence gives the waits per step and what the producing thread did meanwhile.""",
            docs=(L.TF_DATA_PERFORMANCE, L.PYTHON_THREADING),
            jax=Idiom(
                fix_summary="Prepare and device_put batches in several threads ahead of the step, or use grain / "
                "tf.data.",
                fix="""\
The step's thread blocks in a Python queue, condition or future while the device has nothing to do: the
producer delivers batches slower than the step uses them. Prepare several batches at once, ahead of the
step, and copy each to the device in the producer:

    import concurrent.futures, itertools
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=4)
    def load(index):
        return jax.device_put(make_batch(index))           # NumPy work and I/O release the GIL
    pending = [pool.submit(load, i) for i in range(8)]     # 8 batches in flight
    for step in itertools.count():
        batch = pending.pop(0).result()
        pending.append(pool.submit(load, step + 8))
        state = train_step(state, batch)

Or use grain (grain.DataLoader(..., worker_count=N) with a prefetch) or tf.data with
num_parallel_calls=AUTOTUNE and prefetch, read through as_numpy_iterator().""",
                docs=(L.GRAIN, L.JAX_DEVICE_PUT, L.PYTHON_THREADING),
            ),
            pytorch=Idiom(
                fix_summary="Produce batches in DataLoader workers (num_workers, prefetch_factor), not one "
                "slow thread.",
                fix="""\
The step's thread blocks in a Python queue, condition or future while the GPU has nothing to do: the
producer delivers batches slower than the step uses them. Let DataLoader workers prepare batches in
parallel processes, several ahead of the step:

    loader = torch.utils.data.DataLoader(dataset, batch_size=64, num_workers=8, prefetch_factor=4,
                                         persistent_workers=True, pin_memory=True)
    for batch in loader:
        batch = batch.to("cuda", non_blocking=True)
        train_step(batch)

Keeping a Python producer: run several producer threads or processes into the queue, and make it deeper.""",
                docs=(L.TORCH_DATA, L.TORCH_TUNING),
            ),
            variants=(("any:lock_contention", _LOCK_CONTENTION),),
        ),
        "host.gc_pauses": Entry(
            category="host",
            title="Python garbage collection pauses the training loop while the GPU idles",
            fix_summary="Freeze the objects built at setup (gc.freeze()), raise gc thresholds or collect between "
            "steps.",
            fix="""\
Python's cyclic garbage collector stops the thread that allocates while it scans every tracked object;
the longer the run keeps objects alive (model, dataset index, caches), the longer each full collection.
The GPU waits while the step's thread is paused. After setup, move what exists into the permanent
generation, collect less often, or collect at a time of your choosing:

    import gc
    model = build_model(); ds = make_dataset()   # setup done
    gc.collect(); gc.freeze()                    # setup objects are never scanned again
    gc.set_threshold(50_000, 20, 100)            # gen-0 every 50k allocations instead of 700

    # or: no automatic collection in the loop, a collection every N steps between steps
    gc.disable()
    for step, batch in enumerate(ds):
        train_step(batch)
        if step % 500 == 0:
            gc.collect()

The evidence gives the pause times and the longest pauses' place in the profile.""",
            docs=(L.PYTHON_GC,),
        ),
        "host.gpu_idle_host_busy": Entry(
            category="host",
            title="The GPU idles while the host works",
            fix_summary="Move per-step Python/runtime work off the critical path: one tf.function step, "
            "steps_per_execution.",
            fix="""\
Part of every step the GPUs have nothing to do while host threads run TensorFlow runtime or Python code.
Put the whole step in one graph function and run several steps per call:

    @tf.function                                   # one graph per step, no per-op Python dispatch
    def train_step(x, y): ...
    model.compile(..., steps_per_execution=32)     # Keras: many steps per Python call

Keep Python (logging, metric reads, callbacks, data conversion) out of the step, or do it every N steps.
The evidence lists the step's host ops that took the most time.""",
            docs=(L.TF_FUNCTION, L.TF_GPU_PERFORMANCE, L.KERAS_TRAINING),
            jax=Idiom(
                fix_summary="jax.jit the entire step; keep Python and host computations out of the step loop.",
                fix="""\
Part of every step the GPUs have nothing to do while the host runs Python or runtime work. Dispatch the
whole step as one jitted function and keep the loop around it thin:

    train_step = jax.jit(train_step, donate_argnums=0)
    for batch in batches:
        state, metrics = train_step(state, batch)      # returns immediately (asynchronous dispatch)
        if step % 100 == 0:
            log(jax.device_get(metrics))                # read values rarely

Avoid Python loops and NumPy work on each batch inside the loop; run independent host work in a
background thread. The evidence lists the host events that took the most time.""",
                docs=(L.JAX_JIT, L.JAX_GPU_TIPS),
            ),
            variants=(
                (
                    "xla_blocked",
                    Idiom(
                        fix_summary="Move the step's string/Python ops into tf.data (parallel map, prefetch); then "
                        "tf.function/XLA.",
                        fix="""\
Part of every step the GPUs have nothing to do while the host runs ops inside the step, and those ops
(named above: string ops, tf.py_function, ragged conversions) run on the CPU and cannot be compiled by XLA:
jit_compile=True on this step would fail. Move them into the input pipeline, where they run in parallel
and ahead of the step:

    ds = ds.map(tokenize, num_parallel_calls=tf.data.AUTOTUNE)   # tf.strings / tf.py_function work here
    ds = ds.batch(batch_size).prefetch(tf.data.AUTOTUNE)

    @tf.function                      # the step now gets tensors; add jit_compile=True once it holds only
    def train_step(x, y): ...         # tensor math
    # Keras: model.compile(..., steps_per_execution=32)

If tf.data and the step still share the CPU, give the GPU its own launch threads:
TF_GPU_THREAD_MODE=gpu_private.""",
                        docs=(L.TF_DATA_PERFORMANCE, L.TF_FUNCTION, L.TF_GPU_PERFORMANCE),
                    ),
                ),
                ("jax:jitted", JAX_JITTED_HOST_IDIOM),
                ("any:warmup", HOST_WARMUP_IDIOM),
                ("pytorch:compiled", COMPILED_HOST_IDIOM),
                ("pytorch:compiled_optimizer_fused", COMPILED_FUSED_OPTIMIZER_HOST_IDIOM),
            ),
        ),
        "host.eager_execution": Entry(
            category="host",
            title="Ops run eagerly, one Python call each",
            fix_summary="Wrap the training step in @tf.function (jit_compile=True) instead of running eagerly.",
            fix="""\
Many individual ops execute eagerly each step (EagerLocalExecute per op): each pays Python and dispatch
overhead. Compile the step:

    @tf.function(jit_compile=True)   # or plain @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                      model.trainable_variables))
        return loss

Keras: do not pass run_eagerly=True to model.compile. If the step runs string ops or tf.py_function,
leave jit_compile out (plain @tf.function) or move those ops into tf.data first.""",
            docs=(L.TF_FUNCTION,),
            jax=Idiom(
                fix_summary="Wrap the whole training step in jax.jit instead of calling jnp ops one by one.",
                fix="""\
Each jnp operation of the step is dispatched and executed on its own (one PjRt execution per op): every
one pays Python and dispatch overhead, and XLA cannot fuse them. Compile the whole step once:

    @jax.jit
    def train_step(params, batch):
        loss, grads = jax.value_and_grad(loss_fn)(params, batch)
        params = jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)
        return params, loss

Keep Python control flow on static values only (or use jax.lax.cond / fori_loop), and read results back
(float(loss)) only every few steps.""",
                docs=(L.JAX_JIT,),
            ),
        ),
        "host.retracing": Entry(
            category="host",
            title="Functions are traced or compiled again during training",
            fix_summary="Give tf.function a fixed input_signature so it traces and compiles once.",
            fix="""\
The same function was traced/compiled more than once inside the profiled steps: each new input shape,
dtype or Python argument value makes a new graph. Fix the signature:

    @tf.function(input_signature=[tf.TensorSpec([None, 224, 224, 3], tf.float32),
                                  tf.TensorSpec([None], tf.int32)], jit_compile=True)
    def train_step(x, y): ...
    # pass tensors, not Python numbers; use drop_remainder=True so the last batch keeps its shape
    # tf.function(reduce_retracing=True) lets TF generalize shapes automatically""",
            docs=(L.TF_FUNCTION,),
            jax=Idiom(
                fix_summary="Keep input shapes and static arguments fixed so the jitted step compiles once.",
                fix="""\
The same function was compiled more than once inside the profiled steps: each new input shape, dtype or
static argument value makes a new compilation. Keep them fixed:

    jax.config.update("jax_log_compiles", True)   # logs each compilation and why
    # pad the last batch to the full batch size (or drop it); bucket variable lengths to a few sizes
    train_step = jax.jit(train_step, static_argnames=("training",))   # only true constants are static

Pass arrays, not Python scalars that change every step, as non-static arguments.""",
                docs=(L.JAX_JIT,),
            ),
            pytorch=Idiom(
                fix_summary="Keep shapes static (or mark them dynamic) so torch.compile does not recompile.",
                fix="""\
The same function was compiled more than once inside the profiled steps: new input shapes or changing
Python values make torch.compile recompile. See why with TORCH_LOGS=recompiles, then keep shapes fixed
(drop_last=True, pad to a few bucket sizes) or declare the varying dimension:

    torch._dynamo.mark_dynamic(x, 0)          # the batch dimension varies
    model = torch.compile(model, dynamic=True)""",
                docs=(L.TORCH_COMPILE,),
            ),
        ),
        "host.python_function": Entry(
            category="host",
            title="Python functions run for every element or step",
            fix_summary="Replace tf.py_function/tf.numpy_function with TensorFlow ops (or precompute offline).",
            fix="""\
tf.py_function / tf.numpy_function call back into Python: each call takes the GIL, so they barely run in
parallel and cannot be optimized or fused. Where they sit in a tf.data map they set the speed of the
whole input pipeline. Options, best first:

    # 1. Express the work with TensorFlow ops (tf.image, tf.strings, tf.io, tf.signal ...)
    ds = ds.map(lambda x: tf.image.resize(tf.io.decode_jpeg(x), (224, 224)),
                num_parallel_calls=tf.data.AUTOTUNE)
    # 2. Run the Python once, offline, and store its output (TFRecord, NumPy files)
    # 3. Cache its output if it is deterministic (not a random augmentation): ds.map(py_fn_wrapper).cache()

Called once per step inside the training step (not in tf.data), it also blocks the GPU: move it into the
pipeline with ds.map(..., num_parallel_calls=tf.data.AUTOTUNE), and keep it out of any jit_compile=True
function (XLA cannot compile it).""",
            docs=(L.TF_DATA_PERFORMANCE, L.TF_FUNCTION),
        ),
    },
)


ENTRIES = {**ENTRIES, **STALL_ENTRIES}
