"""Catalog entries of the GPU-side findings: batch size, precision, fusion, launch overhead, occupancy."""

from tb_gpu_advisor.findings.catalog import Entry, Idiom
from tb_gpu_advisor.findings.catalog import links as L

ENTRIES = {
    "batch.gpu_underused": Entry(
        category="batch",
        title="Small kernels leave the GPU underused",
        fix_summary="Raise the per-GPU batch size (as memory allows) so fixed per-step costs amortize.",
        fix="""\
The GPU is busy less than half of each step and its kernels are small: per-step overhead (launches, host
work) costs about as much as the math. A larger batch does more work per launch and per step:

    BATCH = 2 * BATCH                       # try doubling; watch memory (tf.config.experimental.get_memory_info)
    ds = ds.batch(BATCH, drop_remainder=True)
    optimizer.learning_rate = base_lr * BATCH / base_batch   # keep convergence: scale LR (or warm up)

If memory is the limit, combine with mixed precision (halves activation memory). Keras:
model.compile(..., steps_per_execution=N) also cuts per-step overhead. The estimate is per example
(throughput), for a doubled batch.""",
        docs=(L.TF_GPU_PERFORMANCE, L.NVIDIA_DL_PERFORMANCE),
        jax=Idiom(
            fix_summary="Raise the per-device batch passed to the jitted step (as memory allows).",
            fix="""\
The GPU is busy less than half of each step and its kernels are small: per-step overhead (dispatch, host
work) costs about as much as the math. Give each jitted step more work:

    BATCH = 2 * BATCH                              # try doubling; watch jax.devices()[0].memory_stats()
    learning_rate = base_lr * BATCH / base_batch   # keep convergence: scale LR (or warm up)

or run several steps per dispatch with jax.lax.scan over a stack of micro-batches inside one jitted
function. The estimate is per example (throughput), for a doubled batch.""",
            docs=(L.JAX_GPU_TIPS, L.NVIDIA_DL_PERFORMANCE)),
    ),
    "precision.fp32_matmul": Entry(
        category="precision",
        title="Matrix math runs in 32-bit on a Tensor Core GPU",
        fix_summary="Enable mixed precision: set_global_policy('mixed_bfloat16') (cc 8.0+) or 'mixed_float16'.",
        fix="""\
Matrix multiplies and convolutions run as 32-bit kernels that do not use Tensor Cores. Compute in 16 bits
and keep variables in 32 bits:

    tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")  # Ampere (cc 8.0) and newer
    tf.keras.mixed_precision.set_global_policy("mixed_float16")   # Volta/Turing (cc 7.x)
    # keep the final softmax/logits in float32: layers.Activation("softmax", dtype="float32")
    # custom loops with float16: optimizer = tf.keras.mixed_precision.LossScaleOptimizer(optimizer)

Keep layer sizes (units, channels, batch) multiples of 8 so Tensor Cores apply.""",
        docs=(L.TF_MIXED_PRECISION, L.NVIDIA_MIXED_PRECISION),
        variants=(("tf32_off", Idiom(
            fix_summary="Turn TF32 back on (it is on by default on Ampere+; something disabled it), then mixed "
                        "precision.",
            fix="""\
On Ampere and newer GPUs TensorFlow (2.4+) runs float32 matmuls and convolutions on Tensor Cores in TF32 by
default; plain 32-bit kernels (sgemm, scudnn) mean something turned that off. Look for and remove:

    NVIDIA_TF32_OVERRIDE=0                                            # environment variable
    tf.config.experimental.enable_tensor_float_32_execution(False)   # in the code or a library

and turn it back on explicitly (before building the model):

    tf.config.experimental.enable_tensor_float_32_execution(True)

If these ops need full float32 precision (TF32 keeps float32's range with a 10-bit mantissa), keep TF32 off
and this finding does not apply to them. Otherwise mixed precision is faster still: compute in 16 bits,
keep variables in float32:

    tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")
    # keep the final softmax/logits in float32: layers.Activation("softmax", dtype="float32")""",
            docs=(L.TF_TF32, L.TF_MIXED_PRECISION, L.NVIDIA_MIXED_PRECISION))),),
        jax=Idiom(
            fix_summary="Compute in bfloat16 (jmp / jnp.bfloat16 casts), or at least let matmuls use TF32.",
            fix="""\
Matrix multiplies and convolutions run as 32-bit kernels that do not use Tensor Cores. Compute in 16 bits
and keep the parameters (and the optimizer state) in float32:

    compute_params = jax.tree.map(lambda p: p.astype(jnp.bfloat16), params)   # inside the jitted step
    logits = model.apply(compute_params, x.astype(jnp.bfloat16)).astype(jnp.float32)
    # Flax: nn.Dense(..., dtype=jnp.bfloat16, param_dtype=jnp.float32); or the jmp library's policies

bfloat16 needs compute capability 8.0; on 7.x use float16 with loss scaling (jmp.DynamicLossScale). Keep
dimensions multiples of 8.""",
            docs=(L.JAX_MATMUL_PRECISION, L.NVIDIA_MIXED_PRECISION)),
    ),
    "fusion.elementwise_kernels": Entry(
        category="fusion",
        title="Many small element-wise kernels that XLA could fuse",
        fix_summary="Compile the step with XLA: @tf.function(jit_compile=True) (Keras: compile(jit_compile=True)).",
        fix="""\
Most GPU kernels are separate element-wise operations (casts, adds, activations, dropout), each reading
and writing memory and costing a launch. XLA fuses chains of them into a few kernels:

    @tf.function(jit_compile=True)
    def train_step(x, y): ...
    # Keras: model.compile(..., jit_compile=True)
    # or for the whole program: TF_XLA_FLAGS=--tf_xla_auto_jit=2 python train.py

Check the next profile: kernel names become fusion_* / loop_* and their count per step drops.""",
        docs=(L.TF_XLA,),
        jax=Idiom(
            fix_summary="jax.jit the whole training step (model, loss, gradients and optimizer update).",
            fix="""\
Most GPU kernels are separate element-wise operations, each reading and writing memory and costing a
launch. Under jax.jit XLA fuses them; make sure the whole step is one jitted function:

    @jax.jit
    def train_step(state, batch):
        loss, grads = jax.value_and_grad(loss_fn)(state.params, batch)
        return state.apply_gradients(grads=grads), loss

Check the next profile: kernel names become fusion_* / loop_* and their count per step drops.""",
            docs=(L.JAX_JIT,)),
        variants=(("xla_blocked", Idiom(
            fix_summary="Move the ops XLA cannot compile out of the step (into tf.data), then jit_compile=True.",
            fix="""\
Most GPU kernels are separate element-wise operations that XLA would fuse, but the step also runs ops XLA
cannot compile (named above): @tf.function(jit_compile=True) on this step would fail. Move those ops out
of the step first, usually into the input pipeline, then compile the step:

    ds = ds.map(tokenize_or_py_fn, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)

    @tf.function(jit_compile=True)       # now only tensor math inside
    def train_step(x, y): ...

If some of them must stay, compile only the model part: wrap the model call and loss in a
tf.function(jit_compile=True) helper and keep the string/Python ops outside it.""",
            docs=(L.TF_XLA, L.TF_DATA_PERFORMANCE))),),
    ),
    "launch.gpu_starved_by_launches": Entry(
        category="launch",
        title="The GPU idles while kernels are being launched",
        fix_summary="Launch fewer, larger kernels: XLA jit_compile=True, steps_per_execution, larger batch.",
        fix="""\
Between kernels the GPU waits for the host to launch the next one. Fewer, bigger kernels fix it:

    @tf.function(jit_compile=True)        # XLA fuses kernels, so fewer launches per step
    def train_step(x, y): ...
    model.compile(..., jit_compile=True, steps_per_execution=32)   # Keras

A custom loop can run several steps per call: loop over N batches inside one tf.function.""",
        docs=(L.TF_GPU_PERFORMANCE, L.TF_XLA),
        jax=Idiom(
            fix_summary="jax.jit the entire step so it runs as one compiled program; scan over micro-batches.",
            fix="""\
Between kernels the GPU waits for the host to launch the next one. Run the whole step as one compiled
program (not op by op, not several small jitted functions called from Python):

    train_step = jax.jit(train_step, donate_argnums=0)   # one dispatch per step

XLA can replay the compiled step's kernels as command buffers (CUDA graphs on NVIDIA, HIP graphs on ROCm;
see XLA_FLAGS=--xla_gpu_enable_command_buffer), and jax.lax.scan over several micro-batches runs more work
per dispatch.""",
            docs=(L.JAX_JIT, L.JAX_GPU_TIPS, L.CUDA_GRAPHS)),
        variants=(("xla_blocked", Idiom(
            fix_summary="Launch less often: steps_per_execution, gpu_private threads; XLA after moving out "
                        "string ops.",
            fix="""\
Between kernels the GPU waits for the host to launch the next one. The step runs ops XLA cannot compile
(named above), so jit_compile=True would fail on it as it is. First cut per-step host overhead:

    model.compile(..., steps_per_execution=32)                  # Keras: many steps per call
    TF_GPU_THREAD_MODE=gpu_private TF_GPU_THREAD_COUNT=2 python train.py   # dedicated launch threads

then move the string/Python ops into tf.data (ds.map(..., num_parallel_calls=tf.data.AUTOTUNE)) and
compile the remaining step with @tf.function(jit_compile=True) so XLA fuses kernels.""",
            docs=(L.TF_GPU_PERFORMANCE, L.TF_XLA))),
                  ("xla_in_use", Idiom(
            fix_summary="XLA is in use already: run several steps per call, larger batch, XLA command buffers.",
            fix="""\
Between kernels the GPU waits for the host to launch the next one, and the step is already compiled with
XLA (its kernels are fusions). What is left is fewer launches per example:

    model.compile(..., steps_per_execution=32)      # Keras: many steps per call
    XLA_FLAGS=--xla_gpu_enable_command_buffer=FUSION,CUBLAS,CUDNN python train.py   # replay as CUDA graphs

a larger batch (more work per kernel), and, if tf.data shares the CPU with the launch threads,
TF_GPU_THREAD_MODE=gpu_private.""",
            docs=(L.TF_GPU_PERFORMANCE, L.CUDA_GRAPHS)))),
    ),
    "launch.tiny_kernels": Entry(
        category="launch",
        title="Kernels run shorter than it takes to launch them",
        fix_summary="Fuse tiny kernels (XLA jit_compile=True) or do more work per kernel (larger batch).",
        fix="""\
Most kernels finish sooner than the host needs to launch them, so the GPU runs in short bursts with gaps in
between. Make each launch do more:

    @tf.function(jit_compile=True)
    def train_step(x, y): ...
    ds = ds.batch(2 * BATCH)             # more work per kernel, if memory allows

Avoid Python-side loops over small tensors inside the step (vectorize them: tf.vectorized_map, batched
ops).""",
        docs=(L.TF_GPU_PERFORMANCE, L.TF_XLA),
        jax=Idiom(
            fix_summary="jax.jit the whole step; jax.vmap / jax.lax.scan instead of Python loops; larger batch.",
            fix="""\
Most kernels finish sooner than the host needs to launch them, so the GPU runs in short bursts with gaps in
between. Make each dispatch do more: jax.jit the whole step (XLA fuses small ops), replace Python loops
over small arrays with jax.vmap or jax.lax.scan, and raise the batch if memory allows.""",
            docs=(L.JAX_JIT, L.JAX_GPU_TIPS)),
        variants=(("xla_blocked", Idiom(
            fix_summary="Do more work per kernel (larger batch, vectorized ops); XLA after moving out string "
                        "ops.",
            fix="""\
Most kernels finish sooner than the host needs to launch them. The step runs ops XLA cannot compile (named
above), so jit_compile=True would fail on it as it is. Make each launch do more:

    ds = ds.batch(2 * BATCH)             # more work per kernel, if memory allows

vectorize Python-side loops (tf.vectorized_map, batched ops), and move the string/Python ops into
tf.data so the rest of the step can be compiled with @tf.function(jit_compile=True).""",
            docs=(L.TF_GPU_PERFORMANCE, L.TF_XLA))),
                  ("xla_in_use", Idiom(
            fix_summary="XLA is in use already: do more work per kernel (larger batch, vectorized loops).",
            fix="""\
Most kernels finish sooner than the host needs to launch them, and the step is already compiled with XLA.
Make each kernel do more: a larger batch (ds.batch(2 * BATCH), if memory allows), vectorized instead of
Python-unrolled loops (tf.vectorized_map, tf.while_loop over batched tensors), and several steps per call
(Keras steps_per_execution).""",
            docs=(L.TF_GPU_PERFORMANCE,)))),
    ),
    "occupancy.low_occupancy": Entry(
        category="occupancy",
        title="Time-dominant kernels run at low occupancy",
        fix_summary="Raise occupancy of the named kernels (registers, shared memory or block size).",
        fix="""\
These kernels keep few warps resident per SM, so the SM cannot hide memory latency. The limiter is in the
evidence:
- registers: for your own CUDA/Triton kernels cap them (__launch_bounds__(threads, minBlocks) or
  -maxrregcount; Triton: smaller BLOCK sizes / num_warps);
- shared memory: use smaller tiles or fewer pipeline stages;
- block size: launch blocks of 128-256 threads so more warps fit per SM.
For framework kernels you do not own, change what they are given: larger batch or hidden sizes, fused
ops (XLA compilation of the step), a different layout (channels_last for convolutions). cuBLAS/cuDNN GEMMs are excluded: they trade occupancy for large tiles by design.""",
        docs=(L.CUDA_OCCUPANCY, L.NVIDIA_DL_PERFORMANCE),
    ),
    "occupancy.tiny_grid": Entry(
        category="occupancy",
        title="Time-dominant kernels launch fewer blocks than the GPU has SMs",
        fix_summary="Give these kernels more parallel work (larger batch, fused ops) so every SM is used.",
        fix="""\
These kernels launch fewer thread blocks than the GPU has SMs, so most SMs sit idle while they run. Give
them more parallel work: a larger batch, larger tensors per op (fuse small ops with XLA), or, for your own
kernels, split the work into more, smaller blocks (grid-stride loops, split-K for GEMMs).""",
        docs=(L.NVIDIA_DL_PERFORMANCE, L.CUDA_OCCUPANCY),
    ),
}
