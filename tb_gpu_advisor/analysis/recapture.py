"""How to capture a better trace, in the idiom of the framework that ran: the advice under a lowered confidence."""

from __future__ import annotations


RECOMMENDED_STEPS = 10
# The start of the all-ranks advice (Recapture.all_ranks): a run that holds every rank replaces it (in_run_words).
ALL_RANKS_LEAD = "Capture all ranks for the same steps into one run directory"
ALL_RANKS_IN_RUN = (
    "Every rank of the job is in this run: the Ranks section joins them and splits each collective into waiting "
    "for the last rank and transfer."
)


def in_run_words(reason):
    """A confidence reason with the all-ranks advice replaced by where the run already compares them."""
    at = reason.find(ALL_RANKS_LEAD)
    return reason if at < 0 else reason[:at] + ALL_RANKS_IN_RUN


def _capitalized(text):
    """The sentence with its first letter raised, unless it starts with code (`jax.profiler...`)."""
    first = text.split(" ", 1)[0]
    return text if "." in first or "(" in first else text[:1].upper() + text[1:]


class Recapture:
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
            f"{ALL_RANKS_LEAD} and analyze the directory: its Ranks section joins them on one timeline. "
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
