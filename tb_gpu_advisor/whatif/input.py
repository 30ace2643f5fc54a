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


def parallel_map(steps, prefetched, cores, waiting_ops=()):
    """The map parallelized over `cores` (whatif.cores.Cores, or None): each step becomes max(producer / cores,
    consumer); a parallel map also runs ahead, so producer and consumer overlap. That holds for a map whose time
    is CPU time; the trace records wall time inside the map, so where the map runs ops that may wait
    (`waiting_ops`: Python callbacks, file reads), more parallel calls than cores can run and the bound is the
    input wait: the consumer alone. Without a core count the producer could shrink to nothing: the same bound."""
    now = sum(s.step_ms for s in steps)
    if waiting_ops:
        new = sum(s.consumer_ms for s in steps)
        return bound(now, new, f"upper bound: the map runs {', '.join(waiting_ops)}, which may wait (I/O, sleep) "
                               "rather than compute, and the trace records wall time, not CPU time, so parallel "
                               "calls are not limited by the cores: at most all of the input wait goes away (the "
                               "step becomes its consumer time)")
    if cores is None:
        new = sum(s.consumer_ms for s in steps)
        return bound(now, new, "upper bound: the core count is unknown, so at most all of the input wait goes "
                               "away (the step becomes its consumer time)")
    new = sum(max(producer_ms(s, prefetched) / cores.count, s.consumer_ms) for s in steps)
    basis = (f"each step becomes max(producer / {cores.count} cores, consumer); {cores.text()}")
    return model(now, new, f"model: {basis}") if cores.recorded else bound(now, new, f"bound: {basis}")
