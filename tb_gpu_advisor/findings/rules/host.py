"""Host findings: host work while the GPU idles, eager ops, retracing, Python functions."""

import re

from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Entry, register
from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import Evidence, Finding, grade, ladder, limit
from tb_gpu_advisor.findings.host_time import HOST_OPS_LISTED, host_critical_ms, op_rows
from tb_gpu_advisor.findings.thresholds import (EAGER_MIN_OPS_PER_STEP, EAGER_MIN_PCT, HOST_HIGH_PCT, HOST_MEDIUM_PCT,
                                                MODELED_LOW_PCT, RETRACE_MIN_VARIANTS)
from tb_gpu_advisor.model import intervals

ENTRIES = register("host", {
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
})


# Host events that wrap others or mark steps: not "what the host did".
_WRAPPERS = re.compile(r"^(ExecutorState::Process|EagerExecute|EagerKernelExecute|EagerLocalExecute|"
                       r"KernelAndDeviceFunc|TFE_Py|FunctionRun|ExecutorDoneCallback|ExecutorPropagateOutputs|"
                       r"IteratorGetNext|Iterator::|train$|test$|TraceContext|Profiled batch|\$)")


_EAGER_OP = re.compile(r"^EagerLocalExecute: (?!__inference_|__forward_|__backward_|StatefulPartitionedCall|"
                       r"PartitionedCall)(.+)$")


_FUNCTION_CALL = re.compile(r"^EagerLocalExecute: __inference_(.+)_(\d+)$")


_PY_FUNCTION_TYPES = {"EagerPyFunc", "PyFunc", "PyFuncStateless"}


def _op_type(name):
    return name.rpartition(":")[2]


def _top_host_ops(ctx, limit_count=HOST_OPS_LISTED):
    """The host events with the most time, leaving out wrappers, step markers and driver calls."""
    device_names = {name for gpu in ctx.model.gpus for name in gpu.activity.names}
    found = ctx.host_ops(lambda name: bool(name) and not _WRAPPERS.match(name) and name not in device_names
                         and not name.startswith(("Memcpy", "Memset", "cu")))
    return op_rows(found[:limit_count])


def gpu_idle_host_busy(ctx):
    """Every GPU idles while host threads run (not input wait, not launch calls): XProf's "All Others"."""
    if not ctx.has_gpu or not ctx.model.has_host_plane:
        return None
    host_ms = ctx.category_ms("host")
    share = ctx.share_pct(host_ms)
    severity = grade(share, HOST_HIGH_PCT, HOST_MEDIUM_PCT)
    if severity is None:
        return None
    idle_host = intervals.subtract(intervals.subtract(ctx.host.busy, ctx.gpu_busy),
                                   intervals.union_all(ctx.host.input_waits, ctx.host.launch_busy))
    return Finding(
        id="host.gpu_idle_host_busy", severity=severity,
        summary=f"The GPU idles {share:.1f}% of the step while the host runs runtime or Python work "
                f"({ctx.time_text(host_ms)}).",
        evidence=Evidence({"host_exposed_pct": share, "host_exposed_ms": round(host_ms, 3),
                           "host_exposed_ms_per_step": ctx.per_step_ms(host_ms)},
                          ladder("host_exposed_pct", share, HOST_HIGH_PCT, HOST_MEDIUM_PCT),
                          {"host_ops": _top_host_ops(ctx), "time_ranges_ms": ctx.longest_ranges_ms(idle_host),
                           "steps": ctx.steps_overlapping(idle_host)}),
        recoverable_ms=host_ms, window_ms=ctx.window_ms,
        speedup_basis="upper bound: the step time if the GPU never idled during host work")


def eager_execution(ctx):
    """Individual ops dispatched eagerly (`EagerLocalExecute: <Op>`), many per step, taking >10% of the time."""
    ops = ctx.host_ops(lambda name: bool(_EAGER_OP.match(name)))
    count = sum(c for _, c, _ in ops)
    total_ms = ms(sum(t for _, _, t in ops))
    per_step = count / ctx.step_count if ctx.step_count else float(count)
    share = ctx.share_pct(total_ms)
    if per_step < EAGER_MIN_OPS_PER_STEP or share < EAGER_MIN_PCT:
        return None
    critical = host_critical_ms(ctx) if ctx.has_gpu else total_ms
    recoverable = min(total_ms, critical)
    severity = grade(ctx.share_pct(recoverable), HOST_HIGH_PCT, HOST_MEDIUM_PCT, MODELED_LOW_PCT) or "low"
    return Finding(
        id="host.eager_execution", severity=severity,
        summary=f"{ctx.count_text(count, 'ops')} run eagerly ({total_ms:.2f} ms, {share:.1f}% of the step time).",
        evidence=Evidence({"eager_ops_per_step": round(per_step, 1), "eager_op_ms": total_ms, "eager_op_pct": share},
                          limit("eager_op_pct", share, EAGER_MIN_PCT, min_ops_per_step=EAGER_MIN_OPS_PER_STEP),
                          {"host_ops": op_rows(ops)}),
        recoverable_ms=recoverable, window_ms=ctx.window_ms,
        speedup_basis="upper bound: eager dispatch time on the critical path removed")


def retracing(ctx):
    """A tf.function with several traced variants, or compilation inside a step other than the first."""
    variants = {}
    for name, _, _ in ctx.host_ops(lambda name: bool(_FUNCTION_CALL.match(name))):
        base = _FUNCTION_CALL.match(name).group(1)
        variants.setdefault(base, []).append(name)
    retraced = {base: names for base, names in variants.items() if len(names) >= RETRACE_MIN_VARIANTS}
    compile_spans = ctx.host.tagged.get("compile", intervals.EMPTY)
    later = ctx.step_set.steps[1:]
    late = intervals.intersect(compile_spans, intervals.union([s.start_ps for s in later], [s.end_ps for s in later])) \
        if later and len(compile_spans) else intervals.EMPTY
    late_ms = ms(late.total_ps)
    if not retraced and late_ms <= 0:
        return None
    share = ctx.share_pct(late_ms)
    severity = grade(share, HOST_HIGH_PCT, HOST_MEDIUM_PCT) or "medium"
    what = (f"{len(retraced)} function(s) were traced more than once ({', '.join(sorted(retraced)[:3])})"
            if retraced else f"compilation ran inside {len(ctx.steps_overlapping(late, limit=100))} later step(s)")
    return Finding(
        id="host.retracing", severity=severity,
        summary=f"{what[0].upper()}{what[1:]}; compile time inside later steps: {late_ms:.2f} ms.",
        evidence=Evidence({"retraced_functions": len(retraced), "compile_ms_after_first_step": late_ms,
                           "compile_pct_after_first_step": share},
                          limit("function_variants", max((len(v) for v in retraced.values()), default=1),
                                RETRACE_MIN_VARIANTS, compile_after_first_step_ms=0),
                          {"functions": {base: sorted(names) for base, names in sorted(retraced.items())[:5]},
                           "steps": ctx.steps_overlapping(late), "time_ranges_ms": ctx.longest_ranges_ms(late)}),
        recoverable_ms=late_ms, window_ms=ctx.window_ms,
        speedup_basis="upper bound: compilation inside steps after the first removed (0 when the trace does not "
                      "time the tracing)")


def python_function(ctx):
    """tf.py_function / tf.numpy_function calls; with tf.data they pace the pipeline the step waits on."""
    ops = ctx.host_ops(lambda name: _op_type(name) in _PY_FUNCTION_TYPES)
    if not ops:
        return None
    count = sum(c for _, c, _ in ops)
    total_ms = ms(sum(t for _, _, t in ops))
    waiting = ctx.category_ms("input_wait") if ctx.pipeline.in_use else 0.0
    recoverable = min(total_ms, waiting + host_critical_ms(ctx)) if ctx.has_gpu else min(total_ms, max(
        waiting, ctx.category_ms("host")))
    share = ctx.share_pct(recoverable)
    severity = grade(share, HOST_HIGH_PCT, HOST_MEDIUM_PCT, MODELED_LOW_PCT)
    if severity is None:
        return None
    where = "; tf.data is in use and the step waits for it: likely its map function" if waiting > 0 else ""
    return Finding(
        id="host.python_function", severity=severity,
        summary=f"Python functions (tf.py_function) ran {count:,} times, {total_ms / count:.2f} ms each{where}.",
        evidence=Evidence({"py_function_calls": count, "py_function_ms": total_ms,
                           "py_function_ms_per_call": round(total_ms / count, 3),
                           "py_function_calls_per_step": round(count / ctx.step_count, 1) if ctx.step_count else None,
                           "map_threads_busy_cores": ctx.pipeline.map_concurrency, "input_wait_ms": round(waiting, 3),
                           "recoverable_pct": share},
                          ladder("recoverable_pct", share, HOST_HIGH_PCT, HOST_MEDIUM_PCT, MODELED_LOW_PCT),
                          {"host_ops": op_rows(ops)}),
        recoverable_ms=recoverable, window_ms=ctx.window_ms,
        speedup_basis="upper bound: the input wait (or host time) the Python calls account for removed")


RULES = (gpu_idle_host_busy, eager_execution, retracing, python_function)
