"""Ops dispatched one by one from the host instead of one compiled step (host.eager_execution)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import Evidence, Finding, estimated, grade, limit
from tb_gpu_advisor.findings.host_time import host_critical_ms, op_rows
from tb_gpu_advisor.findings.thresholds import (
    EAGER_MIN_OPS_PER_STEP,
    EAGER_MIN_PCT,
    HOST_HIGH_PCT,
    HOST_MEDIUM_PCT,
    MODELED_LOW_PCT,
)
from tb_gpu_advisor.model.host import TF_DECODE_OPS, TF_FILE_READ_OPS
from tb_gpu_advisor.report.units import duration_ms
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


_EAGER_OP = re.compile(
    r"^EagerLocalExecute: (?!__inference_|__forward_|__backward_|StatefulPartitionedCall|"
    r"PartitionedCall)(.+)$"
)


_FILE_OPS = TF_FILE_READ_OPS | TF_DECODE_OPS


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
    # or for input, nor its waits on its own work: a compiled step keeps them with the device's busy time, and
    # the host's reaction after a read, which a read each step still serializes (idle_attribution's after_wait).
    waits_ms = ctx.idle_union_ms(_KEPT_IDLE, after_wait=True) if ctx.has_gpu else 0.0
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
