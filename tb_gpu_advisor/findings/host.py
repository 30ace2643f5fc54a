"""Host-side rules: host work while the GPU idles, eager ops, retracing, Python functions, threads, placement."""

import re

from tb_gpu_advisor.analysis.step_ops import STEP_OP_MAX_CALLS_PER_STEP, is_producer_event
from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import Evidence, Finding, capped, grade, ladder, limit
from tb_gpu_advisor.findings.thresholds import (CONTENTION_MIN_CORE_FRACTION, CORE_COUNT_KEYS,
                                                EAGER_MIN_OPS_PER_STEP, EAGER_MIN_PCT, HOST_HIGH_PCT, HOST_MEDIUM_PCT,
                                                LAUNCH_HIGH_PCT, LAUNCH_MEDIUM_PCT, MODELED_LOW_PCT,
                                                RETRACE_MIN_VARIANTS)
from tb_gpu_advisor.model import intervals

HOST_OPS_LISTED = 5
# Host events that wrap others or mark steps: not "what the host did".
_WRAPPERS = re.compile(r"^(ExecutorState::Process|EagerExecute|EagerKernelExecute|EagerLocalExecute|"
                       r"KernelAndDeviceFunc|TFE_Py|FunctionRun|ExecutorDoneCallback|ExecutorPropagateOutputs|"
                       r"IteratorGetNext|Iterator::|train$|test$|TraceContext|Profiled batch|\$)")
_EAGER_OP = re.compile(r"^EagerLocalExecute: (?!__inference_|__forward_|__backward_|StatefulPartitionedCall|"
                       r"PartitionedCall)(.+)$")
_FUNCTION_CALL = re.compile(r"^EagerLocalExecute: __inference_(.+)_(\d+)$")
_PY_FUNCTION_TYPES = {"EagerPyFunc", "PyFunc", "PyFuncStateless"}
# CPU-only kernels (oneDNN/MKL) and compute-heavy op types: on the host in a GPU run they ran on the CPU.
_CPU_KERNEL_TYPE = re.compile(r"^_Mkl|^_MklNative")
_COMPUTE_TYPES = {"MatMul", "BatchMatMulV2", "BatchMatMulV3", "Conv2D", "Conv2DBackpropInput",
                  "Conv2DBackpropFilter", "Conv3D", "_FusedMatMul", "_FusedConv2D", "FusedBatchNormV3", "Einsum"}


def _op_type(name):
    return name.rpartition(":")[2]


def _op_rows(ops):
    return [{"name": name, "count": count, "total_ms": ms(total)} for name, count, total in ops[:HOST_OPS_LISTED]]


def _top_host_ops(ctx, limit_count=HOST_OPS_LISTED):
    """The ops that block the step, most time first: the step's own TensorFlow ops (a few calls per step), then
    other host events; never wrappers, step markers, driver calls or tf.data's background producers."""
    step = [(op.name, op.count, op.total_ps) for op in ctx.step_ops.step_ops]
    if len(step) >= limit_count:
        return _op_rows(step[:limit_count])
    device_names = {name for gpu in ctx.model.gpus for name in gpu.activity.names}
    per_element = {op.name for op in ctx.step_ops.per_element_ops}
    listed = {name for name, _, _ in step}
    others = ctx.host_ops(lambda name: bool(name) and not _WRAPPERS.match(name) and name not in device_names
                          and not name.startswith(("Memcpy", "Memset", "cu")) and not is_producer_event(name)
                          and name not in per_element and name not in listed)
    return _op_rows((step + others)[:limit_count])


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
    condition, note = ctx.xla_blocked()
    return Finding(
        id="host.gpu_idle_host_busy", severity=severity,
        summary=f"The GPU idles {share:.1f}% of the step while the host runs runtime or Python work "
                f"({ctx.time_text(host_ms)}).",
        evidence=Evidence({"host_exposed_pct": share, "host_exposed_ms": round(host_ms, 3),
                           "host_exposed_ms_per_step": ctx.per_step_ms(host_ms)},
                          ladder("host_exposed_pct", share, HOST_HIGH_PCT, HOST_MEDIUM_PCT),
                          {"host_ops": _top_host_ops(ctx), "time_ranges_ms": ctx.longest_ranges_ms(idle_host),
                           "steps": ctx.steps_overlapping(idle_host),
                           "xla_incompatible_ops": list(ctx.step_ops.xla_blockers) if condition else []}),
        recoverable_ms=host_ms, window_ms=ctx.window_ms,
        speedup_basis="upper bound: the step time if the GPU never idled during host work",
        condition=condition, fix_note=note)


def _host_critical_ms(ctx):
    """Host time on the critical path: when no GPU works and the host is busy or launching."""
    return ctx.category_ms("host") + ctx.category_ms("launch")


def eager_execution(ctx):
    """Individual ops dispatched eagerly (`EagerLocalExecute: <Op>`), many per step, taking >10% of the time."""
    ops = ctx.host_ops(lambda name: bool(_EAGER_OP.match(name)))
    count = sum(c for _, c, _ in ops)
    total_ms = ms(sum(t for _, _, t in ops))
    per_step = count / ctx.step_count if ctx.step_count else float(count)
    share = ctx.share_pct(total_ms)
    if per_step < EAGER_MIN_OPS_PER_STEP or share < EAGER_MIN_PCT:
        return None
    critical = _host_critical_ms(ctx) if ctx.has_gpu else total_ms
    recoverable = min(total_ms, critical)
    severity = grade(ctx.share_pct(recoverable), HOST_HIGH_PCT, HOST_MEDIUM_PCT, MODELED_LOW_PCT) or "low"
    return Finding(
        id="host.eager_execution", severity=severity,
        summary=f"{ctx.count_text(count, 'ops')} run eagerly ({total_ms:.2f} ms, {share:.1f}% of the step time).",
        evidence=Evidence({"eager_ops_per_step": round(per_step, 1), "eager_op_ms": total_ms, "eager_op_pct": share},
                          limit("eager_op_pct", share, EAGER_MIN_PCT, min_ops_per_step=EAGER_MIN_OPS_PER_STEP),
                          {"host_ops": _op_rows(ops)}),
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
    recoverable = min(total_ms, waiting + _host_critical_ms(ctx)) if ctx.has_gpu else min(total_ms, max(
        waiting, ctx.category_ms("host")))
    share = ctx.share_pct(recoverable)
    severity = grade(share, HOST_HIGH_PCT, HOST_MEDIUM_PCT, MODELED_LOW_PCT)
    if severity is None:
        return None
    per_step = count / ctx.step_count if ctx.step_count else None
    if per_step is not None and per_step <= STEP_OP_MAX_CALLS_PER_STEP:
        times = "once" if per_step <= 1.0 else f"{round(per_step, 1):g} times"
        where = f" ({times} per step: it runs inside the training step, which waits for it)"
    elif waiting > 0:
        where = "; tf.data is in use and the step waits for it: its map function calls it per element"
    else:
        where = ""
    return Finding(
        id="host.python_function", severity=severity,
        summary=f"Python functions (tf.py_function) ran {count:,} times, {total_ms / count:.2f} ms each{where}.",
        evidence=Evidence({"py_function_calls": count, "py_function_ms": total_ms,
                           "py_function_ms_per_call": round(total_ms / count, 3),
                           "py_function_calls_per_step": round(count / ctx.step_count, 1) if ctx.step_count else None,
                           "map_threads_busy_cores": ctx.pipeline.map_concurrency, "input_wait_ms": round(waiting, 3),
                           "recoverable_pct": share},
                          ladder("recoverable_pct", share, HOST_HIGH_PCT, HOST_MEDIUM_PCT, MODELED_LOW_PCT),
                          {"host_ops": _op_rows(ops)}),
        recoverable_ms=recoverable, window_ms=ctx.window_ms,
        speedup_basis="upper bound: the input wait (or host time) the Python calls account for removed")


def _core_count(environment):
    """The machine's CPU core count when the trace records it (`/host:metadata` or Task Environment), else None."""
    for key in CORE_COUNT_KEYS:
        value = environment.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            return int(value)
        if isinstance(value, str) and value.strip().isdigit() and int(value) > 0:
            return int(value)
    return None


def tf_data_contention(ctx):
    """Launch calls starve the GPU while tf.data runs on the same host, and GPU threads are not private.

    Contention needs evidence: host threads busy for (nearly) as many cores as the machine has. Without the core
    count in the trace the finding says so and stays low."""
    if not ctx.has_gpu or not ctx.pipeline.in_use or ctx.has_thread("tf_gpu_private") or ctx.has_thread("gpu_private"):
        return None
    launch_ms = ctx.category_ms("launch")
    share = ctx.share_pct(launch_ms)
    if share < LAUNCH_MEDIUM_PCT or ctx.window_ps <= 0:
        return None
    busy = {kind: round(total / 1e9, 3) for kind, (_, total) in sorted(ctx.host.thread_busy.items())
            if kind.startswith("tf_data")}
    busy_cores = round(sum(total for _, total in ctx.host.thread_busy.values()) / ctx.window_ps, 2)
    tf_data_cores = round(sum(busy.values()) * 1e9 / ctx.window_ps, 2)
    cores = _core_count(ctx.model.environment)
    if cores is not None and busy_cores < CONTENTION_MIN_CORE_FRACTION * cores:
        return None  # the CPU had cores to spare: launches were not waiting for one
    if cores is None:
        severity = "low"
        summary = (f"The GPU idles {share:.1f}% of the step during launch calls while tf.data threads keep "
                   f"{tf_data_cores:.2f} cores busy; the trace does not record the machine's core count, so "
                   "contention for cores is not proven.")
    else:
        severity = min(grade(share, LAUNCH_HIGH_PCT, LAUNCH_MEDIUM_PCT), "medium", key=("low", "medium", "high").index)
        summary = (f"The GPU idles {share:.1f}% of the step during launch calls while host threads keep "
                   f"{busy_cores:.2f} of the machine's {cores} cores busy (tf.data: {tf_data_cores:.2f}).")
    return Finding(
        id="threading.tf_data_contention", severity=severity, summary=summary,
        evidence=Evidence({"launch_exposed_pct": share, "host_busy_cores": busy_cores,
                           "tf_data_busy_cores": tf_data_cores, "machine_cores": cores,
                           "tf_data_thread_busy_ms": busy},
                          limit("host_busy_cores", busy_cores,
                                None if cores is None else round(CONTENTION_MIN_CORE_FRACTION * cores, 2),
                                launch_exposed_pct_above=LAUNCH_MEDIUM_PCT, gpu_private_threads=False),
                          {"threads": sorted(busy)}),
        recoverable_ms=launch_ms, window_ms=ctx.window_ms,
        speedup_basis="upper bound: the GPU idle during launch calls removed")


def ops_on_host(ctx):
    """Compute ops with CPU kernels in a run that has a GPU."""
    if not ctx.has_gpu:
        return None
    device_ops = {name for gpu in ctx.active_gpus for name in gpu.activity.op_names}

    def on_cpu(name):
        op_name, sep, op_type = name.rpartition(":")
        if not sep or not op_name or " " in op_type:
            return False
        return bool(_CPU_KERNEL_TYPE.match(op_type)) or (
            bool(device_ops) and op_type in _COMPUTE_TYPES and op_name not in device_ops)

    ops = ctx.host_ops(on_cpu)
    if not ops:
        return None
    total_ms = ms(sum(t for _, _, t in ops))
    recoverable = min(total_ms, _host_critical_ms(ctx))
    share = ctx.share_pct(recoverable)
    severity = grade(share, HOST_HIGH_PCT, HOST_MEDIUM_PCT, MODELED_LOW_PCT) or "low"
    return Finding(
        id="placement.ops_on_host", severity=severity,
        summary=f"{len(ops)} compute op(s) ran with CPU kernels in a GPU run ({total_ms:.2f} ms), "
                f"e.g. {ops[0][0]}.",
        evidence=Evidence({"cpu_ops": len(ops), "cpu_op_ms": total_ms, "recoverable_pct": share},
                          limit("cpu_ops", len(ops), 0), {"host_ops": _op_rows(ops)}),
        recoverable_ms=recoverable, window_ms=ctx.window_ms,
        speedup_basis="upper bound: the CPU op time on the critical path (GPU idle) removed")


RULES = (gpu_idle_host_busy, eager_execution, retracing, python_function, tf_data_contention, ops_on_host)
