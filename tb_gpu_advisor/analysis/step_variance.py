"""How step times spread over the steady steps and what the slow steps' extra time is: each slow step's excess over
the median step split by breakdown category, into time a fix could recover (idle, input, a late host), work
(device compute and copies; on a trace without a GPU the host's compute too) and waits (on the device, inside an
op, in collectives: a collective's time on one rank includes waiting for the others), and whether one step alone
makes the spread. A wait is never counted as work: it says what the step waits for, not that it is slow."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tb_gpu_advisor.analysis.breakdown import BREAKDOWN_CATEGORIES

if TYPE_CHECKING:
    from tb_gpu_advisor.analysis.breakdown import Breakdown

# Excess a fix could take out of a slow step: the device idles while nothing, the input or the host's own (late)
# work holds it.
_RECOVERABLE_WITH_GPU = ("input_wait", "input_prep", "launch", "host", "idle")
# Without a GPU the host's compute is the step's work.
_RECOVERABLE_WITHOUT_GPU = ("input_wait", "input_prep", "idle")
# Excess spent waiting: on the device (work queued, the host blocked on it), inside an op, or in collectives (which
# on one rank include waiting for the other ranks). Neither work nor a stall a fix on this side removes.
WAIT_CATEGORIES = ("collectives", "device_wait", "host_wait", "host_stall", "gil_wait")
MIN_STEPS = 3


@dataclass(frozen=True)
class StepVariance:
    """The steady steps' times and their spread, with the slow steps' excess over the median split by category."""

    times_ms: tuple  # per step, as timed
    mean_ms: float
    median_ms: float
    stdev_ms: float  # sample deviation
    excess_ms: float  # sum over the steps of their time above the median
    recoverable_ms: float  # the part of the excess in recoverable categories
    excess_by_category_ms: dict  # category -> ms of the excess, most first (only categories that grew)
    cv_without_slowest: float | None  # the coefficient of variation with the slowest step left out
    recoverable_categories: tuple  # the categories counted as recoverable on this trace
    wait_categories: tuple = WAIT_CATEGORIES  # the categories counted as waits

    @property
    def waits_ms(self) -> float:
        """The part of the excess spent waiting (WAIT_CATEGORIES)."""
        return sum(value for name, value in self.excess_by_category_ms.items() if name in self.wait_categories)

    @property
    def cv(self) -> float:
        return self.stdev_ms / self.mean_ms if self.mean_ms > 0 else 0.0

    @property
    def slowest(self) -> int:
        """Index of the slowest step."""
        return int(np.argmax(self.times_ms))

    @property
    def work_ms(self) -> float:
        """The part of the excess that is work (neither recoverable nor a wait)."""
        return max(0.0, self.excess_ms - self.recoverable_ms - self.waits_ms)


def step_variance(step_ms: np.ndarray, per_step: Breakdown, has_gpu: bool) -> StepVariance | None:
    """StepVariance of steps timed `step_ms` whose breakdown is `per_step`; None under MIN_STEPS steps."""
    times = np.asarray(step_ms, dtype=np.float64)
    if len(times) < MIN_STEPS:
        return None
    median = float(np.median(times))
    by_category = {
        name: np.asarray(per_step.category_ps[name], dtype=np.float64) / 1e9 for name in BREAKDOWN_CATEGORIES
    }
    typical = {name: float(np.median(values)) for name, values in by_category.items()}
    recoverable_names = _RECOVERABLE_WITH_GPU if has_gpu else _RECOVERABLE_WITHOUT_GPU
    excess_total = recoverable = 0.0
    grown: dict = {}
    for index, time in enumerate(times):
        excess = time - median
        if excess <= 0:
            continue
        deltas = {name: values[index] - typical[name] for name, values in by_category.items()}
        positive = {name: delta for name, delta in deltas.items() if delta > 0}
        total = sum(positive.values())
        if total <= 0:
            continue
        # The step's excess is shared among the categories that grew, in proportion to their growth.
        for name, delta in positive.items():
            grown[name] = grown.get(name, 0.0) + excess * delta / total
        recoverable += excess * sum(positive.get(name, 0.0) for name in recoverable_names) / total
        excess_total += excess
    rest = np.delete(times, int(np.argmax(times)))
    return StepVariance(
        times_ms=tuple(float(t) for t in times),
        mean_ms=float(times.mean()),
        median_ms=median,
        stdev_ms=float(times.std(ddof=1)),
        excess_ms=float(np.clip(times - median, 0, None).sum()),
        recoverable_ms=recoverable,
        excess_by_category_ms=dict(sorted(grown.items(), key=lambda item: -item[1])),
        cv_without_slowest=float(rest.std(ddof=1) / rest.mean()) if len(rest) >= 2 and rest.mean() > 0 else None,
        recoverable_categories=recoverable_names,
    )
