"""How far a capture can support a verdict: high, medium or low, each reason with how to capture a better trace."""

import re
from dataclasses import dataclass

from tb_gpu_advisor.analysis.kernel_names import is_nccl
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.trace import ActivityKind

LEVELS = ("high", "medium", "low")
MIN_STEPS = 2
RECOMMENDED_STEPS = 10
_DROPPED = re.compile(r"drop|lost|overflow|exceed|buffer.*full|truncat|missing events", re.IGNORECASE)


@dataclass(frozen=True)
class Confidence:
    """The level and, for anything below high, why and how to recapture; `notes` are facts that do not lower it."""

    level: str
    reasons: tuple
    notes: tuple = ()
    labels: tuple = ()  # each reason in a few words, for the verdict sentence

    def to_dict(self):
        return {"level": self.level, "reasons": list(self.reasons)}


@dataclass(frozen=True)
class _Reason:
    level: str
    text: str
    label: str


def trace_confidence(model, step_set, framework):
    """Confidence of one host's trace (docs/report.md, `summary.confidence`); pure."""
    how = _Recapture(framework.name)
    reasons, notes = [], []
    steps = step_set.steps
    kernel_gpus = [gpu for gpu in model.gpus if _has_kernels(gpu)]
    idle_gpus = [gpu for gpu in model.gpus if not _has_kernels(gpu)]
    collectives = sorted({name for gpu in model.gpus for name in gpu.activity.names if is_nccl(name)})
    strategy = f"a distribution strategy: {framework.strategy}" if framework.strategy else None
    multi_gpu = bool(collectives or strategy or len(kernel_gpus) >= 2)

    fetches = _input_fetches(model)
    if step_set.source == "none" and framework.tf_data and fetches < MIN_STEPS:
        reasons.append(_Reason("low", f"The profile is shorter than two steps: no step marker, and only {fetches} "
                                      "call to the input iterator, which a training loop makes once per step. "
                                      f"{how.more_steps()}", "profile shorter than two steps"))
    elif step_set.source == "none":
        reasons.append(_Reason("medium", "No step markers: every share is over the span of activity, not over "
                                         f"training steps. {how.mark_steps()}", "no step markers"))
    elif len(steps) < MIN_STEPS:
        reasons.append(_Reason("low", f"Only {len(steps)} complete step in the profile: one step cannot show "
                                      f"what a typical step costs or how much steps vary. {how.more_steps()}",
                               f"{len(steps)} step"))
    missed, labels = [], []
    if multi_gpu and idle_gpus:
        missed.append(f"{len(idle_gpus)} of {len(model.gpus)} GPUs ran no kernel ({_ordinals(idle_gpus)})")
        labels.append(f"{len(idle_gpus)} of {len(model.gpus)} GPUs without kernels")
    if strategy and not collectives:
        missed.append("no collective (NCCL) kernel was captured, so the gradient all-reduces are missing")
        labels.append("no collective kernels")
    if missed:
        why = (f"collective kernels such as {collectives[0][:60]}" if collectives else strategy or
               f"kernels on {len(kernel_gpus)} GPUs")
        reasons.append(_Reason(
            "low", f"A multi-GPU job ({why}) whose capture is incomplete: {'; '.join(missed)}. Balance, "
                   f"collectives and the busy share cannot be judged from it. {how.all_devices()}",
            ", ".join(labels)))
    dropped = [text for text in (*model.trace_errors, *model.trace_warnings) if _DROPPED.search(text)]
    dropped += [text for text in model.trace_errors if text not in dropped]
    if dropped:
        reasons.append(_Reason(
            "low", f"The profiler reports lost or dropped events ({dropped[0][:160]}): the trace is incomplete. "
                   f"{how.fewer_events()}", "dropped events"))
    if steps and len(steps) >= MIN_STEPS and _all_warmup(model, steps):
        reasons.append(_Reason(
            "medium", f"Every captured step is a warm-up step (the run's first step, or compiling/tracing): "
                      f"steady-state costs are not in this profile. {how.after_warmup()}",
            "only warm-up steps"))
    if not multi_gpu and idle_gpus and kernel_gpus:
        notes.append(f"{len(idle_gpus)} of {len(model.gpus)} GPUs ran no kernel ({_ordinals(idle_gpus)}); this "
                     "is a single-GPU job, so they are not part of it.")
    level = max((reason.level for reason in reasons), key=LEVELS.index, default="high")
    ordered = sorted(reasons, key=lambda reason: -LEVELS.index(reason.level))
    return Confidence(level, tuple(reason.text for reason in ordered), tuple(notes),
                      tuple(reason.label for reason in ordered))


def _input_fetches(model):
    """Calls to tf.data's iterator (`IteratorGetNext*`): one per training step in TensorFlow loops."""
    return sum(count for name, (count, _) in model.host_activity.op_totals.items()
               if name[:15].lower() == "iteratorgetnext")


def _has_kernels(gpu):
    return bool(len(gpu.activity)) and bool((gpu.activity.kind == ActivityKind.KERNEL).any())


def _ordinals(gpus):
    shown = ", ".join(f"GPU {gpu.ordinal}" for gpu in gpus[:8])
    return shown + (", ..." if len(gpus) > 8 else "")


def _all_warmup(model, steps):
    """Every step is the run's first (step 0) or has compilation/tracing inside it."""
    compile_spans = model.host_activity.tagged.get("compile", intervals.EMPTY)

    def warm(step):
        if step.step_num == 0:
            return True
        return len(compile_spans) > 0 and \
            intervals.covered_ps(compile_spans, [step.start_ps], [step.end_ps])[0] > 0
    return all(warm(step) for step in steps)


def _capitalized(text):
    return text[:1].upper() + text[1:]


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
        return (f"Keras: TensorBoard(log_dir, profile_batch=(10, {10 + RECOMMENDED_STEPS - 1})); custom loops: tf.profiler.experimental.start(logdir) after step 10, mark each step "
                f"with tf.profiler.experimental.Trace('train', step_num=step, _r=1), stop after "
                f"{RECOMMENDED_STEPS} steps.")

    def _jax_steps(self):
        return (f"jax.profiler.start_trace(logdir) after the first steps have compiled, wrap each of "
                f"{RECOMMENDED_STEPS} steps in jax.profiler.StepTraceAnnotation('train', step_num=step), then "
                "jax.block_until_ready(...) and jax.profiler.stop_trace().")

    def _torch_steps(self):
        return (f"torch.profiler.profile(schedule=torch.profiler.schedule(wait=5, warmup=2, "
                f"active={RECOMMENDED_STEPS}), ...) with prof.step() after every step.")

    def more_steps(self):
        return "Recapture at least 10 steady-state steps. " + self._say(
            self._tf_steps(), self._jax_steps(), self._torch_steps())

    def after_warmup(self):
        return "Recapture later steps, after compilation. " + self._say(
            self._tf_steps(), self._jax_steps(), self._torch_steps())

    def mark_steps(self):
        return "Mark the steps. " + self._say(
            "Keras fit marks them itself (TensorBoard(profile_batch=(10, 19))); custom loops: wrap each step in "
            "tf.profiler.experimental.Trace('train', step_num=step, _r=1).",
            "wrap each step in jax.profiler.StepTraceAnnotation('train', step_num=step).",
            "call prof.step() after every step (ProfilerStep#N markers).")

    def all_devices(self):
        return "Recapture with every GPU traced for the same steps. " + self._say(
            "With several workers, profile all of them at once: tf.profiler.experimental.server.start(6009) on "
            "each worker, then tf.profiler.experimental.client.trace('grpc://worker0:6009,grpc://worker1:6009', "
            "logdir, duration_ms=...) (or the Profile tab's Capture profile with every worker's address); on "
            "one host, profile_batch covers all its GPUs. Capture at least 10 steps.",
            "call jax.profiler.start_trace(logdir) in every process (each writes its own host file) for the same "
            "10+ steps, each wrapped in jax.profiler.StepTraceAnnotation('train', step_num=step).",
            "profile every rank (torch.profiler on each process, tensorboard_trace_handler writes one file per "
            "rank) for the same 10+ steps.")

    def fewer_events(self):
        return "Recapture fewer steps at a time so the profiler's buffers do not overflow. " + self._say(
            "profile_batch=(10, 14), or tf.profiler.experimental.ProfilerOptions(host_tracer_level=1, "
            "python_tracer_level=0) to record fewer host events.",
            "a shorter jax.profiler.start_trace/stop_trace window (5 steps), without the Python tracer "
            "(jax.profiler.ProfileOptions: python_tracer_level=0).",
            "a shorter schedule (active=5) and record_shapes=False, with_stack=False.")
