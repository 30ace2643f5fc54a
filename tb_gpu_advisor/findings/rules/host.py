"""Host findings: host work while the GPU idles, eager ops, retracing, Python functions, GC pauses, the
thread feeding the device blocked on other threads."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.analysis.step_ops import STEP_OP_MAX_CALLS_PER_STEP, is_producer_event
from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Entry, Idiom, register
from tb_gpu_advisor.findings.compiled import COMPILED_FUSED_OPTIMIZER_HOST_IDIOM, COMPILED_HOST_IDIOM, host_condition
from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import Evidence, Finding, estimated, grade, ladder, limit
from tb_gpu_advisor.findings.rules.host_stalls import STALL_ENTRIES, stall_finding
from tb_gpu_advisor.findings.host_time import HOST_OPS_LISTED, host_critical_ms, op_rows
from tb_gpu_advisor.findings.thresholds import (
    EAGER_MIN_OPS_PER_STEP,
    EAGER_MIN_PCT,
    FEEDER_PRODUCER_BUSY_SHARE,
    GC_MIN_PCT,
    HOST_HIGH_PCT,
    HOST_MEDIUM_PCT,
    INPUT_HIGH_PCT,
    INPUT_MEDIUM_PCT,
    MODELED_LOW_PCT,
    MODELED_MEDIUM_PCT,
    RETRACE_MIN_VARIANTS,
)
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.host import TF_DATA_PY_FUNCTION_TAG, TF_DECODE_OPS, TF_FILE_READ_OPS
from tb_gpu_advisor.model.waits import PRODUCER_KINDS, WAIT_KIND_TEXT
from tb_gpu_advisor.report.units import duration_ms
from tb_gpu_advisor.whatif.estimate import bound as whatif_bound
from tb_gpu_advisor.vocabulary import listed
from tb_gpu_advisor.whatif.dispatch import (
    call_overhead_ms,
    compiled_step,
    eager_op_work_ms,
    jit_fused_work_ms,
    kept_with_fused_ms,
)

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.findings.context import Context


FEEDER_STEPS_LISTED = 100  # host.feeder_blocked's pointers.per_step_ms: the first steps only

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
            pytorch=Idiom(
                fix_summary="Take Python work off the step: torch.compile, no per-step host syncs, DataLoader workers.",
                fix="""\
Part of every step the GPU has nothing to do while the host runs Python. Cut per-step host work:

    model = torch.compile(model)             # fewer Python-level op dispatches
    if step % 100 == 0:
        print(loss.item())                   # read values rarely: .item() waits for the GPU

Move data preparation into DataLoader workers (num_workers > 0) and keep logging and metric reads out of
the step. The evidence lists the host events that took the most time.""",
                docs=(L.TORCH_PERFORMANCE, L.TORCH_COMPILE),
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


# Host events that wrap others or mark steps: not "what the host did".
_WRAPPERS = re.compile(
    r"^(ExecutorState::Process|EagerExecute|EagerKernelExecute|EagerLocalExecute|"
    r"KernelAndDeviceFunc|TFE_Py|FunctionRun|ExecutorDoneCallback|ExecutorPropagateOutputs|"
    r"IteratorGetNext|Iterator::|train$|test$|TraceContext|Profiled batch|\$)"
)


_EAGER_OP = re.compile(
    r"^EagerLocalExecute: (?!__inference_|__forward_|__backward_|StatefulPartitionedCall|"
    r"PartitionedCall)(.+)$"
)


_FILE_OPS = TF_FILE_READ_OPS | TF_DECODE_OPS


_FUNCTION_CALL = re.compile(r"^EagerLocalExecute: __inference_(.+)_(\d+)$")


_PY_FUNCTION_TYPES = {"EagerPyFunc", "PyFunc", "PyFuncStateless"}


def _op_type(name):
    return name.rpartition(":")[2]


def _top_host_ops(ctx, limit_count=HOST_OPS_LISTED):
    """The ops that block the step, most time first: the step's own TensorFlow ops (a few calls per step), then
    other host events; never wrappers, step markers, driver calls or tf.data's background producers."""
    step = [(op.name, op.count, op.total_ps) for op in ctx.step_ops.step_ops]
    if len(step) >= limit_count:
        return op_rows(step[:limit_count])
    device_names = {name for gpu in ctx.model.gpus for name in gpu.activity.names}
    per_element = {op.name for op in ctx.step_ops.per_element_ops}
    listed = {name for name, _, _ in step}
    others = ctx.host_ops(
        lambda name: (
            bool(name)
            and not _WRAPPERS.match(name)
            and name not in device_names
            and not name.startswith(("Memcpy", "Memset", "cu"))
            and not is_producer_event(name)
            and name not in per_element
            and name not in listed
        )
    )
    return op_rows((step + others)[:limit_count])


def gpu_idle_host_busy(ctx: Context) -> Finding | None:
    """Every GPU idles while host threads run (not input wait, not launch calls): XProf's "All Others"."""
    if not ctx.has_gpu or not ctx.model.has_host_plane:
        return None
    # The idle attribution's `host`: the host was late with the work that ended the gap and ran traced host
    # work meanwhile, not a wait on the device, an input wait or a launch call. Host time a more specific finding
    # explains (batch preparation, CPU-placed ops) is left to it.
    host_ms = ctx.idle_cause_ms("host", ctx.explained_host_time)
    idle_host = intervals.subtract(ctx.idle_spans("host"), ctx.explained_host_time)
    share = ctx.share_pct(host_ms)
    severity = grade(share, HOST_HIGH_PCT, HOST_MEDIUM_PCT)
    if severity is None:
        return None
    wait_ms = ctx.idle_cause_ms("host_wait")
    condition, note = ctx.xla_blocked()
    if ctx.jax_step_jitted:
        condition = "jitted"
    if ctx.confidence.warmup:
        condition, note = "warmup", ""
    elif condition is None:
        condition, note = host_condition(ctx)
    condition = ctx.with_optimizer_fused(condition)
    if ctx.framework.name == "pytorch":
        note = " ".join(part for part in (note, *_named_host_work(ctx)) if part)
    return Finding(
        id="host.gpu_idle_host_busy",
        severity=severity,
        summary=f"The GPU idles {share:.1f}% {ctx.of_the_step} while the host runs runtime or Python work "
        f"({ctx.time_text(host_ms)}).",
        evidence=Evidence(
            {
                "host_exposed_pct": share,
                "host_exposed_ms": round(host_ms, 3),
                "host_exposed_ms_per_step": ctx.per_step_ms(host_ms),
                "host_wait_exposed_pct": ctx.share_pct(wait_ms),
            },
            ladder("host_exposed_pct", share, HOST_HIGH_PCT, HOST_MEDIUM_PCT),
            {
                "host_ops": _top_host_ops(ctx),
                "time_ranges_ms": ctx.longest_ranges_ms(idle_host),
                "steps": ctx.steps_overlapping(idle_host),
                "xla_incompatible_ops": list(ctx.step_ops.xla_blockers) if condition == "xla_blocked" else [],
            },
        ),
        recoverable_ms=host_ms,
        window_ms=ctx.window_ms,
        speedup_basis="upper bound: the step time if the GPU never idled while the host ran late work (waits "
        "on the device, input waits and launch calls not counted)",
        condition=condition,
        fix_note=note,
    )


# DDP's buffer (and parameter) sync each forward: it flattens the tensors, broadcasts them from rank 0 and copies
# them back; the host ops named by the trace.
_DDP_SYNC_OPS = ("aten::flatten_dense_tensors", "aten::unflatten_dense_tensors")
_BROADCAST_OPS = ("c10d::broadcast_", "nccl:broadcast", "gloo:broadcast")
_FUSED_OPTIMIZER_CLASSES = frozenset({"Adam", "AdamW", "SGD", "Adagrad"})


def _named_host_work(ctx):
    """Sentences naming PyTorch host work the trace shows in the step, each with its fix: DDP's per-forward buffer
    broadcast and a foreach optimizer whose host time dwarfs its kernels. Named when it takes at least
    MODELED_LOW_PCT of the step."""
    steps = ctx.step_count or 1
    found = []
    sync_ps = sum(ctx.host.op_totals.get(name, (0, 0))[1] for name in _DDP_SYNC_OPS)
    broadcasts = max(ctx.host.op_totals.get(name, (0, 0))[0] for name in _BROADCAST_OPS)  # one call, several names
    if sync_ps and broadcasts and ctx.share_pct(ms(sync_ps)) >= MODELED_LOW_PCT:
        found.append(
            f"DistributedDataParallel broadcasts module buffers every forward (flatten/unflatten_dense_tensors "
            f"{ms(sync_ps) / steps:.2f} ms per step beside {broadcasts / steps:g} broadcasts): if the buffers "
            "(e.g. BatchNorm running statistics) need no sync between ranks, DistributedDataParallel(model, ..., "
            "broadcast_buffers=False) removes it (or SyncBatchNorm where they must agree)."
        )
    loop = ctx.analysis.optimizer_loop
    names = ctx.host.op_totals
    foreach_only = any("_foreach_" in name for name in names) and not any("_fused_" in name for name in names)
    if loop is not None and loop.steps and foreach_only and loop.host_ps > 2 * loop.device_ps:
        host_ms = ms(loop.host_ps) / loop.steps
        if ctx.share_pct(ms(loop.host_ps)) >= MODELED_LOW_PCT:
            cls = loop.optimizer_class
            fused = (
                f"torch.optim.{cls}(..., fused=True)" + (" (PyTorch 2.4+)" if cls in ("SGD", "Adagrad") else "")
                if cls in _FUSED_OPTIMIZER_CLASSES
                else "the fused form of the optimizer where it has one"
            )
            found.append(
                f"The optimizer step (foreach, {cls or 'its class not named'}) takes {host_ms:.2f} ms per step on "
                f"the host for {ms(loop.device_ps) / loop.steps:.2f} ms of GPU work: {fused}, or compile the "
                "optimizer step (torch.compile of a function calling optimizer.step())."
            )
    return found


# The runtime's execution of one eagerly dispatched op (TensorFlow) or one dispatched computation (JAX's PjRt):
# what an op costs besides Python. Compiled, the ops still run; the Python between them goes.
_TF_OP_RUNS = ("KernelAndDeviceFunc::Run", "KernelAndDeviceOp::Run")
JAX_EXECUTIONS = "CommonPjRtLoadedExecutable::ExecuteHelperOnSingleDevice"
# Host threads on which XLA's CPU client runs the compiled computations (their thunks are the ops' work).
_XLA_CPU_THREADS = ("XLAPjRtCpuClient", "XLAEigen")


@dataclass(frozen=True)
class _CompiledWork:
    """What compiling an op-by-op step keeps: `kept_ms` of work, which `what_kept` (the estimate's words) and
    `kept_label` (the summary's) name; `fused_ms` the JAX work jit fuses away (None where not modelled),
    `fused_label` its words in the summary, `removed` the estimate's clause on what is removed."""

    kept_ms: float
    what_kept: str
    kept_label: str
    fused_ms: float | None = None
    fused_label: str = ""
    removed: str = "the Python dispatch between ops is removed"


def _dispatched_ops(ctx):
    """(ops [(name, count, ps)], dispatched op count, their calls' ps, is JAX) of op-by-op execution:
    TensorFlow's eager ops, or JAX computations executed one jnp op at a time; None when neither is seen."""
    # Eager file reads and image decodes are a loop's batch preparation (input.host_batch_prep), not its step.
    ops = ctx.host_ops(lambda name: bool(_EAGER_OP.match(name)) and name.partition(": ")[2] not in _FILE_OPS)
    if ops:
        return ops, sum(c for _, c, _ in ops), sum(t for _, _, t in ops), False
    if not ctx.framework.is_jax:
        return None
    executions = ctx.host.op_totals.get(JAX_EXECUTIONS, (0, 0))[0]
    calls = ctx.host_ops(lambda name: name.startswith("PjitFunction("))
    if not executions or not calls:
        return None
    return calls, executions, sum(t for _, _, t in calls), True


def _compiled_work(ctx, is_jax):
    """_CompiledWork of the step compiled: TensorFlow's eager ops keep their kernel runs less the runtime's cost
    per op; JAX's computations keep their work on XLA's CPU threads less the thunks jit fuses, plus one call."""
    if not is_jax:
        runs = [name for name in _TF_OP_RUNS if name in ctx.host.op_totals]
        count = sum(ctx.host.op_totals[name][0] for name in runs)
        total = ms(sum(ctx.host.op_totals[name][1] for name in runs))
        shortest = min((ctx.host.op_shortest_ps.get(name, 0) for name in runs), default=0) / 1e9
        return _CompiledWork(
            eager_op_work_ms(total, count, shortest),
            f"each op's kernel run less the eager runtime's cost per op, taken as the shortest op "
            f"run in the trace ({shortest * 1000:.3g} µs)",
            "the ops' own work",
        )
    executions, executions_ps = ctx.host.op_totals[JAX_EXECUTIONS]
    compute = ms(
        sum(
            busy
            for kind, (_, busy) in ctx.host.thread_busy.items()
            if any(thread in kind for thread in _XLA_CPU_THREADS)
        )
    )
    per_call = call_overhead_ms(ms(executions_ps), executions, compute)
    steps = max(1, ctx.step_count)
    call_text = f"one call per step ({per_call * 1000:.3g} µs: the executions' time less their work, per execution)"
    thunks = ctx.xla_cpu_thunks
    if not thunks.classified:
        unmatched = (
            (" (the trace carries no HLO of these computations, so what jit's fusion saves is not counted)")
            if compute > 0
            else ""
        )
        return _CompiledWork(
            compute + per_call * steps,
            f"the computations' work on XLA's CPU threads{unmatched} plus {call_text}",
            "the computations' own work and one call per step",
        )
    fused = min(compute, ms(thunks.fusible_ps))
    named = ", ".join(thunks.fusible[:3]) + (", ..." if len(thunks.fusible) > 3 else "")
    return _CompiledWork(
        jit_fused_work_ms(compute, fused) + per_call * steps,
        f"the computations' work on XLA's CPU threads other than element-wise and data movement (dots, "
        f"reductions and the rest) plus {call_text}",
        "the computations' work other than element-wise and data movement, and one call per step",
        fused_ms=fused,
        fused_label="the element-wise and data-movement thunks (fused)",
        removed=(
            f"the Python dispatch between ops is removed, and so are the {thunks.fusible_count} thunks that "
            f"ran element-wise or data-movement instructions alone ({fused:.3g} ms: {named}), counted as zero "
            "since jit fuses them into their neighbours"
        ),
    )


# Idle causes (analysis.idle_attribution) a compiled step keeps: the host waiting on the device or for input, or
# preparing its input, and the GPU waiting on its own queued work.
_KEPT_IDLE = ("host_wait", "host_stall", "input", "input_prep", "device_wait")


def eager_execution(ctx: Context) -> Finding | None:
    """Individual ops dispatched one by one, many per step, taking >10% of the time: TensorFlow's eager ops
    (`EagerLocalExecute: <Op>`) or JAX's jnp ops outside jit (a PjRt execution per op). The estimate compiles
    the step (whatif.dispatch.compiled_step)."""
    dispatched = _dispatched_ops(ctx)
    if dispatched is None:
        return None
    ops, count, dispatch_ps, is_jax = dispatched
    # JAX's dispatch events nest, so their sum can exceed the time they cover; they cover no untraced time.
    total_ms = min(ms(dispatch_ps), ctx.window_ms - ctx.category_ms("idle"))
    per_step = count / ctx.step_count if ctx.step_count else float(count)
    share = ctx.share_pct(total_ms)
    if per_step < EAGER_MIN_OPS_PER_STEP or share < EAGER_MIN_PCT:
        return None
    work = _compiled_work(ctx, is_jax)
    kept_ms = work.kept_ms
    # The Python between the ops runs outside any traced event: the breakdown's untraced (idle) time.
    between_ms = min(ctx.category_ms("idle"), ctx.window_ms - total_ms)
    critical = host_critical_ms(ctx) if ctx.has_gpu else total_ms
    recoverable = min(total_ms, critical) + between_ms
    together = ctx.share_pct(total_ms + between_ms)
    severity = grade(ctx.share_pct(recoverable), HOST_HIGH_PCT, HOST_MEDIUM_PCT, MODELED_LOW_PCT) or "low"
    device_ms = ms(ctx.in_window_ps(ctx.gpu_busy)) if ctx.has_gpu else 0.0
    # Compiling removes dispatch, not the GPU's idle while the host waits on it (a read of a result each step)
    # or for input, nor its waits on its own work: a compiled step keeps them with the device's busy time.
    waits_ms = sum(ctx.idle_cause_ms(cause) for cause in _KEPT_IDLE) if ctx.has_gpu else 0.0
    device_ms += waits_ms
    device_text = (
        "the device's busy time and its idle while the host waits on it or for input"
        if waits_ms > 0
        else "the device's busy time"
    )
    modeled = kept_ms > 0 or device_ms > 0
    if modeled:
        calls_text = f"their calls take {ctx.time_text(total_ms)} ({share:.1f}%)" + (
            f" and the untraced Python between them {ctx.time_text(between_ms)} ({ctx.share_pct(between_ms):.1f}%)"
            if between_ms > 0
            else ""
        )
        calls_text += f". {_compiled_text(ctx, work, device_ms, total_ms, between_ms, waits_ms > 0)}"
    elif between_ms > 0:
        calls_text = (
            f"their calls take {ctx.time_text(total_ms)} and the untraced Python between them "
            f"{ctx.time_text(between_ms)}, together {together:.1f}% {ctx.of_the_step_time}."
        )
    else:
        calls_text = f"their calls take {ctx.time_text(total_ms)}, {share:.1f}% {ctx.of_the_step_time}."
    metrics = {
        "eager_ops_per_step": round(per_step, 1),
        "eager_op_ms": total_ms,
        "eager_op_pct": share,
        "python_between_ops_ms": round(between_ms, 3),
        "dispatch_and_python_pct": together,
        "op_work_kept_ms": round(kept_ms, 3),
    }
    if work.fused_ms is not None:
        metrics["op_work_fused_ms"] = round(work.fused_ms, 3)
    finding = Finding(
        id="host.eager_execution",
        severity=severity,
        summary=f"{ctx.count_text(count, 'op')} run one at a time: {calls_text}",
        evidence=Evidence(
            metrics,
            limit("eager_op_pct", share, EAGER_MIN_PCT, min_ops_per_step=EAGER_MIN_OPS_PER_STEP),
            {"host_ops": op_rows(ops)},
        ),
        recoverable_ms=recoverable,
        window_ms=ctx.window_ms,
        speedup_basis="upper bound: eager dispatch and the Python between ops on the critical path removed",
    )
    if not modeled:
        return finding
    return estimated(
        finding,
        compiled_step(
            ctx.window_ms,
            kept_ms,
            device_ms,
            work.what_kept,
            work.removed,
            fused_ms=work.fused_ms,
            device_text=device_text,
        ),
    )


def _compiled_text(ctx, work, device_ms, calls_ms, between_ms, waits=False):
    """What the compiled-step model (whatif.dispatch.compiled_step) keeps and removes, in words whose shares give
    its estimate: the step keeps the _CompiledWork's `kept_label` or the GPU's busy time, whichever is longer; the
    rest goes."""
    kept_ms = work.kept_ms
    new_ms = max(kept_ms, device_ms)
    gpu = "the GPU's busy time and its idle while the host waits on it" if waits else "the GPU's busy time"
    kept = gpu if device_ms > kept_ms else f"only {work.kept_label}"
    steps = ctx.step_count or 1
    step = "step" if ctx.step_count else "profiled time"
    removed = ["the calls' dispatch", "the Python between them"] if between_ms > 0 else ["the calls' dispatch"]
    if work.fused_ms:
        removed.append(work.fused_label)
    if not ctx.has_gpu and ctx.share_pct(ctx.window_ms - calls_ms - between_ms) >= 0.5:
        removed.append("the rest of the host's work in the step")
    text = (
        f"Compiled, the step would keep {kept}: {duration_ms(round(new_ms / steps, 6))} of the "
        f"{duration_ms(ctx.window_ms / steps)} {step} ({ctx.share_pct(new_ms):.1f}%); "
        f"{_joined(removed)} {'is' if len(removed) == 1 else 'are'} removed."
    )
    if work.fused_ms:
        unfused_ms = kept_with_fused_ms(kept_ms, work.fused_ms, device_ms)
        text += (
            f" The fused thunks counted as zero are the optimistic part (a fused loop still computes; with "
            f"their time kept the step would keep {duration_ms(round(unfused_ms / steps, 6))}, "
            f"{ctx.share_pct(unfused_ms):.1f}%), the dots kept at their op-by-op time the pessimistic one."
        )
    return text


def _joined(parts):
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


def retracing(ctx):
    """A tf.function with several traced variants, or compilation inside a step other than the first."""
    variants = {}
    for name, _, _ in ctx.host_ops(lambda name: bool(_FUNCTION_CALL.match(name))):
        base = _FUNCTION_CALL.match(name).group(1)
        variants.setdefault(base, []).append(name)
    retraced = {base: names for base, names in variants.items() if len(names) >= RETRACE_MIN_VARIANTS}
    compile_spans = ctx.host.tagged.get("compile", intervals.EMPTY)
    later = ctx.step_set.steps[1:]
    late = (
        intervals.intersect(compile_spans, intervals.union([s.start_ps for s in later], [s.end_ps for s in later]))
        if later and len(compile_spans)
        else intervals.EMPTY
    )
    late_ms = ms(late.total_ps)
    if not retraced and late_ms <= 0:
        return None
    share = ctx.share_pct(late_ms)
    severity = grade(share, HOST_HIGH_PCT, HOST_MEDIUM_PCT) or "medium"
    what = (
        f"{len(retraced)} function(s) were traced more than once ({', '.join(sorted(retraced)[:3])})"
        if retraced
        else f"compilation ran inside {len(ctx.steps_overlapping(late, limit=100))} later step(s)"
    )
    return Finding(
        id="host.retracing",
        severity=severity,
        summary=f"{what[0].upper()}{what[1:]}; compile time inside later steps: {late_ms:.2f} ms.",
        evidence=Evidence(
            {
                "retraced_functions": len(retraced),
                "compile_ms_after_first_step": late_ms,
                "compile_pct_after_first_step": share,
            },
            limit(
                "function_variants",
                max((len(v) for v in retraced.values()), default=1),
                RETRACE_MIN_VARIANTS,
                compile_after_first_step_ms=0,
            ),
            {
                "functions": {base: sorted(names) for base, names in sorted(retraced.items())[:5]},
                "steps": ctx.steps_overlapping(late),
                "time_ranges_ms": ctx.longest_ranges_ms(late),
            },
        ),
        recoverable_ms=late_ms,
        window_ms=ctx.window_ms,
        speedup_basis="upper bound: compilation inside steps after the first removed (0 when the trace does not "
        "time the tracing)",
    )


def python_function(ctx: Context) -> Finding | None:
    """tf.py_function / tf.numpy_function calls; with tf.data they pace the pipeline the step waits on."""
    ops = ctx.host_ops(lambda name: _op_type(name) in _PY_FUNCTION_TYPES)
    if not ops:
        return None
    count = sum(c for _, c, _ in ops)
    total_ms = ms(sum(t for _, _, t in ops))
    waiting = ctx.pipeline_wait_ms if ctx.pipeline.in_use else 0.0
    # Run by a tf.data thread, the calls overlap the step except while it waits for input: removing them gains at
    # most that wait.
    in_tf_data = len(ctx.host.tagged.get(TF_DATA_PY_FUNCTION_TAG, intervals.EMPTY)) > 0
    calls = ctx.analysis.py_function_calls
    computes = calls is not None and calls.serialized is True
    unsized = in_tf_data and not computes
    if in_tf_data:
        recoverable = min(total_ms, waiting)
    elif ctx.has_gpu:
        recoverable = min(total_ms, waiting + host_critical_ms(ctx))
    else:
        recoverable = min(total_ms, max(waiting, ctx.category_ms("host")))
    share = ctx.share_pct(recoverable)
    severity = grade(share, HOST_HIGH_PCT, HOST_MEDIUM_PCT, MODELED_LOW_PCT)
    if severity is None:
        return None
    if unsized:
        # The trace does not show inside a PyFunc: a function that waits (I/O, sleep) is not sped up by TensorFlow
        # ops, one that computes is; the wait it paces is not work that goes away.
        severity, recoverable = min(severity, "medium", key=("low", "medium", "high").index), 0.0
    per_step = count / ctx.step_count if ctx.step_count else None
    wait_note = (
        f"the step waits for input {ctx.share_pct(waiting):.1f}% of the time"
        if waiting > 0
        else "the step does not wait for input"
    )
    if in_tf_data and per_step is not None and per_step <= STEP_OP_MAX_CALLS_PER_STEP:
        times = "once" if per_step <= 1.0 else f"{round(per_step, 1):g} times"
        where = f" ({times} per step, on a tf.data thread: a map function calls it per batch; {wait_note})"
    elif in_tf_data:
        where = f"; a tf.data map function calls it per element ({wait_note})"
    elif per_step is not None and per_step <= STEP_OP_MAX_CALLS_PER_STEP:
        times = "once" if per_step <= 1.0 else f"{round(per_step, 1):g} times"
        where = f" ({times} per step: it runs inside the training step, which waits for it)"
    elif waiting > 0:
        where = "; tf.data is in use and the step waits for it: its map function calls it per element"
    else:
        where = ""
    finding = Finding(
        id="host.python_function",
        severity=severity,
        summary=f"Python functions ({_py_function_apis(ops)}) ran {count:,} times, {total_ms / count:.2f} ms "
        f"each{where}.",
        evidence=Evidence(
            {
                "py_function_calls": count,
                "py_function_ms": total_ms,
                "py_function_ms_per_call": round(total_ms / count, 3),
                "py_function_calls_per_step": round(count / ctx.step_count, 1) if ctx.step_count else None,
                "map_threads_busy_cores": ctx.pipeline.map_concurrency,
                "input_wait_ms": round(waiting, 3),
                "py_function_in_tf_data": in_tf_data,
                **(
                    {}
                    if calls is None
                    else {
                        "py_function_alone_ms": calls.alone_ms,
                        "py_function_overlapped_ms": calls.overlapped_ms,
                        "py_function_overlapped_in_flight": calls.overlapped_in_flight,
                    }
                ),
                "recoverable_pct": share,
            },
            ladder("recoverable_pct", share, HOST_HIGH_PCT, HOST_MEDIUM_PCT, MODELED_LOW_PCT),
            {"host_ops": op_rows(ops)},
        ),
        recoverable_ms=recoverable,
        window_ms=ctx.window_ms,
        speedup_basis=(
            f"none: the input wait they pace ({ctx.share_pct(min(total_ms, waiting)):.1f}% of the step) is not "
            "their work: what TensorFlow ops in their place gain depends on what the function does, which the trace "
            "does not show inside a Python call (a function that waits on I/O or sleeps gains from parallel calls, "
            "one that computes under the GIL from TensorFlow ops)"
            if unsized
            else (
                "upper bound: the Python calls removed (replaced by TensorFlow ops or precomputed); they run in "
                f"tf.data, overlapped with the step, so at most the input wait goes; they compute under the GIL "
                f"(a call lasts {calls.alone_ms:.2f} ms alone, {calls.overlapped_ms:.2f} ms with "
                f"{calls.overlapped_in_flight:.2f} in flight)"
                if in_tf_data
                else "upper bound: the input wait (or host time) the Python calls account for removed"
            )
        ),
    )
    # The fix replaces the Python function with TensorFlow ops or precomputes it: the calls leave the critical path,
    # so the bound is their time on it (the input wait when tf.data runs them), not a parallel map of them.
    return finding


def _py_function_apis(ops):
    """The Python APIs behind the callback op types seen: EagerPyFunc is tf.py_function, PyFunc and
    PyFuncStateless are tf.numpy_function."""
    types = {_op_type(name) for name, _, _ in ops}
    apis = (["tf.py_function, op EagerPyFunc"] if "EagerPyFunc" in types else []) + [
        f"tf.numpy_function, op {kind}" for kind in ("PyFunc", "PyFuncStateless") if kind in types
    ]
    return ", ".join(apis)


def gc_pauses(ctx):
    """Python GC pauses recorded by the profiler (PyTorch's `Python GC` events, JAX's gc callbacks) that the GPU
    waits through: never inferred from stalls without such events."""
    found = ctx.analysis.gc_pauses
    if found is None:
        return None
    pauses = intervals.intersect(found.pauses, ctx.window) if len(ctx.window) else found.pauses
    if len(pauses) == 0:
        return None
    exposed_ms = ms(ctx.in_window_ps(ctx.exposed(pauses)) if ctx.has_gpu else ctx.in_window_ps(pauses))
    share = ctx.share_pct(exposed_ms)
    severity = grade(share, HOST_HIGH_PCT, MODELED_MEDIUM_PCT, GC_MIN_PCT)
    if severity is None:
        return None
    lengths = pauses.end_ps - pauses.start_ps
    total_ms = ms(int(lengths.sum()))
    source = "Python GC events" if found.source == "python_gc_events" else "JAX's gc callbacks"
    return Finding(
        id="host.gc_pauses",
        severity=min(severity, "medium", key=("low", "medium", "high").index),
        summary=f"{len(pauses)} Python garbage collections pause the loop for {total_ms:.2f} ms (longest "
        f"{ms(int(lengths.max())):.2f} ms); the GPU idles through {exposed_ms:.2f} ms of them, {share:.1f}% "
        "of the step time.",
        evidence=Evidence(
            {
                "gc_pause_count": len(pauses),
                "gc_pause_ms": total_ms,
                "gc_pause_max_ms": ms(int(lengths.max())),
                "gc_pause_median_ms": ms(int(np.median(lengths))),
                "gc_pause_gpu_idle_ms": exposed_ms,
                "gc_pause_gpu_idle_pct": share,
                "gc_pauses_per_step": (round(len(pauses) / ctx.step_count, 2) if ctx.step_count else None),
                "source": found.source,
            },
            ladder("gc_pause_gpu_idle_pct", share, HOST_HIGH_PCT, MODELED_MEDIUM_PCT, GC_MIN_PCT),
            {"time_ranges_ms": ctx.longest_ranges_ms(pauses), "steps": ctx.steps_overlapping(pauses)},
        ),
        recoverable_ms=exposed_ms,
        window_ms=ctx.window_ms,
        speedup_basis=f"upper bound: the GC pauses ({source}) during which every GPU idles, removed",
        fix_note=f"Measured from {source}.",
    )


def _thread_name(label):
    """A thread as the text names it: its own name, or for an unnamed one (model.waits.thread_label) the end of
    its id, which XPlane makes 19 digits long."""
    if not label.startswith("thread "):
        return label
    thread_id = label[len("thread ") :]
    return f"the unnamed thread (id …{thread_id[-4:]})" if len(thread_id) > 8 else label


def feeder_blocked(ctx):
    """The thread that feeds the device (it dispatches or launches device work, or marks steps) blocked in a
    Python-tracer wait on another thread (a queue, a condition, a future, a lock: model.waits) while every device
    idles (analysis.feeder_waits); tf.data/DataLoader input waits and GC pauses are their own findings."""
    found = ctx.analysis.feeder_waits
    if found is None:
        return None
    blocked_ms = ms(found.total_ps)
    share = ctx.share_pct(blocked_ms)
    severity = grade(share, INPUT_HIGH_PCT, INPUT_MEDIUM_PCT)
    if severity is None:
        return None
    kind = found.main_kind
    feeders = listed(found.feeders)
    device = "the GPUs" if found.device == "gpu" else "XLA's CPU executor"
    producer = next((other for other in found.others if other.wakes), None)
    busy_pct = round(100.0 * producer.busy_ps / found.total_ps, 1) if producer is not None else None
    waiting_pct = round(100.0 * producer.waiting_ps / found.total_ps, 1) if producer is not None else None
    computing_pct = round(busy_pct - waiting_pct, 1) if producer is not None else None
    calls = [
        {"function": call.name, "ms_per_step": ctx.per_step_ms(ms(call.ps)), "waits": call.waits}
        for call in found.other_calls[:3]
    ]
    ran = (
        "; it ran " + ", ".join(f"{c['function']} {c['ms_per_step']:.2f} ms" for c in calls) + " per step"
        if calls and ctx.step_count
        else ""
    )
    if kind in PRODUCER_KINDS:
        condition, cause = None, "producer_slow"
        who = (
            ""
            if producer is None
            else (
                f"The producer ({_thread_name(producer.thread)}: {producer.wakes} queue "
                "puts or signals during the waits)"
            )
        )
        if producer is None:
            note = (
                "No traced thread put into the queue or signalled it during the waits: the producer runs in "
                "another process (multiprocessing, DataLoader workers) or without Python-tracer events."
            )
        elif computing_pct >= 100 * FEEDER_PRODUCER_BUSY_SHARE:
            note = (
                f"{who} was computing through {computing_pct:.0f}% of them{ran}: it makes batches slower than "
                "the step uses them. Python work holds the GIL: spread it over processes (loader workers, "
                "tf.data's parallel map) rather than threads."
            )
        elif waiting_pct >= 100 * FEEDER_PRODUCER_BUSY_SHARE:
            slept = [c for c in calls if c["waits"]]
            spent = (
                " and ".join(f"{c['ms_per_step']:.2f} ms per step in {c['function']}" for c in slept)
                if slept and ctx.step_count
                else f"{waiting_pct:.0f}% of the waits in sleeps and file reads"
            )
            note = (
                f"{who} spends {spent}, through {waiting_pct:.0f}% of the step thread's waits: waiting, not "
                "computing (on I/O or a timer). Several loaders overlap those waits; faster code in the loader "
                "would not help."
            )
        else:
            note = (
                f"{who} was busy through only {busy_pct:.0f}% of them{ran}: it is waiting itself (on I/O or a "
                "lock the trace does not show), so more producers help only where those waits overlap."
            )
    else:
        condition, cause = "lock_contention", "lock_contention"
        holders = [other for other in found.others if other.wakes]
        named = ", ".join(
            f"{_thread_name(other.thread)} released a lock {other.wakes} times during the waits"
            for other in holders[:3]
        )
        note = (
            f"Another thread holds the lock: {named}."
            if holders
            else "The trace does not show which thread holds the lock (no traced release during the waits)."
        )
    if (
        found.device != "gpu"
        and cause == "producer_slow"
        and producer is not None
        and computing_pct < 100 * FEEDER_PRODUCER_BUSY_SHARE <= waiting_pct
    ):
        note += " This is a CPU-only run, but loaders that wait take little of the cores the step uses."
    elif found.device != "gpu":
        note += (
            " This is a CPU-only run: the other threads share the cores with the step, so a faster producer "
            "or a shorter critical section competes with it for them."
        )
    if found.device != "gpu":
        severity = "medium" if severity == "high" else severity
    kinds = [{"kind": name, "what": WAIT_KIND_TEXT[name], "ms": ms(ps)} for name, ps in found.kinds]
    per_step = [ms(ps) for ps in found.per_step_ps[:FEEDER_STEPS_LISTED]]
    finding = Finding(
        id="host.feeder_blocked",
        severity=severity,
        condition=condition,
        summary=f"The thread feeding {device} ({feeders}) waits on {WAIT_KIND_TEXT[kind]} for "
        f"{ctx.time_text(blocked_ms)} while {device} {'idle' if found.device == 'gpu' else 'idles'}: "
        f"{share:.1f}% of the step time.",
        evidence=Evidence(
            {
                "feeder_blocked_ms": blocked_ms,
                "feeder_blocked_ms_per_step": ctx.per_step_ms(blocked_ms),
                "feeder_blocked_pct": share,
                "waits": found.wait_count,
                "wait_kind": kind,
                "cause": cause,
                "feeder_threads": feeders,
                "device": found.device,
                "producer_thread": producer.thread if producer is not None else None,
                "producer_busy_pct": busy_pct,
                "producer_waiting_pct": waiting_pct,
                "producer_computing_pct": computing_pct,
            },
            ladder("feeder_blocked_pct", share, INPUT_HIGH_PCT, INPUT_MEDIUM_PCT),
            {
                "per_step_ms": per_step,
                "wait_kinds": kinds,
                "other_threads": [
                    {"thread": other.thread, "busy_ms": ms(other.busy_ps), "wakes": other.wakes}
                    for other in found.others[:5]
                ],
                "other_calls": calls,
                "time_ranges_ms": ctx.longest_ranges_ms(found.blocked),
                "steps": ctx.steps_overlapping(found.blocked),
            },
        ),
        recoverable_ms=blocked_ms,
        window_ms=ctx.window_ms,
        speedup_basis="",
        fix_note=note,
    )
    step_ms = ctx.mean_step_ms if ctx.step_count and ctx.mean_step_ms else ctx.window_ms
    saved_ms = blocked_ms / ctx.step_count if ctx.step_count else blocked_ms
    return estimated(
        finding,
        whatif_bound(
            step_ms,
            step_ms - saved_ms,
            "upper bound: the feeding thread's waits on other threads during which "
            "every device idles, removed (a producer that keeps up, no lock held "
            "against the feeder)",
        ),
    )


def op_stall(ctx: Context) -> Finding | None:
    """The GPU idles while the step thread is blocked inside an op call: a wait, not host work (host_stalls)."""
    return stall_finding(ctx, "host.op_stall")


ENTRIES = {**ENTRIES, **STALL_ENTRIES}
RULES = (op_stall, gpu_idle_host_busy, eager_execution, retracing, python_function, gc_pauses, feeder_blocked)
