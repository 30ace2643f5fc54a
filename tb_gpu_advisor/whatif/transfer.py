"""What-if of the copy fixes: pageable copies at the pinned rate this trace reached (else the link's practical
rate, assumed), their exposed part shrinking with them (a model); and the ceiling of a fix that also overlaps
them with compute: all of their exposed time removed (a bound). Where the fix only pins the copies, the model is the
estimate and the overlap (a copy stream ahead of the step) its ceiling."""

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
    differ: a model under that assumption). The exposed time shrinks in proportion to the copy time."""
    rate = pinned_gbps or link_gbps
    if not rate or pageable.busy_ms <= 0:
        return None
    new_busy_ms = pageable.size_bytes / (rate * 1e9) * 1e3
    scale = min(1.0, new_busy_ms / pageable.busy_ms)
    new_window = window_ms - pageable.exposed_ms * (1.0 - scale)
    if pinned_gbps:
        return model(
            window_ms,
            new_window,
            f"model: the pageable copies at {pinned_gbps:.3g} GB/s, the best rate "
            "pinned copies reached in this trace; their exposed time shrinks with them",
        )
    return model(
        window_ms,
        new_window,
        f"model: if the link runs at the assumed {link_gbps:.3g} GB/s, the practical "
        "rate of the PCIe link this GPU generation ships with (the host's link may "
        "differ): the pageable copies take that long and their exposed time shrinks "
        "with them",
    )


def overlapped(window_ms, pageable, faster):
    """The ceiling of pinning the copies and overlapping them with compute: all of their exposed time removed. The
    basis also gives `faster` (the model of pinning alone, see pinned; None without a rate)."""
    share = 100.0 * pageable.exposed_ms / window_ms if window_ms > 0 else 0.0
    basis = (
        f"bound: pinned copies overlapped with compute remove at most all of their exposed time ({share:.1f}% "
        "of the step)"
    )
    if faster is not None:
        basis += f"; pinning alone is about {faster.speedup:.2f}x ({faster.basis.removeprefix('model: ')})"
    return bound(window_ms, window_ms - pageable.exposed_ms, basis)


def pinned_then_overlapped(window_ms, pageable, faster):
    """The model of pinning the copies (`faster`, see pinned), its basis adding the ceiling of also overlapping
    them with compute (all of their exposed time removed); that ceiling alone where there is no rate to model."""
    ceiling = overlapped(window_ms, pageable, None)
    if faster is None:
        return ceiling
    return model(
        window_ms,
        faster.new_step_ms,
        f"{faster.basis}; overlapped with compute as well (copies on a stream of their own, ahead of the "
        f"step) they would remove at most all of their exposed time, up to {ceiling.speedup:.2f}x",
    )


def best_rate_gbps(sizes_bytes, durations_ps):
    """The highest per-copy rate in GB/s among copies (the pinned ones of a trace), or None."""
    rates = [size / (duration / 1e12) / 1e9 for size, duration in zip(sizes_bytes, durations_ps) if duration > 0]
    return max(rates) if rates else None
