"""Python on the step's path: retraced functions, py_function ops, GC pauses."""

from __future__ import annotations

import re
import numpy as np
from tb_gpu_advisor.analysis.step_ops import STEP_OP_MAX_CALLS_PER_STEP
from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import Evidence, Finding, grade, ladder, limit
from tb_gpu_advisor.findings.host_time import host_critical_ms, op_rows
from tb_gpu_advisor.findings.thresholds import (
    GC_MIN_PCT,
    HOST_HIGH_PCT,
    HOST_MEDIUM_PCT,
    MODELED_LOW_PCT,
    MODELED_MEDIUM_PCT,
    RETRACE_MIN_VARIANTS,
)
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.host import TF_DATA_PY_FUNCTION_TAG

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.findings.context import Context


_FUNCTION_CALL = re.compile(r"^EagerLocalExecute: __inference_(.+)_(\d+)$")


_PY_FUNCTION_TYPES = {"EagerPyFunc", "PyFunc", "PyFuncStateless"}


def _op_type(name):
    return name.rpartition(":")[2]


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
    computes = calls is not None and calls.computes is True
    unsized = in_tf_data and not computes
    # The step thread waiting for the GIL the calls hold, before each step's tf.function call (the breakdown's
    # gil_wait, a wait, not input wait nor host compute): the calls' time too, gone with them.
    gil_ms = ctx.category_ms("gil_wait") if ctx.batch_prep_waits_for_gil else 0.0
    if in_tf_data:
        recoverable = min(total_ms, waiting + gil_ms)
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
    steady = len(ctx.step_set.timed_steps) or 1
    gil_note = (
        f" The step thread also waits {gil_ms / steady:.2f} ms per step for the GIL they hold before each step's "
        f"tf.function call ({ctx.share_pct(gil_ms):.1f}% of the step; on the Time line, host waiting for the GIL): "
        f"a call ended in {calls.step_sections_after_call} of the {calls.step_sections} stretches of the step "
        "thread's Python between an input wait and the step's call."
        if gil_ms > 0
        else ""
    )
    gil_goes = " and the step thread's wait for the GIL" if gil_ms > 0 else ""
    finding = Finding(
        id="host.python_function",
        severity=severity,
        summary=f"Python functions ({_py_function_apis(ops)}) ran {count:,} times, {total_ms / count:.2f} ms "
        f"each{where}.{gil_note}",
        evidence=Evidence(
            {
                "py_function_calls": count,
                "py_function_ms": total_ms,
                "py_function_ms_per_call": round(total_ms / count, 3),
                "py_function_calls_per_step": round(count / ctx.step_count, 1) if ctx.step_count else None,
                "map_threads_busy_cores": ctx.pipeline.map_concurrency,
                "input_wait_ms": round(waiting, 3),
                "py_function_in_tf_data": in_tf_data,
                "gil_wait_ms_per_step": round(gil_ms / steady, 3),
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
                f"tf.data, overlapped with the step, so at most the input wait{gil_goes} goes; they compute under "
                f"the GIL ({calls.gil_evidence})"
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


def gc_pauses(ctx: Context) -> Finding | None:
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
