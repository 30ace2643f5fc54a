"""How far a capture can support a verdict: high, medium or low, each reason with how to capture a better trace."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.analysis.allocator_churn import slow_recurring_calls
from tb_gpu_advisor.analysis.device_trace_end import device_trace_stopped
from tb_gpu_advisor.analysis.kernel_names import is_nccl
from tb_gpu_advisor.analysis.steady_steps import CUT
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.trace import ActivityKind
from tb_gpu_advisor.model.vendor import AMD
from tb_gpu_advisor.text_match import in_order

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.model.trace import Intervals
    from tb_gpu_advisor.model.trace import StepMarker
    from tb_gpu_advisor.model.trace import TraceModel


LEVELS = ("high", "medium", "low")
MIN_STEPS = 2
RECOMMENDED_STEPS = 10
# Warm-up: a launch call this long while the GPU has nothing to run is loading the kernel's module or creating
# the context (a warm launch takes microseconds; a full launch queue blocks only while the GPU is busy).
WARMUP_LAUNCH_MIN_PS = 1_000_000_000
WARMUP_GPU_BUSY_MAX = 0.1  # share of such a launch call the GPU may be busy
WARMUP_MIN_SHARE = 0.1  # share of the steps' time (without steps: of the activity) in warm-up calls that counts
WARMUP_MOSTLY_SHARE = 0.5  # ... and the share that leaves too little else to judge
# A repeating workload interleaves its main kernels (each step runs them all); a capture whose main kernels
# each ran in one stretch of their own holds one pass of work (a sweep, setup), not repeated steps.
MAIN_KERNEL_TIME_SHARE = 0.8
MAIN_KERNEL_MAX = 10
INTERLEAVED_PAIRS_MIN = 1 / 3
_DROPPED = re.compile(r"drop|lost|overflow|exceed|truncat|missing events", re.IGNORECASE)  # or "buffer ... full"


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
    how = _Recapture(framework.name)
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
    kernel_gpus = [gpu for gpu in model.gpus if _has_kernels(gpu)]
    idle_gpus = [gpu for gpu in model.gpus if not _has_kernels(gpu)]
    collectives = sorted({name for gpu in model.gpus for name in gpu.activity.names if is_nccl(name)})
    strategy = f"a distribution strategy: {framework.strategy}" if framework.strategy else None
    multi_gpu = bool(collectives or strategy or len(kernel_gpus) >= 2)

    fetches = _input_fetches(model)
    one_pass = _one_pass(kernel_gpus) if step_set.source == "none" else None
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
    if steps and len(steps) >= MIN_STEPS and _all_warmup(model, steps, init):
        reasons.append(
            _Reason(
                "medium",
                f"Every captured step is a warm-up step (the run's first step, compiling/tracing, or "
                f"first-use setup): steady-state costs are not in this profile. {how.after_warmup()}",
                "only warm-up steps",
            )
        )
    elif steps and _in(init, steps[0].start_ps, steps[-1].end_ps) > 0 and not recurs_in_steps(init, steps):
        warm_ps = _in(init, steps[0].start_ps, steps[-1].end_ps)
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
        start, end = _activity_span(model)
        warm_ps = _in(init, start, end)
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
    world = _world_size(model)
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


def recurs_in_steps(spans: Intervals, steps: tuple) -> bool:
    """The spans recur as the steps go on: at least half of the steps after the first have one start in them (a
    call that stalls every step is the program's own cost, e.g. allocator churn, not warm-up; one long call
    across steps is not recurring); needs 3 steps or more."""
    if len(steps) < 3 or not len(spans):
        return False
    starts = np.asarray(spans.start_ps)
    later = [bool(((starts >= s.start_ps) & (starts < s.end_ps)).any()) for s in steps[1:]]
    return 2 * sum(later) >= len(later)


def dropped_events(model: TraceModel) -> list:
    """The profiler's errors, and its warnings about lost or dropped events."""
    dropped = [
        text
        for text in (*model.trace_errors, *model.trace_warnings)
        if _DROPPED.search(text) or in_order(text.lower(), "buffer", "full")
    ]
    seen = set(dropped)
    return dropped + [text for text in model.trace_errors if text not in seen]


def warmup_spans(model: TraceModel) -> Intervals:
    """Intervals of first-use setup: the trace's "init" calls, and launch calls of WARMUP_LAUNCH_MIN_PS or more
    while no GPU was busy (module loading on a kernel's first launch)."""
    host = model.host_activity
    init = host.tagged.get("init", intervals.EMPTY)
    long = np.flatnonzero(host.launch_duration_ps >= WARMUP_LAUNCH_MIN_PS)
    if len(long):
        starts = host.launch_start_ps[long]
        ends = starts + host.launch_duration_ps[long]
        busy = _gpu_busy(model)
        covered = intervals.covered_ps(busy, starts, ends)
        idle = covered <= WARMUP_GPU_BUSY_MAX * (ends - starts)
        init = intervals.union(np.concatenate([init.start_ps, starts[idle]]), np.concatenate([init.end_ps, ends[idle]]))
    # Slow allocator calls that recur step after step are allocator churn (memory.allocator_churn), not setup.
    return intervals.subtract(init, slow_recurring_calls(host, model.host_step_markers))


def _duration(ps):
    return f"{ps / 1e12:.3g} s" if ps >= 1e12 else f"{ps / 1e9:.3g} ms"


def _gpu_busy(model):
    active = [gpu.activity for gpu in model.gpus if len(gpu.activity)]
    if not active:
        return intervals.EMPTY
    return intervals.union(np.concatenate([a.start_ps for a in active]), np.concatenate([a.end_ps for a in active]))


def _in(spans, start, end):
    return int(intervals.covered_ps(spans, [start], [end])[0]) if len(spans) else 0


def _activity_span(model):
    active = [gpu.activity for gpu in model.gpus if len(gpu.activity)]
    if not active:
        return model.profile_span_ps
    return min(int(a.start_ps[0]) for a in active), max(int(a.end_ps.max()) for a in active)


def _world_size(model):
    world = model.environment.get("world_size")
    return world if isinstance(world, int) and not isinstance(world, bool) else 0


def steps_without_gpu_work(model, steps, cut=()):
    """The steps, other than the capture's cut stubs, in which no GPU has any event while GPUs work in others."""
    active = [gpu.activity for gpu in model.gpus if len(gpu.activity)]
    if len(steps) < 2 or not active:
        return ()
    starts = np.array([step.start_ps for step in steps], dtype=np.int64)
    ends = np.array([step.end_ps for step in steps], dtype=np.int64)
    worked = np.zeros(len(steps), dtype=bool)
    for activity in active:
        busy = intervals.union(activity.start_ps, activity.end_ps)
        worked |= intervals.covered_ps(busy, starts, ends) > 0
    stubs = {id(step) for step in cut}
    return tuple(step for step, did in zip(steps, worked) if not did and id(step) not in stubs) if worked.any() else ()


def _one_pass(kernel_gpus):
    """(count, "name xN, ...") when the main kernels of every GPU each ran in a stretch of their own; None when
    they interleave (a repeating step) or there are fewer than two."""
    found = None
    for gpu in kernel_gpus:
        activity = gpu.activity
        index = np.flatnonzero(
            (activity.kind == ActivityKind.KERNEL)
            & ~np.array([is_nccl(name) for name in activity.names], dtype=bool)[activity.name_id]
        )
        if not len(index):
            continue
        name_id = activity.name_id[index]
        total = np.bincount(
            name_id, weights=activity.duration_ps[index].astype(np.float64), minlength=len(activity.names)
        )
        count = np.bincount(name_id, minlength=len(activity.names))
        first = np.full(len(activity.names), np.iinfo(np.int64).max)
        last = np.zeros(len(activity.names), np.int64)
        np.minimum.at(first, name_id, activity.start_ps[index])
        np.maximum.at(last, name_id, activity.end_ps[index])
        main, covered = [], 0.0
        for key in np.argsort(-total, kind="stable"):
            if covered >= MAIN_KERNEL_TIME_SHARE * total.sum() or len(main) >= MAIN_KERNEL_MAX or total[key] <= 0:
                break
            main.append(int(key))
            covered += total[key]
        pairs = [(a, b) for i, a in enumerate(main) for b in main[i + 1 :]]
        if not pairs:
            return None
        interleaved = sum(1 for a, b in pairs if first[a] < last[b] and first[b] < last[a])
        if interleaved >= INTERLEAVED_PAIRS_MIN * len(pairs):
            return None
        found = (
            len(main),
            ", ".join(f"{_short(activity.names[key])} x{count[key]}" for key in main[:3])
            + (", ..." if len(main) > 3 else ""),
        )
    return found


def _short(name):
    return name if len(name) <= 40 else name[:37] + "..."


def _input_fetches(model):
    """Calls to tf.data's iterator (`IteratorGetNext*`): one per training step in TensorFlow loops."""
    return sum(
        count for name, (count, _) in model.host_activity.op_totals.items() if name[:15].lower() == "iteratorgetnext"
    )


def _has_kernels(gpu):
    return bool(len(gpu.activity)) and bool((gpu.activity.kind == ActivityKind.KERNEL).any())


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


def _all_warmup(model, steps, init):
    """Every step is the run's first (step 0) or has compilation/tracing or first-use setup inside it."""
    compile_spans = model.host_activity.tagged.get("compile", intervals.EMPTY)

    def warm(step: StepMarker) -> bool:
        if step.step_num == 0:
            return True
        return _in(compile_spans, step.start_ps, step.end_ps) > 0 or _in(init, step.start_ps, step.end_ps) > 0

    return all(warm(step) for step in steps)


def _capitalized(text):
    """The sentence with its first letter raised, unless it starts with code (`jax.profiler...`)."""
    first = text.split(" ", 1)[0]
    return text if "." in first or "(" in first else text[:1].upper() + text[1:]


class _Recapture:
    """How to capture a better trace, in the idiom of the framework that ran (both TF and JAX when unknown)."""

    def __init__(self, framework):
        self.framework = framework

    def _say(self, tf, jax, torch=None):
        if self.framework == "pytorch" and torch:
            return _capitalized(torch)
        if self.framework in ("tensorflow", "jax"):
            return _capitalized(tf if self.framework == "tensorflow" else jax)
        return f"TensorFlow: {tf} JAX: {jax}"

    def _tf_steps(self):
        return (
            f"Keras: TensorBoard(log_dir, profile_batch=(10, {10 + RECOMMENDED_STEPS - 1})); custom loops: tf.profiler.experimental.start(logdir) after step 10, mark each step "
            f"with tf.profiler.experimental.Trace('train', step_num=step, _r=1), stop after "
            f"{RECOMMENDED_STEPS} steps."
        )

    def _jax_steps(self):
        return (
            f"jax.profiler.start_trace(logdir) after the first steps have compiled, wrap each of "
            f"{RECOMMENDED_STEPS} steps in jax.profiler.StepTraceAnnotation('train', step_num=step), then "
            "jax.block_until_ready(...) and jax.profiler.stop_trace()."
        )

    def _torch_steps(self):
        return (
            f"torch.profiler.profile(schedule=torch.profiler.schedule(wait=5, warmup=2, "
            f"active={RECOMMENDED_STEPS}), ...) with prof.step() after every step."
        )

    def more_steps(self) -> str:
        return "Recapture at least 10 steady-state steps. " + self._say(
            self._tf_steps(), self._jax_steps(), self._torch_steps()
        )

    def after_warmup(self) -> str:
        return "Recapture later steps, after warm-up and compilation. " + self._say(
            self._tf_steps(), self._jax_steps(), self._torch_steps()
        )

    def mark_steps(self) -> str:
        return "Mark the steps. " + self._say(
            "Keras fit marks them itself (TensorBoard(profile_batch=(10, 19))); custom loops: wrap each step in "
            "tf.profiler.experimental.Trace('train', step_num=step, _r=1).",
            "wrap each step in jax.profiler.StepTraceAnnotation('train', step_num=step).",
            "call prof.step() after every step (ProfilerStep#N markers).",
        )

    def all_devices(self) -> str:
        return "Recapture with every GPU traced for the same steps. " + self._say(
            "With several workers, profile all of them at once: tf.profiler.experimental.server.start(6009) on "
            "each worker, then tf.profiler.experimental.client.trace('grpc://worker0:6009,grpc://worker1:6009', "
            "logdir, duration_ms=...) (or the Profile tab's Capture profile with every worker's address); on "
            "one host, profile_batch covers all its GPUs. Capture at least 10 steps.",
            "call jax.profiler.start_trace(logdir) in every process (each writes its own host file) for the same "
            "10+ steps, each wrapped in jax.profiler.StepTraceAnnotation('train', step_num=step).",
            "profile every rank (torch.profiler on each process, tensorboard_trace_handler writes one file per "
            "rank) for the same 10+ steps.",
        )

    def all_ranks(self) -> str:
        return (
            "Capture all ranks for the same steps into one run directory and read this file beside theirs "
            "(the multi-host view compares them). "
            + self._say(
                "With several workers: tf.profiler.experimental.client.trace with every worker's address.",
                "call jax.profiler.start_trace(logdir) in every process for the same steps.",
                "run torch.profiler on every rank with tensorboard_trace_handler(logdir) (one file per rank).",
            )
        )

    def gpu_timeline(self):
        return self._say(
            "Recapture with the GPU tracer on (tf.profiler.experimental.start with the default device tracer).",
            "Recapture with jax.profiler.start_trace(logdir) (its GPU tracer records kernel times).",
            "Recapture with torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) "
            "and no experimental_config(profiler_metrics=...): the kernel timeline and the counters are separate "
            "captures.",
        )

    def host_events(self):
        return "Recapture with the host tracer on. " + self._say(
            "tf.profiler.experimental.start(logdir, options=tf.profiler.experimental.ProfilerOptions("
            "host_tracer_level=2, device_tracer_level=1)); Keras's profile_batch records host events by default.",
            "jax.profiler.trace(logdir) records host events by default; with jax.profiler.ProfileOptions keep "
            "host_tracer_level at 2.",
            "torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], ...).",
        )

    def fewer_events(self):
        return "Recapture fewer steps at a time so the profiler's buffers do not overflow. " + self._say(
            "profile_batch=(10, 14), or tf.profiler.experimental.ProfilerOptions(host_tracer_level=1, "
            "python_tracer_level=0) to record fewer host events.",
            "a shorter jax.profiler.start_trace/stop_trace window (5 steps), without the Python tracer "
            "(jax.profiler.ProfileOptions: python_tracer_level=0).",
            "a shorter schedule (active=5) and record_shapes=False, with_stack=False.",
        )
