"""Step findings: checkpoint and summary stalls, warm-up in the profile, uneven step times."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.analysis.steady_steps import WARM_UP, WARMUP_FACTOR
from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Entry, Idiom, register
from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import Evidence, Finding, grade, limit
from tb_gpu_advisor.findings.rules.communication.exposed import collective_waits_of
from tb_gpu_advisor.findings.step_excess import (
    COLLECTIVES_TITLE,
    PEERS_TITLE,
    SHOWN_MIN_MS,
    VARIANTS,
    excess_of,
    listed,
    title_of,
)
from tb_gpu_advisor.findings.step_excess import waits_for_peers
from tb_gpu_advisor.findings.step_excess import condition as excess_condition
from tb_gpu_advisor.findings.step_excess import sentence as excess_sentence
from tb_gpu_advisor.findings.thresholds import (
    MODELED_HIGH_PCT,
    MODELED_LOW_PCT,
    MODELED_MEDIUM_PCT,
    STALL_MIN_PCT,
    STEP_CV_MIN,
    STEP_MIN_COUNT,
)
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.host import event_tag
from tb_gpu_advisor.report.units import durations_ms

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.findings.context import Context
    from tb_gpu_advisor.model.trace import StepMarker


ENTRIES = register(
    "steps",
    {
        "steps.checkpoint_stall": Entry(
            category="other",
            title="Checkpoint writes stall training",
            fix_summary="Checkpoint less often, or asynchronously (tf.train.CheckpointOptions(enable_async=True)).",
            fix="""\
Saving checkpoints holds up the steps it falls into while the GPU idles. Save less often and off the
critical path:

    ckpt_options = tf.train.CheckpointOptions(enable_async=True)   # TF >= 2.12
    manager = tf.train.CheckpointManager(ckpt, directory, max_to_keep=3)
    if step % 2000 == 0:
        manager.save(options=ckpt_options)
    # Keras: tf.keras.callbacks.ModelCheckpoint(..., save_freq=2000) instead of every epoch/batch

Write to fast local storage and copy to remote storage in the background.""",
            docs=(L.TF_CHECKPOINT,),
            jax=Idiom(
                fix_summary="Checkpoint less often and asynchronously (orbax CheckpointManager, async saves).",
                fix="""\
Saving checkpoints holds up the steps it falls into while the GPU idles. Save less often and without
blocking the step:

    manager = ocp.CheckpointManager(directory, options=ocp.CheckpointManagerOptions(
        save_interval_steps=2000, max_to_keep=3, enable_async_checkpointing=True))
    manager.save(step, args=ocp.args.StandardSave(state))

Write to fast local storage and copy to remote storage in the background.""",
                docs=(L.ORBAX_CHECKPOINT,),
            ),
            pytorch=Idiom(
                fix_summary="Checkpoint less often and asynchronously (torch.distributed.checkpoint.async_save).",
                fix="""\
Saving checkpoints holds up the steps it falls into while the GPU idles. Save less often and off the
critical path:

    if step % 2000 == 0:
        future = torch.distributed.checkpoint.async_save({"model": model.state_dict()}, checkpoint_id=path)

Write to fast local storage and copy to remote storage in the background.""",
                docs=(L.TORCH_DCP,),
            ),
        ),
        "steps.summary_stall": Entry(
            category="other",
            title="Summary writes stall training",
            fix_summary="Write summaries every N steps (tf.summary.record_if / update_freq), not every step.",
            fix="""\
Writing TensorBoard summaries (and flushing the writer) takes a visible part of the steps. Write them less
often:

    with writer.as_default(), tf.summary.record_if(lambda: step % 100 == 0):
        tf.summary.scalar("loss", loss, step=step)
    # Keras: tf.keras.callbacks.TensorBoard(update_freq=100) (or "epoch"), histogram_freq=0

Avoid histogram and image summaries inside the step; do not flush the writer every step.""",
            docs=(L.TF_SUMMARY,),
        ),
        "steps.uneven_step_time": Entry(
            category="other",
            title="Step time varies a lot from step to step",
            fix_summary="Look at what the slow steps do beyond a steady one (named above): open them in the Trace Viewer.",
            fix="""\
Some steps take much longer than the median. The slow steps are listed in the evidence: open them in the
Trace Viewer. Usual causes: periodic work inside some steps (evaluation, checkpoints, summaries, logging),
input that is slow for some batches (uneven file sizes, cache misses), Python garbage collection, memory
allocation growth, or recompilation for new shapes (pad batches to fixed shapes, drop_remainder=True).""",
            docs=(L.TF_PROFILER, L.TF_GPU_PERFORMANCE),
            variants=(
                (
                    "any:work",
                    Idiom(
                        fix_summary="Nothing to recover: the slow steps do more work. Compare their input shapes; rerun on an idle box.",
                        fix="""The slow steps' extra time is mostly the step's own work (device compute, copies, or the host's compute where
there is no GPU), not idle, input or waiting: the work per step varies (batches of
different sizes or shapes, data-dependent work such as embedding lookups or variable sequence lengths), or the
machine was shared while they ran. Bucket or pad inputs to a few fixed shapes where the variation is not wanted,
and profile on an otherwise idle machine before reading the spread as a problem.""",
                        docs=(L.TF_PROFILER,),
                    ),
                ),
                (
                    "any:one_outlier",
                    Idiom(
                        fix_summary="One step makes the spread: recapture more steps to see whether it recurs.",
                        fix="""Without its slowest step the steps vary little: a one-off in this capture (a collection, a page-in, another
process on the machine). What it cost in this step is in the evidence; how often it recurs is not in the trace.
Capture more steps: a stall that recurs every N steps (evaluation, checkpoints, logging) shows as several
slow steps, and the checkpoint and summary rules name the common ones.""",
                        docs=(L.TF_PROFILER,),
                    ),
                ),
                *VARIANTS,
            ),
        ),
        "steps.warmup_in_profile": Entry(
            category="other",
            title="The profile includes warm-up (compilation)",
            fix_summary="Profile steady-state steps: skip the first ones (profile_batch=(10, 20)).",
            fix="""\
The first profiled step compiles or traces the program and is much slower than the rest; it is left out of
the step-variance finding. Profile later steps so averages describe steady state:

    tf.keras.callbacks.TensorBoard(log_dir, profile_batch=(10, 20))
    # custom loops: start tf.profiler.experimental.start(logdir) after a few warm-up steps""",
            docs=(L.TF_PROFILER,),
            jax=Idiom(
                fix_summary="Profile steady-state steps: start jax.profiler after the first steps have compiled.",
                fix="""\
The first profiled step compiles or traces the program and is much slower than the rest; it is left out of
the step-variance finding. Profile later steps so averages describe steady state:

    for step, batch in enumerate(batches):
        if step == 10:
            jax.profiler.start_trace(logdir)
        with jax.profiler.StepTraceAnnotation("train", step_num=step):
            state, metrics = train_step(state, batch)
        if step == 20:
            jax.block_until_ready(state)
            jax.profiler.stop_trace()""",
                docs=(L.JAX_PROFILING,),
            ),
            pytorch=Idiom(
                fix_summary="Profile steady-state steps: torch.profiler.schedule(wait=5, warmup=2, active=10).",
                fix="""\
The first profiled step compiles or warms up and is much slower than the rest; it is left out of the
step-variance finding. Profile later steps so averages describe steady state:

    with torch.profiler.profile(schedule=torch.profiler.schedule(wait=5, warmup=2, active=10),
                                on_trace_ready=torch.profiler.tensorboard_trace_handler(logdir)) as prof:
        for batch in loader:
            train_step(batch)
            prof.step()""",
                docs=(L.TORCH_PROFILER,),
            ),
        ),
    },
)


def _span(ctx):
    """[first step start, last step end) over the host markers and the steps' windows on the devices (the
    analysis window without steps): stalls between steps count."""
    steps = ctx.step_set.steps + ctx.step_set.timed_steps
    if steps:
        return intervals.union([min(s.start_ps for s in steps)], [max(s.end_ps for s in steps)])
    return ctx.window


def _stall(ctx, tag, finding_id, what):
    spans = ctx.host.tagged.get(tag)
    if spans is None or not len(spans):
        return None
    span = _span(ctx)
    stalled = intervals.intersect(intervals.subtract(spans, ctx.gpu_busy), span)
    stall_ms, span_ms = ms(stalled.total_ps), span.total_ps / 1e9
    share = round(100.0 * stall_ms / span_ms, 2) if span_ms else 0.0
    severity = grade(share, MODELED_HIGH_PCT, MODELED_MEDIUM_PCT, STALL_MIN_PCT)
    if severity is None:
        return None
    ops = ctx.host_ops(lambda name: event_tag(name) == tag)
    return Finding(
        id=finding_id,
        severity=severity,
        summary=f"{what} took {stall_ms:.2f} ms ({share:.1f}% of the profiled steps) while the GPU idled.",
        evidence=Evidence(
            {
                "stall_ms": stall_ms,
                "stall_pct": share,
                "profiled_span_ms": round(span_ms, 3),
                "step_time_ms_median": ctx.analysis.step_time_ms["median"],
            },
            limit("stall_pct", share, STALL_MIN_PCT),
            {
                "host_ops": [{"name": n, "count": c, "total_ms": ms(t)} for n, c, t in ops[:5]],
                "steps": ctx.steps_overlapping(stalled),
                "time_ranges_ms": ctx.longest_ranges_ms(stalled),
            },
        ),
        recoverable_ms=stall_ms,
        window_ms=span_ms,
        speedup_basis="upper bound: the profiled span without the stall",
    )


def checkpoint_stall(ctx: Context) -> None:
    return _stall(ctx, "checkpoint", "steps.checkpoint_stall", "Checkpoint writes")


def summary_stall(ctx: Context) -> None:
    return _stall(ctx, "summary", "steps.summary_stall", "Summary writes")


def warmup_step(ctx: Context) -> StepMarker | None:
    """The first marked step, as timed, when it is warm-up (analysis.steady_steps): left out of every per-step
    number; else None."""
    return next((left.step for left in ctx.step_set.left_out if left.reason == WARM_UP), None)


def warmup_in_profile(ctx: Context) -> Finding | None:
    first = warmup_step(ctx)
    if first is None:
        return None
    rest_ms = np.array([s.duration_ps for s in ctx.step_set.timed_steps], dtype=np.float64) / 1e9
    median = round(float(np.median(rest_ms)), 3)
    return Finding(
        id="steps.warmup_in_profile",
        severity="low",
        summary=f"The first profiled step ({first.name}, {ms(first.duration_ps):.2f} ms) compiles and takes "
        f"{ms(first.duration_ps) / median:.1f}× the median of the others ({median:.2f} ms).",
        evidence=Evidence(
            {"first_step_ms": ms(first.duration_ps), "other_steps_median_ms": median},
            limit("first_step_over_median", round(ms(first.duration_ps) / median, 2), WARMUP_FACTOR),
            {"steps": [first.name], "time_ranges_ms": [[ms(first.start_ps), ms(first.end_ps)]]},
        ),
        recoverable_ms=0.0,
        window_ms=ctx.window_ms,
        speedup_basis="none: warm-up happens once; it only distorts this profile's averages",
    )


def uneven_step_time(ctx: Context) -> Finding | None:
    """Step times vary (coefficient of variation >= STEP_CV_MIN) over the steady steps (warm-up left out). Sized
    from the slow steps' excess that is recoverable (analysis.step_variance: idle, input or a late host), never
    from the spread alone: excess that is work has no estimate, and one outlier step is low with none."""
    variance = ctx.analysis.variance
    steps = list(ctx.step_set.timed_steps)
    if variance is None or len(steps) < STEP_MIN_COUNT:
        return None
    cv = round(variance.cv, 3)
    if cv < STEP_CV_MIN:
        return None
    window = float(sum(variance.times_ms))
    slowest = sorted(steps, key=lambda s: (-s.duration_ps, s.start_ps))[:3]
    spread, middle, longest = durations_ms(variance.stdev_ms, variance.median_ms, ms(slowest[0].duration_ps))
    one_outlier = variance.cv_without_slowest is not None and variance.cv_without_slowest < STEP_CV_MIN
    grown = {name: value for name, value in variance.excess_by_category_ms.items() if value >= SHOWN_MIN_MS}
    parts = listed(grown, ctx.has_gpu)
    recoverable = 0.0 if one_outlier else variance.recoverable_ms
    share = round(100.0 * recoverable / window, 2) if window > 0 else 0.0
    excess = durations_ms(variance.excess_ms)[0]
    split = excess_of(variance, collective_waits_of(ctx) if ctx.has_gpu else None)
    summary = (
        f"Step time varies by {cv:.0%} (stdev {spread} on a {middle} median); the slowest step "
        f"({slowest[0].name}) takes {longest}."
    )
    title = ""
    if one_outlier:
        condition, severity = "one_outlier", "low"
        summary += (
            f" That one step makes the spread: without it steps vary by {variance.cv_without_slowest:.1%}. The "
            f"slow steps' {excess} over the median step: {parts}."
        )
        basis = "none: one outlier step; how often it recurs is not in the capture"
    elif waits_for_peers(split):
        severity, recoverable = "low", 0.0
        grown_ms = durations_ms(split.waits["collectives"])[0]
        if split.collective_split:  # the wait was measured against the last GPU to arrive
            condition, title = "peer_waits", PEERS_TITLE
            summary += (
                f" The slow steps' {excess} over the median step is mostly collectives waiting for the last GPU to "
                f"arrive (+{grown_ms}): a rank that waits is not the slow one."
            )
            basis = "none: the slow steps wait for other ranks; what makes them late is on another rank"
        else:  # one rank's trace: its collective time is the wait and the transfer together
            condition, title = "collective_time", COLLECTIVES_TITLE
            summary += (
                f" The slow steps' {excess} over the median step is mostly in collectives (+{grown_ms}: waiting "
                "for other ranks or transferring; this rank's trace cannot tell which)."
            )
            basis = (
                "none: the slow steps spend longer in collectives; this rank's trace cannot split wait from transfer"
            )
        summary += _rest(split, ctx.has_gpu, work=True, peers=True)
    elif share < MODELED_LOW_PCT:
        condition, severity = excess_condition(split, share_low=True), "low"
        recoverable = 0.0
        if condition == "work":
            summary += (
                f" The slow steps' {excess} over the median step is mostly work "
                f"({listed(split.work, ctx.has_gpu, split=split.collective_split)}): the work per step varies, or "
                "the machine was shared." + _rest(split, ctx.has_gpu, work=False)
            )
            basis = "none: the slow steps' extra time is work, not time a fix recovers"
        else:
            summary += (
                f" The slow steps' {excess} over the median step is mostly waiting "
                f"({listed(split.waits, ctx.has_gpu, waits=True, split=split.collective_split)}): a wait says what "
                "the step waits for, not that it is slow." + _rest(split, ctx.has_gpu, work=True)
            )
            basis = "none: the slow steps' extra time is waiting; this trace does not show what it waits for"
    else:
        pipeline = ctx.pipeline
        works_ahead = pipeline.in_use and pipeline.has_prefetch
        condition = excess_condition(split, share_low=False, works_ahead=works_ahead)
        # The title names what the estimate removes, so its "(up to N×)" does not read as the size of the spread.
        title = title_of(condition, split)
        severity = grade(share, MODELED_HIGH_PCT, MODELED_MEDIUM_PCT, MODELED_LOW_PCT) or "low"
        summary += (
            f" Of the slow steps' {excess} over the median step, {durations_ms(variance.recoverable_ms)[0]} is time "
            f"a steady step does not spend ({listed(split.recoverable, ctx.has_gpu)})"
            + excess_sentence(split, ctx.has_gpu)
            + "."
        )
        basis = "upper bound: the slow steps' idle, input and late-host time above the median step's removed"
    return Finding(
        id="steps.uneven_step_time",
        severity=severity,
        summary=summary,
        evidence=Evidence(
            {
                "step_time_ms_mean": round(variance.mean_ms, 3),
                "step_time_ms_median": round(variance.median_ms, 3),
                "step_time_ms_stdev": round(variance.stdev_ms, 3),
                "coefficient_of_variation": cv,
                "excess_over_median_ms": round(variance.excess_ms, 3),
                "recoverable_excess_ms": round(variance.recoverable_ms, 3),
                "work_excess_ms": round(split.work_ms, 3),
                "wait_excess_ms": round(split.waits_ms, 3),
                "excess_by_category_ms": {name: round(value, 3) for name, value in grown.items()},
                "one_outlier_step": one_outlier,
                "steps_measured": len(steps),
            },
            limit("coefficient_of_variation", cv, STEP_CV_MIN),
            {
                "steps": [{"step": s.name, "time_ms": ms(s.duration_ps)} for s in slowest],
                "time_ranges_ms": [[ms(s.start_ps), ms(s.end_ps)] for s in slowest],
            },
        ),
        recoverable_ms=recoverable,
        window_ms=window,
        speedup_basis=basis,
        condition=condition,
        title=title,
    )


def _rest(split, has_gpu, work, peers=False):
    """ " The rest: work (...); time a steady step does not spend (...)." besides the kind the sentence led with
    (the waits where it led with the work; with `peers`, the other waits beside the collectives it led with)."""
    parts = []
    other = split.work if work else split.waits
    if other:
        kind = "work" if work else "waiting"
        parts.append(f"{kind} ({listed(other, has_gpu, waits=not work, split=split.collective_split)})")
    waits = {name: value for name, value in split.waits.items() if name != "collectives"}
    if peers and waits:
        parts.append(f"waiting ({listed(waits, has_gpu, waits=True)})")
    if split.recoverable:
        parts.append(f"time a steady step does not spend ({listed(split.recoverable, has_gpu)})")
    return f" The rest: {'; '.join(parts)}." if parts else ""


RULES = (checkpoint_stall, summary_stall, uneven_step_time, warmup_in_profile)
