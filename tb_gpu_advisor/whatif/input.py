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
    return model(now, new, "model: with prefetch the producer overlaps the step, so each step takes max(producer "
                           "= its input wait, consumer = the rest of the step) instead of their sum")


# The ops tf.py_function and tf.numpy_function run: Python, under its GIL.
PYTHON_CALLBACK_OPS = frozenset({"EagerPyFunc", "PyFunc", "PyFuncStateless"})


def parallel_map(steps, prefetched, cores, waiting_ops=()):
    """The map parallelized with `num_parallel_calls=AUTOTUNE` over `cores` (whatif.cores.Cores, or None): each
    step becomes max(producer / cores, consumer); a parallel map also runs ahead, so producer and consumer overlap.
    tf.data runs the map's calls on its thread pool, sized to the cores by default, and AUTOTUNE never runs more
    calls at once than that pool has threads; a call that waits (`waiting_ops`: Python callbacks, file reads)
    holds its thread as one that computes does, so the same division holds for maps that wait. Where the core
    count is not known, the bound is the consumer alone: all of the input wait gone."""
    now = sum(s.step_ms for s in steps)
    all_wait_gone = sum(s.consumer_ms for s in steps)
    if cores is None:
        return bound(now, all_wait_gone, "upper bound: the core count is unknown, so at most all of the input wait "
                                         "goes away (the step becomes its consumer time)")
    new = sum(max(producer_ms(s, prefetched) / cores.count, s.consumer_ms) for s in steps)
    if not cores.known:
        at_least = now / new if 0 < new < now else 1.0
        return bound(now, all_wait_gone,
                     f"upper bound: at most all of the input wait goes away (the step becomes its consumer time); "
                     f"with {cores.text()}, each step becomes at most max(producer / {cores.count}, consumer): at "
                     f"least {at_least:.2f}x")
    basis = (f"model: each step becomes max(producer / {cores.count}, consumer): with AUTOTUNE, tf.data runs at "
             f"most as many calls of the map at once as its thread pool has threads, sized to the cores by "
             f"default; {cores.text()}")
    if waiting_ops:
        further = now / all_wait_gone if all_wait_gone > 0 else None
        basis += (f". The map runs {', '.join(waiting_ops)}, which may wait (I/O, sleep) rather than compute; a call "
                  "that waits holds its pool thread all the same, so the division holds, and only a larger pool "
                  "(options.threading.private_threadpool_size) with more parallel calls goes further"
                  + (f", up to {further:.2f}x with all of the input wait gone" if further else ""))
        if any(op in PYTHON_CALLBACK_OPS for op in waiting_ops):
            basis += ("; a Python function that computes rather than waits holds Python's GIL, and parallel calls "
                      "of it gain nothing")
    return model(now, new, basis)
