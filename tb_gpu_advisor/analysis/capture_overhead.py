"""How far the capture itself distorts host time: the PyTorch profiler's recording options (shapes, stacks, memory,
FLOPs) cost host time per recorded op, so host-side times read longer than in the unprofiled program."""

from dataclasses import dataclass

from tb_gpu_advisor.vocabulary import counted

# What each recording option records, as the note names it.
_RECORDS = {
    "record_shapes": "input shapes",
    "with_stack": "Python stacks",
    "profile_memory": "memory events",
    "with_flops": "FLOPs",
}
# The GPU busy this share of the step sets the step's pace: the profiler's host cost hides behind it.
DEVICE_PACED_BUSY_SHARE = 0.9


@dataclass(frozen=True)
class CaptureOverhead:
    """The recording options a trace was captured with and what its steps hold; None fields where unknown."""

    options: tuple  # model.TraceModel.profiler_options
    ops_per_step: float | None  # operator events recorded per step
    step_ms: float | None  # mean step time as timed (analysis.steps)
    gpu_ms: float | None  # mean time per step some GPU is busy; None without a GPU

    def note(self):
        """One paragraph on what the options cost and how to capture leaner; None when none is on."""
        if not self.options:
            return None
        records = " and ".join(_RECORDS[option] for option in self.options)
        flags = ", ".join(f"{option}=True" for option in self.options)
        per_step = f" for {counted(round(self.ops_per_step), 'operator event')} per step" if self.ops_per_step else ""
        host_times = (
            "host compute, launch calls, the GPU idling while the host works"
            if self.gpu_ms is not None
            else "host compute, the step itself: the host runs the whole step"
        )
        text = (
            f"This capture recorded {records} ({flags}){per_step}: the profiler's own work on each recorded op "
            f"runs on the host, so host-side times here ({host_times}) are longer than in the unprofiled program."
        )
        if self.step_ms and self.gpu_ms is not None:
            if self.gpu_ms >= DEVICE_PACED_BUSY_SHARE * self.step_ms:
                text += (
                    f" The GPU is busy {self.gpu_ms:.2f} ms of each {self.step_ms:.2f} ms step: the device sets "
                    "the pace, so the step time is the device's and changes little without the profiler."
                )
            else:
                text += (
                    f" The GPU is busy {self.gpu_ms:.2f} ms of each {self.step_ms:.2f} ms step: the host sets "
                    "the pace, so the unprofiled step is shorter and its host-bound share smaller than here."
                )
        return text + (
            " To time the host, capture leaner: torch.profiler.profile(record_shapes=False, "
            "with_stack=False, profile_memory=False, with_flops=False), and keep shapes and FLOPs for a "
            "separate capture that needs them (roofline, MFU)."
        )


def capture_overhead(model, step_count, step_ms, gpu_busy_ps):
    """CaptureOverhead of a trace; `gpu_busy_ps`: the GPU-busy time summed over the steps (analysis.breakdown).
    A trace without a GPU has no GPU time (None), not a GPU busy 0 ms."""
    has_gpu = any(len(gpu.activity) for gpu in model.gpus)
    return CaptureOverhead(
        options=tuple(model.profiler_options),
        ops_per_step=model.profiled_ops / step_count if step_count and model.profiled_ops else None,
        step_ms=step_ms,
        gpu_ms=gpu_busy_ps / step_count / 1e9 if step_count and has_gpu else None,
    )
