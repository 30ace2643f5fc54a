"""What-if of the occupancy fixes: a small grid relaunched over every SM (a model), and a kernel's occupancy raised
to a good level (a bound)."""

from dataclasses import dataclass

from tb_gpu_advisor.vocabulary import TIMES
from tb_gpu_advisor.whatif.estimate import bound, model


@dataclass(frozen=True)
class OccupancyKernel:
    """One flagged kernel row: its label (a short name), its time on the critical path over the window (its share
    of the busiest GPU's kernel time) in ms, its mean time per launch in ms, its blocks per launch and its occupancy
    (%, None unknown)."""

    name: str
    time_ms: float
    launch_ms: float
    blocks: int
    occupancy_pct: float | None = None


def spread_fraction(kernel, sms, shortest_ms):
    """The share of its time a kernel keeps relaunched with at least one block per SM: its work spread over all
    `sms` SMs at its current rate per SM (blocks / SMs), each launch no shorter than `shortest_ms` (what a launch
    costs the GPU at least) nor longer than now."""
    if kernel.launch_ms <= 0 or sms <= 0:
        return 1.0
    spread = min(1.0, kernel.blocks / sms)
    floor = min(1.0, (shortest_ms or 0.0) / kernel.launch_ms)
    return max(spread, floor)


def replayed_saving_ps(starts, ends, ready, kept):
    """How much earlier one GPU's work in one step ends with each event's duration scaled by `kept` (0..1): the
    events (ps arrays sorted by start) replayed in order. One that started once all work before it had ended
    starts as much earlier as that work now ends earlier, and one that overlapped it (another stream) as much as
    the last such event; never before `ready` (when its launch could start it; -inf where it only waited for the
    work before it). Where the GPU waited for a launch the saving stops: the host was on the critical path."""
    original_front = new_front = None
    shift = 0.0
    for start, end, earliest, fraction in zip(starts.tolist(), ends.tolist(), ready.tolist(), kept.tolist()):
        if original_front is not None and start >= original_front:
            shift = original_front - new_front
        new_start = max(earliest, start - shift)
        new_end = new_start + (end - start) * fraction
        original_front = end if original_front is None else max(original_front, end)
        new_front = new_end if new_front is None else max(new_front, new_end)
    return 0.0 if original_front is None else max(0.0, original_front - new_front)


def relaunched_over_sms(window_ms, kernels, sms, shortest_ms, critical_ms=None):
    """The window with each of `kernels` relaunched over all `sms` SMs (spread_fraction): the step loses the kernel
    time saved and keeps the rest, so it never drops below its time outside these kernels; `critical_ms` (the
    saving replayed on the GPU's timeline, replayed_saving_ps), where known and smaller, is what the step loses."""
    kernel_saved = sum(k.time_ms * (1.0 - spread_fraction(k, sms, shortest_ms)) for k in kernels)
    saved = kernel_saved if critical_ms is None else min(kernel_saved, critical_ms)
    basis = (
        f"model: each kernel relaunched with at least one block per SM, its work spread over all {sms} SMs at "
        f"its current rate per SM (time {TIMES} blocks / {sms}"
        + (f", no launch shorter than {shortest_ms * 1e3:.3g} µs" if shortest_ms else "")
        + "); the step loses the kernel time saved and keeps the rest"
    )
    if saved < 0.95 * kernel_saved:
        basis += (
            f", {saved:.3g} of the {kernel_saved:.3g} ms saved, as the GPU then waits for the host's launches "
            "that came later"
        )
    basis += ". More resident warps per SM (larger blocks, fewer registers) can do better still"
    single = [k.name for k in kernels if k.blocks == 1]
    if single:
        basis += (
            f". {single[0]} launches a single block, often a serial pass by design (a final "
            "reduction, a scan): the model holds only where its work splits into blocks"
        )
    return model(window_ms, window_ms - saved, basis)


def occupancy_raised(window_ms, kernels, good_pct):
    """The window with each of `kernels` raised to `good_pct` occupancy: throughput grows at most in proportion to
    the resident warps, so a kernel's time falls at most to time x occupancy / `good_pct` (an upper bound)."""
    saved = sum(k.time_ms * (1.0 - min(1.0, k.occupancy_pct / good_pct)) for k in kernels)
    top = min(kernels, key=lambda k: (k.occupancy_pct, -k.time_ms))
    return bound(
        window_ms,
        window_ms - saved,
        f"upper bound: with occupancy raised to {good_pct:g}%, throughput grows at most in proportion to "
        f"the resident warps, so each kernel's time falls at most to time {TIMES} occupancy / {good_pct:g}% "
        f"(up to {good_pct / top.occupancy_pct:.2f}{TIMES} faster for {top.name} at "
        f"{top.occupancy_pct:.3g}%)",
    )
