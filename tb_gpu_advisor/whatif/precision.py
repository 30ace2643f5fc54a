"""What-if of mixed precision: each 32-bit matmul/conv kernel that skips the Tensor Cores runs on the 16-bit
matrix roof. With its FLOPs and bytes (the roofline) the kernel keeps its efficiency against the roof that binds
it, now and after (a model); without them its time shrinks by the ratio of the peaks (a bound)."""

from dataclasses import dataclass

from tb_gpu_advisor.whatif.estimate import bound, model


@dataclass(frozen=True)
class MatmulKernel:
    """One kernel row to convert: its total time in ms and its summed FLOPs and logical bytes (None unknown)."""

    time_ms: float
    flops: float | None
    bytes: float | None


def _roof_seconds(flops, nbytes, tflops, gbps):
    return max(flops / (tflops * 1e12), nbytes / (gbps * 1e9))


def converted_ms(kernel, old_tflops, new_tflops, hbm_gbps):
    """(new time ms, modelled?) of one kernel: with FLOPs and bytes, the time its roofline gives in 16 bits (bytes
    halved) at the efficiency it reaches now; else its time times the ratio of the peaks."""
    if kernel.flops and kernel.bytes is not None and hbm_gbps and kernel.time_ms > 0:
        efficiency = min(1.0, _roof_seconds(kernel.flops, kernel.bytes, old_tflops, hbm_gbps) * 1e3 / kernel.time_ms)
        new = _roof_seconds(kernel.flops, kernel.bytes / 2, new_tflops, hbm_gbps) * 1e3 / max(efficiency, 1e-9)
        return min(kernel.time_ms, new), True
    return kernel.time_ms * old_tflops / new_tflops, False


def mixed_precision(window_ms, target_ms, kernels, old_tflops, new_tflops, hbm_gbps):
    """The window with `target_ms` of 32-bit matmul time (on the busiest GPU) converted as `kernels` (the rows
    of that time, any GPU) say; None without the peaks."""
    if not old_tflops or not new_tflops or not kernels:
        return None
    converted = [converted_ms(k, old_tflops, new_tflops, hbm_gbps) for k in kernels]
    before = sum(k.time_ms for k in kernels)
    after = sum(new for new, _ in converted)
    if before <= 0:
        return None
    new_window = window_ms - target_ms * (1.0 - after / before)
    if all(modelled for _, modelled in converted):
        return model(window_ms, new_window, f"model: each 32-bit matmul/conv kernel on the 16-bit matrix roof "
                                            f"({new_tflops:g} TFLOP/s, bytes halved) at the efficiency it reaches "
                                            f"now against its {old_tflops:g} TFLOP/s roof and {hbm_gbps:g} GB/s")
    return bound(window_ms, new_window, f"bound: the trace has no FLOPs for some of these kernels, so their time "
                                        f"shrinks by the peak ratio {new_tflops:g} / {old_tflops:g} TFLOP/s "
                                        "(16-bit Tensor Cores over 32-bit without them)")
