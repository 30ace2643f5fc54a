"""Estimate: a fix's effect on the step time, as a model of this trace or an upper bound."""

from dataclasses import dataclass

MODEL = "model"
BOUND = "bound"
# A joint figure summing bounds and models (whatif.combined): at most the sum, so read as a bound ("up to").
MIXED = "mixed"


def is_bound(kind: str | None) -> bool:
    """Whether a figure of `kind` is an upper limit (a bound, or a mixed sum with a bound in it)."""
    return kind in (BOUND, MIXED)


@dataclass(frozen=True)
class Estimate:
    """The step time now and with the fix (any unit, the same for both), which kind of number it is, and how it
    was derived in one sentence (shown as the finding's `speedup_basis`)."""

    step_ms: float
    new_step_ms: float
    kind: str  # MODEL: the fix applied to this trace's timeline; BOUND: an upper bound
    basis: str

    def __post_init__(self):
        if self.kind not in (MODEL, BOUND):
            raise ValueError(f"estimate kind {self.kind!r} is not {MODEL!r} or {BOUND!r}")

    @property
    def saved_fraction(self):
        """The share of the step the fix removes, 0..1."""
        if self.step_ms <= 0:
            return 0.0
        return min(1.0, max(0.0, 1.0 - self.new_step_ms / self.step_ms))

    @property
    def speedup(self):
        """step / new step, >= 1.0."""
        return self.step_ms / self.new_step_ms if self.new_step_ms > 0 and self.new_step_ms < self.step_ms else 1.0

    def recoverable_of(self, window_ms):
        """The time the fix removes from a window of `window_ms` made of such steps."""
        return window_ms * self.saved_fraction


def model(step_ms, new_step_ms, basis):
    return Estimate(step_ms, min(step_ms, new_step_ms), MODEL, basis)


def bound(step_ms, new_step_ms, basis):
    return Estimate(step_ms, min(step_ms, new_step_ms), BOUND, basis)
