"""What-if of mixed precision: each 32-bit matmul/conv kernel runs on the 16-bit matrix roof. With its FLOPs and
bytes (the roofline) a kernel keeps the efficiency it reaches against the 32-bit roof now, but no more than a
16-bit Tensor Core GEMM commonly reaches (`reachable`): a model; without them its time shrinks by the ratio of
the peaks (a bound). The 32-bit element-wise kernels then move 16-bit activations: half the bytes, half the
time; the rest of the step keeps its time."""

from dataclasses import dataclass

from tb_gpu_advisor.whatif.estimate import bound, model

# Costed rows must hold this share of the 32-bit matrix time for their ratio to stand for the uncosted ones.
COSTED_MIN_SHARE = 0.5


@dataclass(frozen=True)
class MatmulKernel:
    """One kernel row to convert: its total time in ms and its summed FLOPs and logical bytes (None unknown), and
    the least its calls take however fast the math (`min_ms`: calls x the device's per-call latency)."""

    time_ms: float
    flops: float | None
    bytes: float | None
    min_ms: float = 0.0


def _roof_seconds(flops, nbytes, tflops, gbps):
    return max(flops / (tflops * 1e12), nbytes / (gbps * 1e9))


def converted_ms(kernel, old_tflops, new_tflops, hbm_gbps, reachable=1.0, bytes_scale=0.5):
    """(new time ms, modelled?) of one kernel: with FLOPs and bytes, the time its roofline gives in the new
    precision (bytes times `bytes_scale`: halved in 16 bits, kept in TF32) at the efficiency it reaches now against
    the 32-bit roof (a TF32 kernel's above it counts as `reachable`), at most `reachable` (0..1); else its time
    times the ratio of the peaks; never under the calls' latency (`min_ms`)."""
    if kernel.flops and kernel.bytes is not None and hbm_gbps and kernel.time_ms > 0:
        efficiency = min(
            reachable, _roof_seconds(kernel.flops, kernel.bytes, old_tflops, hbm_gbps) * 1e3 / kernel.time_ms
        )
        new = (
            _roof_seconds(kernel.flops, kernel.bytes * bytes_scale, new_tflops, hbm_gbps) * 1e3 / max(efficiency, 1e-9)
        )
        return min(kernel.time_ms, max(new, kernel.min_ms)), True
    return min(kernel.time_ms, max(kernel.time_ms * min(1.0, old_tflops / new_tflops), kernel.min_ms)), False


def mixed_precision(window_ms, target_ms, kernels, old_tflops, new_tflops, hbm_gbps, reachable=1.0, vector_ms=0.0):
    """The window with `target_ms` of 32-bit matmul time (on the busiest GPU) converted as `kernels` (the rows
    of that time, any GPU) say, and `vector_ms` of 32-bit element-wise kernel time halved; None without the peaks.
    Rows without FLOPs convert at the ratio of the costed ones where those hold most of the time (a model), else
    by the ratio of the peaks (a bound)."""
    if not old_tflops or not new_tflops or not kernels:
        return None
    converted = [(k, *converted_ms(k, old_tflops, new_tflops, hbm_gbps, reachable)) for k in kernels]
    before = sum(k.time_ms for k in kernels)
    if before <= 0:
        return None
    costed_before = sum(k.time_ms for k, _, modelled in converted if modelled)
    costed_after = sum(new for _, new, modelled in converted if modelled)
    reach = f", at most {reachable:.0%} of it" if reachable < 1.0 else ""
    text = (
        f"each 32-bit matmul/conv kernel on the 16-bit matrix roof ({new_tflops:g} TFLOP/s, bytes halved) at "
        f"the efficiency it reaches now against its roof ({old_tflops:g} TFLOP/s without Tensor Cores) and "
        f"{hbm_gbps:g} GB/s{reach}"
    )
    text += (
        f"; the 32-bit element-wise kernels ({vector_ms:.3g} ms) on 16-bit activations, half the bytes and half "
        "the time; the rest of the step as it is"
        if vector_ms > 0
        else "; the rest of the step as it is"
    )
    if costed_before >= COSTED_MIN_SHARE * before and costed_before > 0:
        ratio = costed_after / costed_before
        new_window = window_ms - target_ms * (1.0 - ratio) - vector_ms / 2
        if costed_before < before:
            text += (
                f" (the {before - costed_before:.3g} ms of these kernels without FLOPs in the trace at the "
                "ratio of the others)"
            )
        return model(window_ms, new_window, f"model: {text}")
    after = sum(new for _, new, _ in converted)
    new_window = window_ms - target_ms * (1.0 - after / before) - vector_ms / 2
    return bound(
        window_ms,
        new_window,
        f"bound: the trace has no FLOPs for most of these kernels, so their time "
        f"shrinks by the peak ratio {new_tflops:g} / {old_tflops:g} TFLOP/s "
        "(16-bit Tensor Cores over 32-bit without them)",
    )


def tf32(window_ms, target_ms, kernels, old_tflops, tf32_tflops, hbm_gbps, reachable=1.0):
    """The window with `target_ms` of 32-bit matmul time run on Tensor Cores in TF32: the same float32 bytes, the
    TF32 matrix roof; element-wise kernels unchanged. A model where FLOPs are known for most of that time, else the
    bound of the peak ratio; None without the peaks or kernels."""
    if not old_tflops or not tf32_tflops or not kernels:
        return None
    converted = [(k, *converted_ms(k, old_tflops, tf32_tflops, hbm_gbps, reachable, bytes_scale=1.0)) for k in kernels]
    before = sum(k.time_ms for k in kernels)
    if before <= 0:
        return None
    costed_before = sum(k.time_ms for k, _, modelled in converted if modelled)
    if costed_before >= COSTED_MIN_SHARE * before and costed_before > 0:
        ratio = sum(new for _, new, modelled in converted if modelled) / costed_before
        return model(window_ms, window_ms - target_ms * (1.0 - ratio), "model: TF32 on Tensor Cores")
    after = sum(new for _, new, _ in converted)
    return bound(window_ms, window_ms - target_ms * (1.0 - after / before), "bound: TF32 peak ratio")
