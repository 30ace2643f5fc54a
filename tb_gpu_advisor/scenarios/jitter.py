"""Seeded step-to-step variation of a scenario run: kernel and host times that differ a little every step."""

import random
from dataclasses import dataclass, replace

SPREAD = 3.0  # factors are clipped to this many standard deviations, as real step times have no far outliers
GRID_US = 1 / 64  # jittered times: a finer grid than the engine's 0.5 us (a few % of a 4 us launch must show),
# still a power of two, so sums stay exact in binary floating point, and whole picoseconds (15625 ps)


def grid_us(value):
    """Rounds to the jitter grid, never below one step of it."""
    return max(GRID_US, round(value / GRID_US) * GRID_US)


@dataclass(frozen=True)
class StepNoise:
    """Multipliers of one step's GPU time (kernels, copies) and host time (ops, launches, tf.data work)."""

    gpu: float
    host: float


@dataclass(frozen=True)
class Jitter:
    """What varies between steps of a real run, seeded so that a scenario still writes the same bytes.

    GPU time varies by about `gpu_pct` (clocks, memory contention), host time by about `host_pct` (scheduling,
    Python, tf.data); the first profiled step's host work is `first_step_factor` slower (the profiler has just
    started: CUPTI buffers are allocated and the first callbacks registered).
    """

    seed: str
    gpu_pct: float = 1.0
    host_pct: float = 3.0
    first_step_factor: float = 1.15

    def steps(self, count):
        """One StepNoise per step, the same for the same seed on any machine."""
        rng = random.Random(f"tb-gpu-advisor/jitter/{self.seed}")
        noise = []
        for index in range(count):
            gpu = _factor(rng, self.gpu_pct)
            host = _factor(rng, self.host_pct) * (self.first_step_factor if index == 0 else 1.0)
            noise.append(StepNoise(gpu, host))
        return noise


def _factor(rng, pct):
    deviation = max(-SPREAD, min(SPREAD, rng.gauss(0.0, 1.0)))
    return 1.0 + deviation * pct / 100.0


def scaled_ops(ops, noise):
    """`ops` with every kernel's duration times `noise.gpu` and every op's host time times `noise.host`."""
    return [
        replace(
            op,
            host_us=grid_us(op.host_us * noise.host) if op.host_us else 0.0,
            kernels=tuple(replace(k, duration_us=grid_us(k.duration_us * noise.gpu)) for k in op.kernels),
        )
        for op in ops
    ]


def scaled_costs(costs, noise):
    """Host costs around each op and launch times `noise.host`, on the 0.5 us grid."""
    return replace(
        costs,
        before_launch_us=grid_us(costs.before_launch_us * noise.host),
        launch_us=grid_us(costs.launch_us * noise.host),
        after_launch_us=grid_us(costs.after_launch_us * noise.host),
        between_ops_us=grid_us(costs.between_ops_us * noise.host),
    )


def scaled_copies(copies, noise):
    """(bytes, us) copies with their times times `noise.gpu`."""
    return tuple((size, grid_us(duration * noise.gpu)) for size, duration in copies)
