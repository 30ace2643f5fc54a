"""The launch family's catalog words: titles, explanations and fixes of its findings."""

from __future__ import annotations

from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Entry, Idiom, register
from tb_gpu_advisor.findings.compiled import (
    GRAPHS_LAUNCH_IDIOM,
    JITTED_LAUNCH_IDIOM,
    TF_GRAPHS_LAUNCH_IDIOM,
    XLA_GRAPHS_LAUNCH_IDIOM,
)


# Launch time measured during warm-up is mostly first-use setup; the framework-specific fix comes after.
WARMUP_IDIOM = Idiom(
    fix_summary="Recapture after warm-up: this launch time includes first-use setup (module loading).",
    fix="""\
Warm-up is inside this capture (see the trace confidence): a kernel's first launch loads its module and the
first calls create the context and streams, taking milliseconds where a warm launch takes microseconds.
Profile steady-state steps before changing code:

    TensorFlow/Keras: TensorBoard(log_dir, profile_batch=(10, 19))
    JAX: jax.profiler.start_trace(logdir) after the first steps have compiled
    PyTorch: torch.profiler.profile(schedule=torch.profiler.schedule(wait=5, warmup=2, active=10))

If launch time is still large there, launch fewer kernels: compile the step (XLA jit_compile=True, jax.jit,
torch.compile) and replay it as a graph (torch.compile(mode="reduce-overhead") records
CUDA graphs on NVIDIA, HIP graphs on ROCm).""",
    docs=(L.CUDA_GRAPHS,),
)

ENTRIES = register(
    "launch",
    {
        "launch.per_tensor_optimizer": Entry(
            category="launch",
            title="The optimizer updates each parameter with its own small kernels",
            fix_summary="Keep the optimizer class and pass fused=True (Adam, AdamW, SGD, Adagrad) or foreach=True.",
            fix="""\
The optimizer step runs a Python loop over the parameters: each update is several small element-wise kernels
(add_, mul_, addcmul_, addcdiv_, sqrt...) per parameter, each with its own launch. The multi-tensor
implementations of the same optimizer (same class, same math) update all parameters in a few kernels:

    optimizer = torch.optim.Adam(model.parameters(), lr=lr, fused=True)    # one fused kernel per group
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, foreach=True)  # multi-tensor kernels

(the default is foreach when every parameter is on the GPU; foreach=False, a custom optimizer or
parameters on several devices give the per-tensor loop). Custom optimizers: use torch._foreach_* ops.""",
            docs=(L.TORCH_TUNING,),
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
                docs=(L.JAX_JIT, L.JAX_GPU_TIPS, L.CUDA_GRAPHS),
            ),
            variants=(
                (
                    "xla_blocked",
                    Idiom(
                        fix_summary="Launch less often: steps_per_execution, gpu_private threads; XLA after moving out "
                        "string ops.",
                        fix="""\
Between kernels the GPU waits for the host to launch the next one. The step runs ops XLA cannot compile
(named above), so jit_compile=True would fail on it as it is. First cut per-step host overhead:

    model.compile(..., steps_per_execution=32)                  # Keras: many steps per call
    TF_GPU_THREAD_MODE=gpu_private TF_GPU_THREAD_COUNT=2 python train.py   # dedicated launch threads

then move the string/Python ops into tf.data (ds.map(..., num_parallel_calls=tf.data.AUTOTUNE)) and
compile the remaining step with @tf.function(jit_compile=True) so XLA fuses kernels.""",
                        docs=(L.TF_GPU_PERFORMANCE, L.TF_XLA),
                    ),
                ),
                (
                    "xla_in_use",
                    Idiom(
                        fix_summary="XLA is in use already: run several steps per call, larger batch, XLA command buffers.",
                        fix="""\
Between kernels the GPU waits for the host to launch the next one, and the step is already compiled with
XLA (its kernels are fusions). What is left is fewer launches per example:

    model.compile(..., steps_per_execution=32)      # Keras: many steps per call
    XLA_FLAGS=--xla_gpu_enable_command_buffer=FUSION,CUBLAS,CUDNN python train.py   # replay as CUDA graphs

a larger batch (more work per kernel), and, if tf.data shares the CPU with the launch threads,
TF_GPU_THREAD_MODE=gpu_private.""",
                        docs=(L.TF_GPU_PERFORMANCE, L.CUDA_GRAPHS),
                    ),
                ),
                (
                    "jax:jitted",
                    Idiom(
                        fix_summary="The step is jitted already: more work per dispatch (lax.scan, larger batch), command "
                        "buffers.",
                        fix="""\
Between kernels the GPU waits for the host to launch the next one, and the step is jitted already (a few
dispatches per step), so jax.jit is not the fix. What is left is fewer launches per example:

    XLA_FLAGS=--xla_gpu_enable_command_buffer=FUSION,CUBLAS,CUDNN python train.py   # replay as CUDA graphs

(on by default in recent JAX: cuGraphLaunch events in the trace say it is in use, and then the graph
launch itself is what the GPU waits for), jax.lax.scan over several micro-batches inside the jitted step,
and a larger batch: more work for each launch.""",
                        docs=(L.JAX_GPU_TIPS, L.CUDA_GRAPHS),
                    ),
                ),
                ("any:warmup", WARMUP_IDIOM),
                ("pytorch:graphs", GRAPHS_LAUNCH_IDIOM),
                ("jax:graphs", XLA_GRAPHS_LAUNCH_IDIOM),
                ("graphs", TF_GRAPHS_LAUNCH_IDIOM),
            ),
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
                docs=(L.JAX_JIT, L.JAX_GPU_TIPS),
            ),
            variants=(
                (
                    "xla_blocked",
                    Idiom(
                        fix_summary="Do more work per kernel (larger batch, vectorized ops); XLA after moving out string "
                        "ops.",
                        fix="""\
Most kernels finish sooner than the host needs to launch them. The step runs ops XLA cannot compile (named
above), so jit_compile=True would fail on it as it is. Make each launch do more:

    ds = ds.batch(2 * BATCH)             # more work per kernel, if memory allows

vectorize Python-side loops (tf.vectorized_map, batched ops), and move the string/Python ops into
tf.data so the rest of the step can be compiled with @tf.function(jit_compile=True).""",
                        docs=(L.TF_GPU_PERFORMANCE, L.TF_XLA),
                    ),
                ),
                ("jax:jitted", JITTED_LAUNCH_IDIOM),
                (
                    "xla_in_use",
                    Idiom(
                        fix_summary="XLA is in use already: do more work per kernel (larger batch, vectorized loops).",
                        fix="""\
Most kernels finish sooner than the host needs to launch them, and the step is already compiled with XLA.
Make each kernel do more: a larger batch (ds.batch(2 * BATCH), if memory allows), vectorized instead of
Python-unrolled loops (tf.vectorized_map, tf.while_loop over batched tensors), and several steps per call
(Keras steps_per_execution).""",
                        docs=(L.TF_GPU_PERFORMANCE,),
                    ),
                ),
            ),
        ),
    },
)
