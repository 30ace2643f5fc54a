"""Catalog entries of the host-side findings: host work, eager execution, retracing, Python, threads, placement."""

from tb_gpu_advisor.findings.catalog import Entry, Idiom
from tb_gpu_advisor.findings.catalog import links as L

ENTRIES = {
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
            docs=(L.JAX_JIT, L.JAX_GPU_TIPS)),
        variants=(("xla_blocked", Idiom(
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
            docs=(L.TF_DATA_PERFORMANCE, L.TF_FUNCTION, L.TF_GPU_PERFORMANCE))),),
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
            docs=(L.JAX_JIT,)),
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
    "threading.tf_data_contention": Entry(
        category="threading",
        title="GPU launch threads compete with tf.data for the CPU",
        fix_summary="Set TF_GPU_THREAD_MODE=gpu_private so the GPU gets dedicated launch threads.",
        fix="""\
Kernel launches leave the GPU idle while tf.data threads run on the same CPU cores; launch threads then
wait for a core. Give each GPU its own launch threads and bound the op thread pools:

    TF_GPU_THREAD_MODE=gpu_private TF_GPU_THREAD_COUNT=2 python train.py

    tf.config.threading.set_inter_op_parallelism_threads(2)   # before any op runs
    tf.config.threading.set_intra_op_parallelism_threads(num_cores // 2)
    options = tf.data.Options()
    options.threading.private_threadpool_size = num_cores - 4   # leave cores for launches
    ds = ds.with_options(options)""",
        docs=(L.TF_GPU_PERFORMANCE, L.TF_THREADING),
    ),
    "placement.ops_on_host": Entry(
        category="placement",
        title="Compute ops run on the CPU in a GPU run",
        fix_summary="Find CPU-placed ops with tf.debugging.set_log_device_placement(True) and move them.",
        fix="""\
These compute ops ran with CPU kernels although a GPU is in use: an op without a GPU kernel, an int32/
int64 or string input, or an explicit tf.device("/cpu:0"). Find them:

    tf.debugging.set_log_device_placement(True)
    tf.config.set_soft_device_placement(False)   # fail instead of silently falling back to the CPU

then use GPU-supported dtypes (float32/float16 rather than int64/float64), move the op out of a
`with tf.device("/cpu:0")` block, or move preprocessing ops into tf.data where CPU is intended.""",
        docs=(L.TF_GPU_GUIDE,),
    ),
}
