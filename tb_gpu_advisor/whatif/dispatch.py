"""What-if of compiling an op-by-op step (tf.function, jax.jit): the Python dispatch between ops goes, the work
each op does stays, and the device's own busy time stays."""

from tb_gpu_advisor.whatif.estimate import model


def compiled_step(window_ms, kept_ms, device_busy_ms, what_kept):
    """The window with only `kept_ms` of host work (the ops' own runs, summed over the window) and the device
    busy `device_busy_ms` left, whichever is longer; `what_kept` says in words what was kept."""
    new = max(kept_ms, device_busy_ms)
    return model(window_ms, new, f"model: compiled, the step keeps {what_kept} ({kept_ms:.3g} ms over the "
                                 f"window) and the device's busy time ({device_busy_ms:.3g} ms), whichever is "
                                 "longer; the Python dispatch between ops goes")
