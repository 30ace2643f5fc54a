"""Batches prepared on the host while the device idles (input.host_batch_prep)."""

from __future__ import annotations

from tb_gpu_advisor.analysis.batch_prep import SEEN_MIN_SHARE
from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import Evidence, Finding, estimated, grade, ladder
from tb_gpu_advisor.findings.thresholds import FILES_MIN_SHARE, INPUT_HIGH_PCT, INPUT_MEDIUM_PCT, PREP_UNTRACED_MIN_MS
from tb_gpu_advisor.whatif.estimate import bound as whatif_bound, model as whatif_model
from tb_gpu_advisor.findings.rules.steps import warmup_step
from tb_gpu_advisor.findings.rules.input.waits import _DEVICE_WORDS, _PYTHON_TRACER, _file_work_note

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.findings.context import Context


def host_batch_prep(ctx: Context) -> Finding | None:
    """JAX, TensorFlow and PyTorch loops: each step starts with the host building its batch on the step thread while
    the device idles (analysis.batch_prep), not behind tf.data's IteratorGetNext or the DataLoader's __next__
    (input.gpu_waits_for_input). How sure depends on what the trace shows there: known preparation calls (Python
    tracer, TensorFlow file ops), other host work, or nothing (an untraced stall)."""
    prep = ctx.analysis.batch_prep
    framework = ctx.framework.name
    if not ctx.batch_prep_reported:  # the gate the host findings read (explained_host_time) too
        return None
    # The steps are the steady ones: a warm-up first step (steps.warmup_in_profile) is left out of the step set.
    steady_count = len(ctx.step_set.timed_steps)
    prep_ms = counted_prep_ms(ctx)
    window_ms = ctx.window_ms
    share = round(100.0 * prep_ms / window_ms, 2) if window_ms > 0 else 0.0
    severity = grade(share, INPUT_HIGH_PCT, INPUT_MEDIUM_PCT)
    if severity is None or (prep.certainty == "low" and prep_ms / steady_count < PREP_UNTRACED_MIN_MS):
        return None
    gain_ms = min(ms(prep.recoverable_ps), prep_ms)
    mean_ms = window_ms / steady_count
    which = "steady steps, warm-up excluded" if warmup_step(ctx) is not None else "steps"
    calls = [{"function": call.name, "ms": ms(call.ps), "waits": call.waits} for call in prep.calls[:5]]
    if prep.device == "gpu":
        one = len(ctx.active_gpus) <= 1
        idles, starts = ("the GPU idles", "the GPU gets work") if one else ("the GPUs idle", "the GPUs get work")
    else:
        idles, starts = _DEVICE_WORDS[prep.device]
    if prep.certainty == "high":
        what = ", ".join(f"{c['function']} {c['ms'] / ctx.step_count:.2f} ms" for c in calls[:3])
        seen = (
            f"The trace shows the step thread in batch preparation there ({what} per step); "
            "the step is dispatched after it."
        )
        if prep.waits:
            seen += " Most of it is waiting (sleep or file reads), not computing: a background loader hides it."
    elif prep.certainty == "medium" and calls:
        seen = (
            f"Known preparation calls cover {100 * prep.prep_call_share:.0f}% of that time ("
            + ", ".join(c["function"] for c in calls[:3])
            + "); other host events fill most of the rest: "
            "check what else the loop does before calling the step."
        )
    elif prep.certainty == "medium":
        seen = (
            "Host events fill that time but none is a known preparation call (NumPy, file reads, decoding, "
            "copies to the device): check what the loop does before calling the step."
        )
    else:
        seen = (
            "The trace shows almost nothing on the host there: the step thread waited or ran Python the "
            f"profile did not trace ({_PYTHON_TRACER[framework]}, before acting on this)."
        )
    note = f"{seen} Every step pays it before {starts}."
    condition = None
    if framework == "tensorflow" and ctx.pipeline.in_use and ctx.pipeline.has_prefetch:
        # The step reads from a prefetching tf.data iterator already: the fix moves the loop's own work, not the
        # loading, off the step's path.
        condition = "tf_data_prefetch"
    if framework == "pytorch" and ctx.loader_workers_in_use:
        condition = "loader_workers"
        note += (
            " The DataLoader builds batches in worker processes already (_MultiProcessingDataLoaderIter): this "
            "work runs in the training loop after the loader hands over the batch."
        )
    read_ms, decode_ms = ms(prep.read_ps), ms(prep.decode_ps)
    if read_ms + decode_ms >= FILES_MIN_SHARE * prep_ms:
        note += " " + _file_work_note(
            ctx, read_ms / ctx.step_count, decode_ms / ctx.step_count, "it", gpu=prep.device == "gpu"
        )
    # On CPU a loader that computes (rather than waits) takes cores from the step: the overlap is a ceiling.
    computing_on_cpu = prep.device != "gpu" and prep.prep_call_ps > 0 and not prep.waits
    if computing_on_cpu:
        note += (
            " This is a CPU-only run and the preparation computes: the background loader takes cores from the "
            "step, so the estimate is a ceiling."
        )
    elif prep.device != "gpu":
        note += (
            " This is a CPU-only run: the background loader shares the cores with the step, so the overlap "
            "holds for waiting, less for computing."
        )
    between_ms = ms(prep.between_steps_ps) / (ctx.step_count - 1) if ctx.step_count > 1 else 0.0
    if between_ms >= 0.1 * prep_ms / steady_count:
        note += (
            f" The device also idles {between_ms:.2f} ms between each pair of consecutive step markers, "
            "outside the steps measured here: preparation the marker leaves out."
        )
    if prep.certainty == "low" or (prep.device != "gpu" and not prep.waits):
        severity = "medium" if severity == "high" else severity
    finding = Finding(
        id="input.host_batch_prep",
        severity=severity,
        summary=f"Each step starts with {prep_ms / steady_count:.2f} ms of host batch preparation while {idles} "
        f"({share:.1f}% of the {mean_ms:.2f} ms mean step over {steady_count} {which}; a loader one "
        f"batch ahead would save {gain_ms / steady_count:.2f} ms of it per step; {_sure(prep.certainty)}).",
        evidence=Evidence(
            {
                "batch_prep_ms": prep_ms,
                "batch_prep_ms_per_step": round(prep_ms / steady_count, 3),
                "batch_prep_pct": share,
                "step_time_ms_mean": round(mean_ms, 3),
                "steps_measured": steady_count,
                "host_traced_pct": round(100 * prep.traced_share, 1),
                "prep_calls_pct": round(100 * prep.prep_call_share, 1),
                "certainty": prep.certainty,
                "device": prep.device,
                "between_steps_idle_ms": ms(prep.between_steps_ps),
                "file_read_ms_per_step": round(read_ms / ctx.step_count, 3),
                "decode_ms_per_step": round(decode_ms / ctx.step_count, 3),
                "recoverable_pct": round(100.0 * gain_ms / window_ms, 2) if window_ms > 0 else 0.0,
            },
            ladder("batch_prep_pct", share, INPUT_HIGH_PCT, INPUT_MEDIUM_PCT),
            {
                "time_ranges_ms": ctx.longest_ranges_ms(prep.gaps),
                "steps": ctx.steps_overlapping(prep.gaps),
                "functions": calls,
            },
        ),
        recoverable_ms=gain_ms,
        window_ms=window_ms,
        speedup_basis="",
        fix_note=note,
        condition=condition,
    )
    basis = (
        "per step, the preparation overlapped with the rest of that step by a loader one batch ahead: the "
        "step becomes max(preparation, rest)"
    )
    if computing_on_cpu:
        return estimated(
            finding,
            whatif_bound(
                window_ms,
                window_ms - gain_ms,
                f"upper bound: {basis}, with no core taken from the step (on CPU "
                "the loader's computing competes with the step for cores)",
            ),
        )
    # A model where the loader overlaps the step: on a GPU run, or a loader seen waiting. On a CPU-only run where
    # the trace does not show what the preparation does (an untraced stall may be computing), the loader may
    # compete with the step for cores: an upper bound.
    if prep.device == "gpu" or prep.waits:
        return estimated(finding, whatif_model(window_ms, window_ms - gain_ms, f"model: {basis}"))
    return estimated(
        finding,
        whatif_bound(
            window_ms,
            window_ms - gain_ms,
            f"upper bound: {basis}, reached if the preparation waits; on this "
            "CPU-only run the trace does not show what it does, and a loader that "
            "computes competes with the step for cores",
        ),
    )


def counted_prep_ms(ctx: Context) -> float:
    """The batch preparation in ms, as the Time line counts it where it counts most of it as input preparation
    (the breakdown's input_prep: on a GPU run the idle attribution gives part of a gap to the launch or copy call
    that ends it), so the finding, the header and the Time line show one number; else the gaps' whole time (the
    Time line keeps an uncertain gap as host compute or idle)."""
    gaps_ms = ms(ctx.analysis.batch_prep.total_ps)
    counted = ctx.category_ms("input_prep")
    return round(min(gaps_ms, counted), 3) if counted >= SEEN_MIN_SHARE * gaps_ms else gaps_ms


def _sure(certainty):
    """How sure the finding is that the time is batch preparation, in words that agree with its severity: low
    certainty holds the finding at medium, and says why."""
    if certainty == "low":
        return "that it is batch preparation is inferred, as the trace shows little host work there, so at most medium"
    return f"how sure: {certainty}"
