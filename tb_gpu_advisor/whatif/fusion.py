"""What-if of fusing element-wise kernels (XLA, torch.compile): the fused chain moves its bytes once at the
device's memory bandwidth, with no launch between its kernels."""

from tb_gpu_advisor.whatif.estimate import model


def fused(window_ms, target_ms, kernels, hbm_gbps, what="element-wise kernels"):
    """The window with `target_ms` of element-wise kernel time (busiest GPU) fused, where `kernels` are
    (time ms, logical bytes) of its rows: their time becomes their bytes at `hbm_gbps` (never slower than now).
    Each kernel's own bytes are counted, so the traffic fusion removes between them is kept: conservative in the
    bytes, optimistic in running at full bandwidth. None when a row's bytes or the bandwidth is unknown."""
    if not hbm_gbps or not kernels or any(nbytes is None for _, nbytes in kernels):
        return None
    before = sum(time for time, _ in kernels)
    after = sum(min(time, nbytes / (hbm_gbps * 1e9) * 1e3) for time, nbytes in kernels)
    if before <= 0:
        return None
    new_window = window_ms - target_ms * (1.0 - after / before)
    return model(
        window_ms,
        new_window,
        f"model: the {what} fused, each moving its bytes at "
        f"{hbm_gbps:g} GB/s ({before:.3g} -> {after:.3g} ms over their rows)",
    )


def chained(window_ms, target_ms, runs, what="element-wise kernels"):
    """The window with `target_ms` of element-wise kernel time fused where bytes are unknown, from `runs` [(kernels,
    ps)] of back-to-back element-wise kernels on a stream: a run of n kernels becomes one kernel that moves the
    run's inputs and outputs once, 1/n of its traffic, so it keeps 1/n of its time (a lone kernel keeps all of it:
    its bytes are its own). None without runs."""
    before = sum(ps for _, ps in runs)
    if before <= 0:
        return None
    kept = sum(ps / n for n, ps in runs)
    chains = [n for n, _ in runs if n > 1]
    mean = sum(chains) / len(chains) if chains else 1.0
    return model(
        window_ms,
        window_ms - target_ms * (1.0 - kept / before),
        f"model: each run of back-to-back {what} on a stream fused into one kernel that moves the "
        f"run's inputs and outputs once (a run of n kernels keeps 1/n of its time; {len(chains)} runs of 2 or "
        f"more, {mean:.1f} kernels on average; lone kernels keep theirs), the rest of the step as it is",
    )
