"""What-if of the copy fixes: pageable copies at the pinned rate this trace reached (else the link's practical
rate, assumed); the exposed part of each copy shrinks with it."""

from dataclasses import dataclass

from tb_gpu_advisor.whatif.estimate import bound, model


@dataclass(frozen=True)
class Copies:
    """A set of copies: their bytes, their summed duration and the part of it no GPU computed during, in ms."""

    size_bytes: int
    busy_ms: float
    exposed_ms: float


def pinned(window_ms, pageable, pinned_gbps, link_gbps):
    """The window with the pageable copies at `pinned_gbps` (the best rate of pinned copies in this trace) or, when
    the trace has none, `link_gbps` (the practical rate of the link the GPU generation implies; the host link may
    differ, so the result is a bound). The exposed time shrinks in proportion to the copy time."""
    rate = pinned_gbps or link_gbps
    if not rate or pageable.busy_ms <= 0:
        return None
    new_busy_ms = pageable.size_bytes / (rate * 1e9) * 1e3
    scale = min(1.0, new_busy_ms / pageable.busy_ms)
    new_window = window_ms - pageable.exposed_ms * (1.0 - scale)
    if pinned_gbps:
        return model(window_ms, new_window, f"model: the pageable copies at {pinned_gbps:.3g} GB/s, the best rate "
                                            "pinned copies reached in this trace; their exposed time shrinks with them")
    return bound(window_ms, new_window, f"bound: the pageable copies at {link_gbps:.3g} GB/s, the practical rate of "
                                        "the PCIe link this GPU generation ships with (assumed: the host's link may "
                                        "differ); their exposed time shrinks with them")


def best_rate_gbps(sizes_bytes, durations_ps):
    """The highest per-copy rate in GB/s among copies (the pinned ones of a trace), or None."""
    rates = [size / (duration / 1e12) / 1e9 for size, duration in zip(sizes_bytes, durations_ps) if duration > 0]
    return max(rates) if rates else None
