"""How far a capture can support a verdict: high, medium or low, each reason with how to capture a better trace."""

from __future__ import annotations

from dataclasses import dataclass

from tb_gpu_advisor.analysis.capture_facts import (
    activity_span,
    all_warmup,
    covered_in,
    dropped_events,
    has_kernels,
    input_fetches,
    one_pass_kernels,
    recurs_in_steps,
    steps_without_gpu_work,
    warmup_spans,
    world_size,
)
from tb_gpu_advisor.analysis.device_trace_end import device_trace_stopped
from tb_gpu_advisor.analysis.kernel_names import is_nccl
from tb_gpu_advisor.analysis.recapture import Recapture
from tb_gpu_advisor.analysis.steady_steps import CUT
from tb_gpu_advisor.model.vendor import AMD


LEVELS = ("high", "medium", "low")
MIN_STEPS = 2
WARMUP_MIN_SHARE = 0.1  # share of the steps' time (without steps: of the activity) in warm-up calls that counts
WARMUP_MOSTLY_SHARE = 0.5  # ... and the share that leaves too little else to judge


@dataclass(frozen=True)
class Confidence:
    """The level and, for anything below high, why and how to recapture; `notes` are facts that do not lower it."""

    level: str
    reasons: tuple
    notes: tuple = ()
    labels: tuple = ()  # each reason in a few words, for the verdict sentence
    warmup: bool = False  # first-use setup or compiling in the captured time: launch/host time include it
    no_step: bool = False  # no repeating step: host and launch time between kernels is not a step's
    one_rank_of: int | None = None  # the job's world size when this file is one rank of several
    tpu_only: bool = False  # a TPU profile with no GPU: nothing here measures the accelerators
    counters_only: bool = False  # a GPU capture of hardware counters without kernel times (CUPTI range profiler)

    def to_dict(self) -> dict:
        return {"level": self.level, "reasons": list(self.reasons)}


@dataclass(frozen=True)
class _Reason:
    level: str
    text: str
    label: str


def trace_confidence(model, step_set, framework, unused=None):
    """Confidence of one host's trace (docs/report.md, `summary.confidence`); pure. `unused` is the trace's
    unused_gpus.UnusedGpus: GPUs the job itself leaves idle are no gap in the capture."""
    if model.tpu_count and not model.gpus:
        return Confidence(
            "low",
            (
                f"A TPU profile ({model.tpu_count} TPU planes, no GPU): this advisor measures GPUs, so it cannot say how "
                "busy the TPUs are, why they idle or what to change, and it gives no advice; the host threads alone "
                "are no step breakdown. Open the profile in TensorBoard's Profile tab, whose XProf tools analyze "
                "TPUs.",
            ),
            labels=("a TPU profile",),
            tpu_only=True,
        )
    how = Recapture(framework.name)
    if model.gpu_metric_ranges and not model.gpus:
        return Confidence(
            "low",
            (
                f"A CUPTI range-profiler capture ({model.gpu_metric_ranges:,} cuda_profiler_range events) ran on a GPU "
                "but records hardware counters instead of kernel times: no GPU time can be measured. "
                f"{how.gpu_timeline()}",
            ),
            labels=("a range-profiler capture (no kernel times)",),
            counters_only=True,
        )
    reasons, notes = [], []
    steps = step_set.steps
    kernel_gpus = [gpu for gpu in model.gpus if has_kernels(gpu)]
    idle_gpus = [gpu for gpu in model.gpus if not has_kernels(gpu)]
    collectives = sorted({name for gpu in model.gpus for name in gpu.activity.names if is_nccl(name)})
    strategy = f"a distribution strategy: {framework.strategy}" if framework.strategy else None
    multi_gpu = bool(collectives or strategy or len(kernel_gpus) >= 2)

    fetches = input_fetches(model)
    one_pass = one_pass_kernels(kernel_gpus) if step_set.source == "none" else None
    cut = tuple(left.step for left in step_set.left_out if left.reason == CUT)
    complete = len(steps)
    if step_set.source == "none" and framework.tf_data and fetches < MIN_STEPS:
        reasons.append(
            _Reason(
                "low",
                f"The profile is shorter than two steps: no step marker, and only {fetches} "
                "call to the input iterator, which a training loop makes once per step. "
                f"{how.more_steps()}",
                "profile shorter than two steps",
            )
        )
    elif one_pass is not None:
        names, shown = one_pass
        reasons.append(
            _Reason(
                "low",
                f"No step markers, and no step repeats in the profile: each of the {names} kernels with most of "
                f"the GPU time ran in a stretch of its own ({shown}), as one pass of setup code or a "
                "micro-benchmark sweep does, instead of every step running them all. Host and launch time "
                "between them is the harness's, not a training step's. Profile the training loop itself. "
                f"{how.more_steps()}",
                "no repeating step",
            )
        )
    elif step_set.source == "none":
        reasons.append(
            _Reason(
                "medium",
                "No step markers: every share is over the span of activity, not over "
                f"training steps. {how.mark_steps()}",
                "no step markers",
            )
        )
    elif complete < MIN_STEPS:
        partial = (
            f" ({', '.join(step.name for step in cut[:3])}: cut by the capture, no GPU work in "
            f"{'it' if len(cut) == 1 else 'them'})"
            if cut
            else ""
        )
        of = f" of the {len(steps) + len(cut)} marked" if cut else ""
        reasons.append(
            _Reason(
                "low",
                f"Only {complete} complete step{of} in the profile{partial}: one step cannot "
                "show what a typical step costs or how much steps vary, and the profile "
                f"may be shorter than a step. {how.more_steps()}",
                f"{complete} complete step" if cut else f"{complete} step",
            )
        )
    holes = steps_without_gpu_work(model, steps, cut)
    if holes and complete >= MIN_STEPS:
        shown = ", ".join(step.name for step in holes[:3]) + (", ..." if len(holes) > 3 else "")
        reasons.append(
            _Reason(
                "low",
                f"A partial or sampled capture: {len(holes)} of {complete} complete steps ({shown}) hold no GPU "
                "event while the others do, so the device events of those steps were not recorded (a sampled "
                "device trace, a full activity buffer, or a tracer that stopped): their time would read as "
                f"idle. {how.fewer_events()}",
                f"{len(holes)} of {complete} steps without GPU events",
            )
        )
    missed, labels = [], []
    if multi_gpu and idle_gpus and unused is not None and unused.claim:
        notes.append(
            f"{len(idle_gpus)} of {len(model.gpus)} GPUs ran no kernel ({_ordinals(idle_gpus)}) while "
            f"{_ordinals(kernel_gpus)} worked: the job leaves them unused (environment.idle_gpus), which "
            "is no gap in the capture."
        )
    elif multi_gpu and idle_gpus:
        why = f": {unused.doubts[0]}" if unused is not None and unused.doubts else ""
        missed.append(f"{len(idle_gpus)} of {len(model.gpus)} GPUs ran no kernel ({_ordinals(idle_gpus)}){why}")
        labels.append(f"{len(idle_gpus)} of {len(model.gpus)} GPUs without kernels")
    if strategy and not collectives:
        missed.append("no collective (NCCL) kernel was captured, so the gradient all-reduces are missing")
        labels.append("no collective kernels")
    if missed:
        why = (
            f"collective kernels such as {collectives[0][:60]}"
            if collectives
            else strategy or f"kernels on {len(kernel_gpus)} GPUs"
        )
        reasons.append(
            _Reason(
                "low",
                f"A multi-GPU job ({why}) whose capture is incomplete: {'; '.join(missed)}. Balance, "
                f"collectives and the busy share cannot be judged from it. {how.all_devices()}",
                ", ".join(labels),
            )
        )
    if kernel_gpus and (not model.has_host_plane or len(model.host_activity.busy) == 0):
        reasons.append(
            _Reason(
                "medium",
                "The capture has GPU activity but no host events: why the GPU idles (input wait, launch "
                f"calls, host work) cannot be told. {how.host_events()}",
                "no host events",
            )
        )
    stopped = device_trace_stopped(model)
    if stopped is not None:
        reasons.append(
            _Reason(
                "low",
                f"A partial or sampled capture: the GPU events end {_duration(stopped.after_ps)} before the host's, "
                f"and after the last one the host made {stopped.calls:,} launch or copy calls whose GPU work is "
                "not in the trace (the device tracer stopped: a full activity buffer, or a sampled capture). "
                f"That time would read as GPU idle. {how.fewer_events()}",
                "device trace ended early",
            )
        )
    dropped = dropped_events(model)
    if dropped:
        reasons.append(
            _Reason(
                "low",
                f"The profiler reports lost or dropped events ({dropped[0][:160]}): the trace is incomplete. "
                f"{how.fewer_events()}",
                "dropped events",
            )
        )
    init = warmup_spans(model)
    if steps and len(steps) >= MIN_STEPS and all_warmup(model, steps, init):
        reasons.append(
            _Reason(
                "medium",
                f"Every captured step is a warm-up step (the run's first step, compiling/tracing, or "
                f"first-use setup): steady-state costs are not in this profile. {how.after_warmup()}",
                "only warm-up steps",
            )
        )
    elif steps and covered_in(init, steps[0].start_ps, steps[-1].end_ps) > 0 and not recurs_in_steps(init, steps):
        warm_ps = covered_in(init, steps[0].start_ps, steps[-1].end_ps)
        share = warm_ps / (steps[-1].end_ps - steps[0].start_ps)
        if share >= WARMUP_MIN_SHARE:
            reasons.append(
                _Reason(
                    "medium",
                    f"Warm-up inside the captured steps: {_duration(warm_ps)} of first-use setup (context "
                    "and stream creation, kernel module loading, first allocations) that steady-state steps "
                    f"do not pay; launch and host time include it. {how.after_warmup()}",
                    "warm-up in the steps",
                )
            )
        else:  # too little to change what the steps show: said, and no finding is degraded for it
            notes.append(
                f"Warm-up inside the captured steps: {_duration(warm_ps)} of first-use setup "
                f"({100.0 * share:.1f}% of the steps' time), too little to change the findings."
            )
    elif not steps and len(init):
        start, end = activity_span(model)
        warm_ps = covered_in(init, start, end)
        share = warm_ps / (end - start) if end > start else 0.0
        if share >= WARMUP_MIN_SHARE:
            reasons.append(
                _Reason(
                    "low" if share >= WARMUP_MOSTLY_SHARE else "medium",
                    f"Warm-up in the profile: {_duration(warm_ps)} ({100.0 * share:.0f}% of the activity) of first-use "
                    "setup (context and stream creation, kernel module loading, first allocations), which launch and "
                    f"host time include; steady-state steps do not pay it. {how.after_warmup()}",
                    "mostly warm-up" if share >= WARMUP_MOSTLY_SHARE else "warm-up in the profile",
                )
            )
    world = world_size(model)
    if world > 1:
        rank = model.environment.get("rank")
        which = f"rank {rank} of {world} ranks" if isinstance(rank, int) else f"one of {world} ranks"
        reasons.append(
            _Reason(
                "medium",
                f"This file is {which} of a distributed job: time in its collectives includes waiting for "
                "the other ranks, so slow communication cannot be told from a straggler elsewhere. "
                f"{how.all_ranks()}",
                f"one rank of {world}",
            )
        )
    if not multi_gpu and idle_gpus and kernel_gpus:
        notes.append(_idle_beside_one_gpu(idle_gpus, model.gpus, kernel_gpus, framework.name))
    level = max((reason.level for reason in reasons), key=LEVELS.index, default="high")
    ordered = sorted(reasons, key=lambda reason: -LEVELS.index(reason.level))
    return Confidence(
        level,
        tuple(reason.text for reason in ordered),
        tuple(notes),
        tuple(reason.label for reason in ordered),
        warmup=any("warm-up" in reason.label for reason in ordered),
        no_step=one_pass is not None,
        one_rank_of=world if world > 1 else None,
    )


def _duration(ps):
    return f"{ps / 1e12:.3g} s" if ps >= 1e12 else f"{ps / 1e9:.3g} ms"


def _idle_beside_one_gpu(idle_gpus, gpus, kernel_gpus, framework):
    """The note on GPUs a process sees beside the one that worked: the trace cannot tell a single-GPU job from
    one that forgot to spread its work, so it gives the fix for each reading, in the framework's and vendor's
    terms."""
    amd = any(gpu.capabilities.vendor == AMD for gpu in kernel_gpus)
    visible = (
        "HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES (CUDA_VISIBLE_DEVICES on NVIDIA)"
        if amd
        else "CUDA_VISIBLE_DEVICES (HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES on AMD)"
    )
    spread = {
        "jax": "shard the batch over jax.devices() (jax.sharding / pmap)",
        "tensorflow": "run the step under tf.distribute.MirroredStrategy() (every visible GPU)",
        "pytorch": "run a process per GPU with DistributedDataParallel (torchrun --nproc_per_node)",
    }.get(
        framework, "spread the step over them (tf.distribute.MirroredStrategy, jax.sharding, DistributedDataParallel)"
    )
    return (
        f"{len(idle_gpus)} of {len(gpus)} GPUs visible to this process ran no kernel ({_ordinals(idle_gpus)}); "
        f"nothing in the trace says the job meant to use them. If it did, {spread}; if not, restrict "
        f"{visible}."
    )


def _ordinals(gpus):
    shown = ", ".join(f"GPU {gpu.ordinal}" for gpu in gpus[:8])
    return shown + (", ..." if len(gpus) > 8 else "")
