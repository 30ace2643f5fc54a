"""Host work on the step's critical path while the GPU idles (host.gpu_idle_host_busy)."""

from __future__ import annotations

import re
from tb_gpu_advisor.analysis.step_ops import is_producer_event
from tb_gpu_advisor.findings.compiled import host_condition
from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import Evidence, Finding, grade, ladder
from tb_gpu_advisor.findings.host_time import HOST_OPS_LISTED, op_rows
from tb_gpu_advisor.findings.thresholds import HOST_HIGH_PCT, HOST_MEDIUM_PCT, MODELED_LOW_PCT
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.host_waits import is_device_wait

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.findings.context import Context


# Host events that wrap others or mark steps: not "what the host did".
_WRAPPERS = re.compile(
    r"^(ExecutorState::Process|EagerExecute|EagerKernelExecute|EagerLocalExecute|"
    r"KernelAndDeviceFunc|TFE_Py|FunctionRun|ExecutorDoneCallback|ExecutorPropagateOutputs|"
    r"IteratorGetNext|Iterator::|train$|test$|TraceContext|Profiled batch|\$)"
)


def _top_host_ops(ctx, limit_count=HOST_OPS_LISTED):
    """The ops that block the step, most time first: the step's own TensorFlow ops (a few calls per step), then
    other host events; never wrappers, step markers, driver calls, tf.data's background producers or waits on the
    device (model.host_waits.is_device_wait: a loss read is the device's time, not the host's work)."""
    step = [(op.name, op.count, op.total_ps) for op in ctx.step_ops.step_ops if not is_device_wait(op.name)]
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
            and not is_device_wait(name)
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
    # explains (batch preparation, CPU-placed ops) is left to it. The rest is the Time line's host compute
    # (its breakdown category) less that explained part: one figure for one time in the report.
    explained_ms = ctx.idle_cause_ms("host") - ctx.idle_cause_ms("host", ctx.explained_host_time)
    host_ms = round(max(0.0, ctx.category_ms("host") - explained_ms), 6)
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
        "on the device, input waits, launch calls and host time no event records not counted: a fix that also "
        "removes those, such as compiling the step or caching allocations, can beat it)",
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
