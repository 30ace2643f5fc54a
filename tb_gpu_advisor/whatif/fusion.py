"""What-if of fusing element-wise kernels (XLA, torch.compile): the fused chain moves its bytes once at the
device's memory bandwidth, with no launch between its kernels."""

from tb_gpu_advisor.whatif.estimate import model


def fused(window_ms, target_ms, kernels, hbm_gbps):
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
        f"model: the element-wise kernels fused, each moving its bytes at "
        f"{hbm_gbps:g} GB/s ({before:.3g} -> {after:.3g} ms over their rows)",
    )
