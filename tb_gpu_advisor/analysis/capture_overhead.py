"""How far the capture itself distorts host time: the PyTorch profiler's recording options (shapes, stacks, memory,
FLOPs) cost host time per recorded op, so host-side times read longer than in the unprofiled program."""

from __future__ import annotations

from dataclasses import dataclass, replace

from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.vocabulary import counted

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tb_gpu_advisor.analysis.host_analysis import HostAnalysis
    from tb_gpu_advisor.model.trace import TraceModel


# What each recording option records, as the note names it.
_RECORDS = {
    "record_shapes": "input shapes",
    "with_stack": "Python stacks",
    "profile_memory": "memory events",
    "with_flops": "FLOPs",
}
# The GPU busy this share of the step sets the step's pace: the profiler's host cost hides behind it.
DEVICE_PACED_BUSY_SHARE = 0.9
# The PyTorch profiler's own host time per recorded operator event with any of the options on. Measured on the
# committed H200 pairs (tests/data/real/h200*/torch, capture.json's step timed without the profiler): spread over
# the host's traced and untraced time as host_inflation does, it is 2.1-3.6 µs on the four host-paced runs (an
# eager MLP, its CUDA-graph twin, per-tensor and fused Adam). 2.5 µs is taken, below their median.
PROFILER_HOST_US_PER_OP = 2.5
# Below this share of the step the options' cost is inside run-to-run noise: no note.
MATERIAL_STEP_SHARE = 0.05
# How a finding's speedup basis and the verdict name the step its estimate is set against where it is the step
# without the profiler's own host time (UnprofiledStep).
UNPROFILED_STEP = "the step without the profiler's own host time"
# The idle causes (analysis.idle_attribution) of the GPU idling while the host works, which the profiler's host
# time lengthens (the engine's host_critical_ms and untraced time): not the waits (device_wait, host_wait,
# host_stall), a loader's input wait, or a copy call.
PROFILED_IDLE_CAUSES = ("host", "input_prep", "launch", "host_untraced")


@dataclass(frozen=True)
class CaptureOverhead:
    """The recording options a trace was captured with and what its steps hold; None fields where unknown."""

    options: tuple  # model.TraceModel.profiler_options
    ops_per_step: float | None  # operator events recorded per step
    step_ms: float | None  # mean step time as timed (analysis.steps)
    gpu_ms: float | None  # mean time per step some GPU is busy; None without a GPU in the trace
    # mean time per step every GPU idles while the host works (PROFILED_IDLE_CAUSES): what the profiler's cost
    # can take off the step, at most; None where unknown
    host_idle_ms: float | None = None
    # the step without the profiler's own host time (UnprofiledStep: the one the findings' estimates use), where
    # the report's estimates are set against it
    unprofiled: UnprofiledStep | None = None

    def shortens_step(self) -> bool:
        """Whether the note says the step is likely shorter without the profiler (and the estimates are set against
        that step): options on at a material cost, a GPU not busy most of the step, idling materially while the
        host works."""
        cost, step_ms, gpu_ms, idle = self.cost_ms, self.step_ms, self.gpu_ms, self.host_idle_ms
        if not self.options or cost is None or not step_ms or gpu_ms is None or cost < MATERIAL_STEP_SHARE * step_ms:
            return False
        return gpu_ms < DEVICE_PACED_BUSY_SHARE * step_ms and (idle is None or idle >= MATERIAL_STEP_SHARE * step_ms)

    @property
    def cost_ms(self) -> float | None:
        """The options' estimated host cost per step (ms), or None when ops per step are unknown."""
        if not self.options or not self.ops_per_step:
            return None
        return self.ops_per_step * PROFILER_HOST_US_PER_OP / 1000.0

    def note(self) -> str | None:
        """One paragraph on what the options cost and how to capture leaner; None when none is on or their
        estimated cost is not a material share of the step."""
        if not self.options:
            return None
        cost = self.cost_ms
        if cost is not None and self.step_ms and cost < MATERIAL_STEP_SHARE * self.step_ms:
            return None
        records = " and ".join(_RECORDS[option] for option in self.options)
        flags = ", ".join(f"{option}=True" for option in self.options)
        per_step = f" for {counted(round(self.ops_per_step), 'operator event')} per step" if self.ops_per_step else ""
        if self.gpu_ms is None:
            sized = (
                f" (about {cost:.1f} ms of each {self.step_ms:.2f} ms step, at "
                f"{PROFILER_HOST_US_PER_OP:g} µs per recorded op)"
                if cost is not None and self.step_ms
                else ""
            )
            text = (
                f"This capture recorded {records} ({flags}){per_step}: the profiler's own work on each recorded "
                f"op runs on the host, so host compute here is longer than in the unprofiled program{sized}."
            )
        else:
            text = (
                f"This capture recorded {records} ({flags}){per_step}: the profiler's own work on each recorded "
                "op runs on the host, so host-side times here (host compute, launch calls, the GPU idling while "
                "the host works) are longer than in the unprofiled program."
            )
        if self.step_ms and self.gpu_ms is not None:
            text += self._pace_text(cost)
        return text + (
            " To time the host, capture leaner: torch.profiler.profile(record_shapes=False, "
            "with_stack=False, profile_memory=False, with_flops=False), and keep shapes and FLOPs for a "
            "separate capture that needs them (roofline, MFU)."
        )

    def _pace_text(self, cost: float | None) -> str:
        """What the options' cost does to the step: little where the GPU is busy most of it or idles little while
        the host works; else a saving of about `cost` (the per-op model) but at most the time the GPU idles while
        the host works (a bound: the GPU's own work stays), and the host sets the pace only where that idle is
        longer than the GPU's work (where the idle is a wait, or the GPU works most of the step, it does not)."""
        gpu_ms, step_ms = self.gpu_ms, self.step_ms
        if gpu_ms is None or not step_ms:  # the caller says nothing of the pace then
            return ""
        busy = f"The GPU is busy {gpu_ms:.2f} ms of each {step_ms:.2f} ms step"
        idle = self.host_idle_ms
        if gpu_ms >= DEVICE_PACED_BUSY_SHARE * step_ms:
            return (
                f" {busy}: the device sets the pace, so the step time is the device's and changes little without "
                "the profiler."
            )
        if idle is not None and idle < MATERIAL_STEP_SHARE * step_ms:
            return (
                f" {busy} and idles only {idle:.2f} ms of it while the host works, so the step time changes little "
                "without the profiler."
            )
        per_op = f"{PROFILER_HOST_US_PER_OP:g} µs per recorded op"
        if idle is not None:
            busy += f" and idles {idle:.2f} ms of it while the host works"
        unprofiled = self.unprofiled
        if unprofiled is not None and cost is not None:
            # The one step the findings use (review finalA 2): the options' host time lengthens the step only
            # where the GPU idles while the host works.
            lead = "the host sets the pace here, and " if idle is None or idle > gpu_ms else ""
            return (
                f" {busy}: {lead}the options cost the host about {cost:.1f} ms per step (a model: {per_op}), about "
                f"{unprofiled.critical_ms:.2f} ms of it while the GPU idles waiting on the host, so without the "
                f"profiler the step is likely about {unprofiled.step_ms:.2f} ms and its host-bound share smaller, "
                "unless something the profiler does not slow (a loader, another process) sets it; the estimates "
                f"below are set against that {unprofiled.step_ms:.2f} ms step."
            )
        if cost is None:
            saving = ""
        elif idle is None:
            saving = f" by about {cost:.1f} ms (a model: {per_op})"
        elif cost <= idle:
            saving = f" by about {cost:.1f} ms (a model: {per_op}; at most that {idle:.2f} ms)"
        else:
            saving = f" by up to that {idle:.2f} ms (the model, {per_op}, puts the options' cost higher: {cost:.1f} ms)"
        pace = (
            "the host sets the pace here, so without the profiler the step is likely shorter"
            if idle is None or idle > gpu_ms
            else "without the profiler the step is likely shorter"
        )
        return (
            f" {busy}: {pace}{saving} and its host-bound share smaller, unless something the profiler does not "
            "slow (a loader, another process) sets it; the estimates below are set against the step without that "
            "cost."
        )


def capture_overhead(
    model: TraceModel, step_count: int, step_ms: float | None, gpu_busy_ps: int, host_idle_ps: int | None = None
) -> CaptureOverhead:
    """CaptureOverhead of a trace; `gpu_busy_ps`: the GPU-busy time summed over the steps (analysis.breakdown);
    `host_idle_ps`: the time every GPU idled while the host worked (PROFILED_IDLE_CAUSES), summed over them."""
    return CaptureOverhead(
        options=tuple(model.profiler_options),
        ops_per_step=model.profiled_ops / step_count if step_count and model.profiled_ops else None,
        step_ms=step_ms,
        gpu_ms=gpu_busy_ps / step_count / 1e9 if step_count and model.gpus else None,
        host_idle_ms=host_idle_ps / step_count / 1e9
        if step_count and model.gpus and host_idle_ps is not None
        else None,
    )


@dataclass(frozen=True)
class UnprofiledStep:
    """Per step: the profiler's own host time on the step's critical path and the step without it."""

    critical_ms: float
    step_ms: float


def overhead_of(model: TraceModel, analysis: HostAnalysis, unprofiled: UnprofiledStep | None = None) -> CaptureOverhead:
    """CaptureOverhead of a host's model and HostAnalysis: its steps' GPU busy and the time every GPU idled
    while the host worked (PROFILED_IDLE_CAUSES) in them."""
    stats = analysis.step_time_ms
    step_set: Any = analysis.step_set  # HostAnalysis types it as object (steps.StepSet)
    per_step: Any = analysis.per_step  # breakdown.Breakdown
    steps = step_set.timed_steps
    causes: Any = analysis.idle_causes
    host_idle = (
        int(
            sum(
                intervals.covered_ps(causes[cause], [s.start_ps for s in steps], [s.end_ps for s in steps]).sum()
                for cause in PROFILED_IDLE_CAUSES
            )
        )
        if causes and steps
        else None
    )
    overhead = capture_overhead(
        model,
        stats["count"],
        stats["mean"],
        int(per_step.gpu_busy_ps.sum()) if stats["count"] else 0,
        host_idle,
    )
    return replace(overhead, unprofiled=unprofiled)


@dataclass(frozen=True)
class HostInflation:
    """The profiler's own part of a window's host time: `work_share`, its share of the host's work, and
    `critical_ms`, its time on the step's critical path (where the GPU idled while the host worked)."""

    window_ms: float
    work_share: float
    critical_ms: float

    @property
    def unprofiled_window_ms(self) -> float:
        return self.window_ms - self.critical_ms

    def per_step(self, steps: int) -> UnprofiledStep | None:
        return UnprofiledStep(self.critical_ms / steps, self.unprofiled_window_ms / steps) if steps > 0 else None

    def as_unprofiled(self, recoverable_ms: float, host_side: bool) -> float:
        """The time to recover over the profiled window that gives the unprofiled program's ratio: a host-side
        claim keeps only its share that is the program's own work, and every claim is set against the window
        without the profiler's time: window / (window - result) = unprofiled window / (it - claim)."""
        base = self.unprofiled_window_ms
        kept = recoverable_ms * (1.0 - self.work_share) if host_side else recoverable_ms
        if base <= 0 or kept <= 0:
            return 0.0
        return min(self.window_ms, kept * self.window_ms / base)

    def as_profiled(self, work_ms: float, host_side: bool) -> float:
        """Work left in the unprofiled program (the GPU's, or the host's when `host_side`), on the profiled
        window's scale: a floor that as_unprofiled claims are held at."""
        base = self.unprofiled_window_ms
        if base <= 0:
            return work_ms
        return work_ms * (1.0 - self.work_share if host_side else 1.0) * self.window_ms / base


def host_inflation(
    model: TraceModel, window_ms: float, host_work_ms: float, host_critical_ms: float, untraced_ms: float = 0.0
) -> HostInflation | None:
    """HostInflation of a window whose host did `host_work_ms` of traced work, `host_critical_ms` of it with the
    GPU idle, and `untraced_ms` with the GPU idle and no host event (the profiler's time between ops is in no
    event), when the profiler recorded options that cost host time per op (PROFILER_HOST_US_PER_OP); None
    without such options, recorded ops or host time."""
    host_ms = host_work_ms + untraced_ms
    if not model.profiler_options or not model.profiled_ops or host_ms <= 0 or window_ms <= 0:
        return None
    share = min(1.0, model.profiled_ops * PROFILER_HOST_US_PER_OP / 1000.0 / host_ms)
    critical = min(share * (host_critical_ms + untraced_ms), window_ms)
    if critical <= 0:
        return None
    return HostInflation(window_ms=window_ms, work_share=share, critical_ms=critical)
