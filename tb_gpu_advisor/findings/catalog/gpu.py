"""Catalog entries of the GPU-side findings: batch size, precision, fusion, launch overhead, occupancy."""

from tb_gpu_advisor.findings.catalog import Entry
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
model.compile(..., steps_per_execution=N) also cuts per-step overhead. JAX: raise the batch passed to the
jitted step the same way. The estimate is per example (throughput), for a doubled batch.""",
        docs=(L.TF_GPU_PERFORMANCE, L.NVIDIA_DL_PERFORMANCE),
    ),
    "precision.fp32_matmul": Entry(
        category="precision",
        title="Matrix math runs in 32-bit on a Tensor Core GPU",
        fix_summary="Enable mixed precision: tf.keras.mixed_precision.set_global_policy('mixed_float16').",
        fix="""\
Matrix multiplies and convolutions run as 32-bit kernels that do not use Tensor Cores. Compute in 16 bits
and keep variables in 32 bits:

    tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")  # Ampere (cc 8.0) and newer
    tf.keras.mixed_precision.set_global_policy("mixed_float16")   # Volta/Turing (cc 7.x)
    # keep the final softmax/logits in float32: layers.Activation("softmax", dtype="float32")
    # custom loops with float16: optimizer = tf.keras.mixed_precision.LossScaleOptimizer(optimizer)

Keep layer sizes (units, channels, batch) multiples of 8 so Tensor Cores apply. JAX: cast parameters and
inputs to jnp.bfloat16 (params = jax.tree.map(lambda p: p.astype(jnp.bfloat16), params)), or at least
allow TF32 with jax.config.update("jax_default_matmul_precision", "tensorfloat32").""",
        docs=(L.TF_MIXED_PRECISION, L.NVIDIA_MIXED_PRECISION, L.JAX_MATMUL_PRECISION),
    ),
    "fusion.elementwise_kernels": Entry(
        category="fusion",
        title="Many small element-wise kernels that XLA could fuse",
        fix_summary="Compile the step with XLA: @tf.function(jit_compile=True) (JAX: jax.jit the whole step).",
        fix="""\
Most GPU kernels are separate element-wise operations (casts, adds, activations, dropout), each reading
and writing memory and costing a launch. XLA fuses chains of them into a few kernels:

    @tf.function(jit_compile=True)
    def train_step(x, y): ...
    # Keras: model.compile(..., jit_compile=True)
    # or for the whole program: TF_XLA_FLAGS=--tf_xla_auto_jit=2 python train.py

Check the next profile: kernel names become fusion_* / loop_* and their count per step drops. JAX: wrap
the whole training step in jax.jit (not just the model call), so the optimizer update is fused too.""",
        docs=(L.TF_XLA, L.JAX_JIT),
    ),
    "launch.gpu_starved_by_launches": Entry(
        category="launch",
        title="The GPU idles while kernels are being launched",
        fix_summary="Launch fewer, larger kernels: XLA jit_compile=True, larger batch, CUDA graphs.",
        fix="""\
Between kernels the GPU waits for the host to launch the next one. Fewer, bigger kernels fix it:

    @tf.function(jit_compile=True)        # XLA fuses kernels, so fewer launches per step
    def train_step(x, y): ...
    model.compile(..., jit_compile=True, steps_per_execution=32)   # Keras

If tf.data also runs on this host, give the GPU its own launch threads (before TensorFlow starts):

    TF_GPU_THREAD_MODE=gpu_private TF_GPU_THREAD_COUNT=2 python train.py

JAX: jit the entire step (one launch of a compiled program); recent XLA versions can also replay it as
CUDA graphs (see the XLA flag --xla_gpu_enable_command_buffer).""",
        docs=(L.TF_GPU_PERFORMANCE, L.TF_XLA, L.CUDA_GRAPHS, L.JAX_GPU_TIPS),
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
ops). JAX: jax.jit the whole step and use jax.vmap / jax.lax.scan instead of Python loops.""",
        docs=(L.TF_GPU_PERFORMANCE, L.TF_XLA, L.JAX_JIT),
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
ops (jit_compile=True), a different layout (channels_last for convolutions). cuBLAS/cuDNN GEMMs are
excluded: they trade occupancy for large tiles by design.""",
        docs=(L.CUDA_OCCUPANCY, L.NVIDIA_DL_PERFORMANCE),
    ),
    "occupancy.tiny_grid": Entry(
        category="occupancy",
        title="Time-dominant kernels launch fewer blocks than the GPU has SMs",
        fix_summary="Give these kernels more parallel work (larger batch, fused ops) so every SM is used.",
        fix="""\
These kernels launch fewer thread blocks than the GPU has SMs, so most SMs sit idle while they run. Give
them more parallel work: a larger batch, larger tensors per op (fuse small ops with jit_compile=True), or,
for your own kernels, split the work into more, smaller blocks (grid-stride loops, split-K for GEMMs).""",
        docs=(L.NVIDIA_DL_PERFORMANCE, L.CUDA_OCCUPANCY),
    ),
    "kernel.gemm_below_roof": Entry(
        category="kernel",
        title="Time-dominant GEMMs run far below the GPU's matrix roof",
        fix_summary="Pad GEMM dimensions to multiples of 8 (16-bit) / 64, raise the batch, and compute in bf16.",
        fix="""\
These matrix multiplies reach a small share of the roof that binds them (the dense matrix peak, or HBM
bandwidth for their FLOPs per byte), and their shapes or precision explain it:
- dimensions that are not multiples of 8 (16-bit; 4 for f32, 16 for 8-bit) keep cuBLAS/hipBLASLt off the
  Tensor Core / matrix-core fast paths or force padding inside the kernel: pad hidden sizes, vocabulary and
  head dims to multiples of 64 (128 is better still):
      vocab_size = (vocab_size + 63) // 64 * 64     # pad, mask the extra logits
- small M or N (a small batch or sequence) fills only part of the GPU's tiles and SMs: raise the batch per
  GPU, or concatenate small GEMMs (batch the heads, fuse QKV projections into one matmul);
- f32 inputs run at the TF32 rate at best: compute in bf16 (keep f32 master weights):
      JAX:   params_bf16 = jax.tree.map(lambda p: p.astype(jnp.bfloat16), params)
      Keras: tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")
The estimate assumes each GEMM reaches 70% of its roof once reshaped; roofs are upper bounds at boost clock.""",
        docs=(L.NVIDIA_MATMUL_PERFORMANCE, L.NVIDIA_DL_PERFORMANCE),
    ),
}
