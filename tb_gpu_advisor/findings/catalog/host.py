"""Catalog entries of the host-side findings: host work, eager execution, retracing, Python, threads, placement."""

from tb_gpu_advisor.findings.catalog import Entry
from tb_gpu_advisor.findings.catalog import links as L

ENTRIES = {
    "host.gpu_idle_host_busy": Entry(
        category="host",
        title="The GPU idles while the host works",
        fix_summary="Move per-step Python/runtime work off the critical path: tf.function, jit, fewer calls.",
        fix="""\
Part of every step the GPUs have nothing to do while host threads run TensorFlow runtime or Python code.
Put the whole step in one compiled function and run several steps per call:

    @tf.function(jit_compile=True)
    def train_step(x, y): ...
    model.compile(..., steps_per_execution=32)     # Keras: many steps per Python call

Keep Python (logging, metric reads, callbacks, data conversion) out of the step, or do it every N steps.
The evidence lists the host events that took the most time. JAX: jax.jit the entire step, avoid Python
loops and per-step host computations; run independent host work in a background thread.""",
        docs=(L.TF_FUNCTION, L.TF_GPU_PERFORMANCE, L.KERAS_TRAINING, L.JAX_JIT),
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

Keras: do not pass run_eagerly=True to model.compile. JAX: put the step under jax.jit.""",
        docs=(L.TF_FUNCTION, L.JAX_JIT),
    ),
    "host.retracing": Entry(
        category="host",
        title="Functions are traced or compiled again during training",
        fix_summary="Give tf.function a fixed input_signature (JAX: static shapes) so it compiles once.",
        fix="""\
The same function was traced/compiled more than once inside the profiled steps: each new input shape,
dtype or Python argument value makes a new graph. Fix the signature:

    @tf.function(input_signature=[tf.TensorSpec([None, 224, 224, 3], tf.float32),
                                  tf.TensorSpec([None], tf.int32)], jit_compile=True)
    def train_step(x, y): ...
    # pass tensors, not Python numbers; use drop_remainder=True so the last batch keeps its shape
    # tf.function(reduce_retracing=True) lets TF generalize shapes automatically

JAX: keep shapes static (pad the last batch), mark real constants with static_argnums, and check with
jax.config.update("jax_log_compiles", True).""",
        docs=(L.TF_FUNCTION, L.JAX_JIT),
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
    # 3. Cache its output if it is deterministic: ds.map(py_fn_wrapper).cache()

JAX pipelines: move the per-element Python into NumPy vectorized over the batch, or into worker
processes (grain, multiprocessing).""",
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
`with tf.device("/cpu:0")` block, or move preprocessing ops into tf.data where CPU is intended.
JAX: check jax.devices() and that arrays live on the GPU (x.devices()); install the CUDA jaxlib.""",
        docs=(L.TF_GPU_GUIDE,),
    ),
}
