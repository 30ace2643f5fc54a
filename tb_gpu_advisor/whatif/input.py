"""What-if of the input fixes: prefetch overlaps producer and step; a parallel map spreads the producer over
the host's cores. Per step: the consumer is the step minus its input wait."""

from dataclasses import dataclass

from tb_gpu_advisor.whatif.estimate import bound, model


@dataclass(frozen=True)
class InputStep:
    """One step's time and the part of it the step blocked waiting for the next batch, in ms."""

    step_ms: float
    wait_ms: float

    @property
    def consumer_ms(self):
        return max(0.0, self.step_ms - self.wait_ms)


def producer_ms(step, prefetched):
    """The producer's time per batch as the timeline shows it: without prefetch the producer runs inside the wait;
    with prefetch (producer ahead, still the slower side) a step takes as long as the producer."""
    return step.step_ms if prefetched else step.wait_ms


def prefetch(steps):
    """Prefetch added: each step becomes max(producer, consumer) instead of their sum."""
    now = sum(s.step_ms for s in steps)
    new = sum(max(s.wait_ms, s.consumer_ms) for s in steps)
    return model(
        now,
        new,
        "model: with prefetch the producer overlaps the step, so each step takes max(producer "
        "= its input wait, consumer = the rest of the step) instead of their sum",
    )


# The ops tf.py_function and tf.numpy_function run: Python, under its GIL.
PYTHON_CALLBACK_OPS = frozenset({"EagerPyFunc", "PyFunc", "PyFuncStateless"})


def python_floor(estimate, steps, python_share, evidence):
    """`estimate` (of parallel_map) where the map's Python calls hold the GIL: they cannot run at once however
    many calls tf.data starts, so a step takes at least the Python time it holds now (`python_share` of the time,
    the calls' time on tf.data's threads over the window): step / max(new step, Python time per step). A bound:
    it assumes the rest of the map spreads as parallel_map says."""
    now = sum(s.step_ms for s in steps)
    floor = now * python_share
    if floor <= estimate.new_step_ms:
        return estimate
    return bound(
        now,
        floor,
        f"upper bound: the map's Python calls hold Python's GIL ({evidence}), so parallel calls cannot run them at "
        f"once: a step takes at least the Python time per step, {python_share:.0%} of it now (step / max(step - "
        f"input wait, Python per step), {now / floor:.2f}x; without the GIL, {estimate.speedup:.2f}x)",
    )


def parallel_map(steps, prefetched, cores, waiting_ops=(), steps_on_gpu=True):
    """The map parallelized with `num_parallel_calls=AUTOTUNE` over `cores` (analysis.host_cores.Cores, or None):
    each step becomes at best max(producer / cores, consumer); a parallel map also runs ahead, so producer and
    consumer overlap. tf.data runs the map's calls on its thread pool, sized to the cores by default, and AUTOTUNE
    never runs more calls at once than that pool has threads, whether a call computes or waits. A `model` only
    where that is all there is to it: the cores known, the map computing in TensorFlow ops, and the step on a GPU.
    Where the map runs ops that may wait (`waiting_ops`: Python callbacks, file reads), the trace cannot tell
    waiting (which reaches that) from computing (a Python function holds the GIL and gains nothing); on a CPU-only
    run the step's own ops share the cores: both are upper bounds. Without a known core count, the bound is the
    consumer alone: all of the input wait gone."""
    now = sum(s.step_ms for s in steps)
    all_wait_gone = sum(s.consumer_ms for s in steps)
    if cores is None:
        return bound(
            now,
            all_wait_gone,
            "upper bound: the core count is unknown, so at most all of the input wait "
            "goes away (the step becomes its consumer time)",
        )
    new = sum(max(producer_ms(s, prefetched) / cores.count, s.consumer_ms) for s in steps)
    spread = now / new if 0 < new < now else 1.0
    if not cores.known:
        return bound(
            now,
            all_wait_gone,
            f"upper bound: at most all of the input wait goes away (the step becomes its consumer time); "
            f"with {cores.text()}, each step becomes at most max(producer / {cores.count}, consumer): at "
            f"least {spread:.2f}x where the map's calls spread over them",
        )
    division = (
        f"each step becomes max(producer / {cores.count}, consumer): with AUTOTUNE, tf.data runs at most as "
        f"many calls of the map at once as its thread pool has threads, sized to the cores by default; "
        f"{cores.text()}"
    )
    if waiting_ops:
        further = now / all_wait_gone if all_wait_gone > 0 and now / all_wait_gone > spread + 0.005 else None
        python = any(op in PYTHON_CALLBACK_OPS for op in waiting_ops)
        basis = (
            f"upper bound: {division}. The map runs {', '.join(waiting_ops)}: reached if its calls wait (I/O, "
            "sleep), since a waiting call holds its pool thread as a computing one does"
            + (
                "; a Python function that computes holds Python's GIL, and parallel calls of it gain nothing (or lose)"
                if python
                else ""
            )
            + (
                ". For calls that wait, only a larger pool (options.threading.private_threadpool_size) goes "
                f"further, up to {further:.2f}x with all of the input wait gone"
                if further
                else ""
            )
        )
        return bound(now, new, basis)
    if not steps_on_gpu:
        return bound(
            now,
            new,
            f"upper bound while the step's own time stays as this trace measured it: {division}; on this "
            "CPU-only run the step's own ops share the cores with the map's, before the fix as after it, so the "
            "step's own time can change either way (the parallel map's calls take cores from it, or finish "
            "sooner and leave it more): the fix can beat this bound",
        )
    return model(now, new, f"model: {division}")
