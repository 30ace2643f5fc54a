"""What-if of compiling an op-by-op step (tf.function, jax.jit): the Python dispatch between ops is removed, the work
each op does stays (under jax.jit less what XLA's fusion removes), and the device's own busy time stays."""

from tb_gpu_advisor.whatif.estimate import model


def eager_op_work_ms(run_total_ms, run_count, shortest_run_ms):
    """The ops' own work in TensorFlow's eager runs (`KernelAndDevice*::Run`): each run holds the runtime's cost
    per op besides the op's kernel, and the trace shows no kernel event inside it to separate the two. The cost
    is taken as the shortest run in the trace (an op that does no work pays only that): every run less it."""
    return max(0.0, run_total_ms - run_count * shortest_run_ms)


def call_overhead_ms(executions_ms, executions, work_ms):
    """JAX's cost of one call of a computation besides its work: the PjRt executions' time less the work they
    ran (on XLA's threads), per execution."""
    return max(0.0, executions_ms - work_ms) / executions if executions else 0.0


def jit_fused_work_ms(work_ms, fusible_ms):
    """The op-by-op computations' work on XLA's CPU threads once the step is jitted: XLA fuses the element-wise
    and data-movement instructions into their neighbours, so the thunks that ran them alone (`fusible_ms`) go,
    counted as zero (their arithmetic moves into a neighbour's pass over memory); dots, convolutions, reductions
    and custom calls keep their time."""
    return max(0.0, work_ms - fusible_ms)


def kept_with_fused_ms(kept_ms, fused_ms, device_busy_ms):
    """The compiled step's time with the fused thunks' time kept (the pessimistic side of the fusion term)."""
    return max(kept_ms + fused_ms, device_busy_ms)


def compiled_step(
    window_ms,
    kept_ms,
    device_busy_ms,
    what_kept,
    removed="the Python dispatch between ops is removed",
    fused_ms=None,
    device_text="the device's busy time",
):
    """The window with only `kept_ms` of host work (the ops' own work, summed over the window) and the device
    busy `device_busy_ms` left, whichever is longer; `what_kept` says in words what was kept, `removed` (a
    clause) what was removed, `device_text` what the device's time is made of. With `fused_ms` (work jit fuses, counted as zero) two approximations pull in
    opposite directions: a fused loop still does its arithmetic and one pass over memory (the zero is
    optimistic), while the dots and reductions keep their op-by-op time, which jit can shorten (pessimistic). A
    point estimate either way, so a model, whose basis also gives the speedup with the fused work kept."""
    new = max(kept_ms, device_busy_ms)
    text = (
        f"compiled, the step keeps {what_kept} ({kept_ms:.3g} ms over the window) and the device's busy time "
        f"({device_busy_ms:.3g} ms), whichever is longer; {removed}"
    ).replace("the device's busy time", device_text, 1)
    if not fused_ms:
        return model(window_ms, new, f"model: {text}")
    unfused = kept_with_fused_ms(kept_ms, fused_ms, device_busy_ms)
    at_least = window_ms / unfused if 0 < unfused < window_ms else 1.0
    return model(
        window_ms,
        new,
        f"model: {text}. Two approximations pull in opposite directions: the zero is "
        f"optimistic, since a fused loop still does the arithmetic and one pass over "
        f"memory (with that work kept, about {at_least:.2f}x), while the dots and "
        "reductions keep their op-by-op time, which jit can also shorten",
    )
