"""The problem/fix pairs the calibration table covers: the demo library's and the committed real captures."""

from dataclasses import dataclass

# Demo pairs whose fix does only what the finding asks must land within this share of the measured speedup (a
# bound must also hold: at least the measured speedup);
# where the fix changed more, the prediction must not be above the measured speedup by more than this share.
TOLERANCE = 0.25
EXACT = "within"  # |predicted - measured| <= TOLERANCE x measured
NOT_ABOVE = "not_above"  # predicted <= (1 + TOLERANCE) x measured: the fix did more than the finding asked
# measured <= predicted <= BOUND_MAX_FACTOR x measured: the trace only supports an upper bound (speedup_kind
# "bound"), which must hold and stay within a factor of the measurement.
BOUND_HOLDS = "bound_holds"
BOUND_MAX_FACTOR = 2.0


@dataclass(frozen=True)
class DemoPair:
    """A scenario and its fixed twin; `finding_category`: the category of the finding the fix addresses."""

    problem: str
    fixed: str
    finding_category: str
    tolerance: str = EXACT
    note: str = ""
    # True where the fixed twin changes what no finding of the baseline names, so even the combined bound is
    # exceeded: the pair misses its tolerance, shown as a miss (tests/calibration asserts it stays one).
    known_miss: bool = False


@dataclass(frozen=True)
class RealPair:
    """Two committed real captures (paths relative to the repository root) and the finding id the fix
    addresses (None where no rule sees the problem yet)."""

    name: str
    problem: str
    fixed: str
    finding: str | None
    note: str = ""


DEMO_PAIRS = (
    DemoPair("input_bound", "input_bound_fixed", "input"),
    DemoPair("launch_bound", "launch_bound_fixed", "launch", NOT_ABOVE,
             "XLA also fused the element-wise kernels and changed the GEMMs, beyond removing launch gaps, which "
             "the launch finding alone does not count; the combined bound (the gaps plus all the element-wise "
             "kernel time) does."),
    DemoPair("transfer_bound", "transfer_bound_fixed", "transfer"),
    DemoPair("low_occupancy", "low_occupancy_fixed", "occupancy", NOT_ABOVE,
             "The relaunch also runs 4 warps per block instead of 1 and cuts the grouping kernels' registers (168 "
             "to 40 for query_ball_point_gpu), more resident warps per SM than the tiny-grid model, which spreads "
             "the work at today's rate per SM; it leaves farthestpointsamplingKernel (32 blocks), which the model "
             "also relaunches, as it was."),
    DemoPair("fp32_on_tensor_cores", "fp32_on_tensor_cores_fixed", "precision", BOUND_HOLDS,
             "The trace has no FLOPs for these kernels: the estimate is the peak-ratio bound (A100: 16-bit "
             "Tensor Cores over 32-bit without them)."),
    DemoPair("multi_gpu_straggler", "multi_gpu_straggler_fixed", "communication", NOT_ABOVE,
             "Three changes at once (straggler, float16 packs overlapping backward, 2 micro-batches a step)."),
    DemoPair("host_bound", "host_bound_fixed", "host", NOT_ABOVE,
             "The fix also removes most of the host's launch-call time (0.8% of the step to 0.25%), which the host "
             "finding leaves to the launch findings, so its bound is exceeded by that much."),
)

_PAIRS_DIR = "tests/data/real/cpu_pairs"
REAL_PAIRS = (
    RealPair("tf221_cpu_keras_input", "tests/data/real/tf221_cpu_keras_input_bound.xplane.pb",
             "tests/data/real/tf221_cpu_keras_input_fixed.xplane.pb", "input.sequential_map",
             "The fix also adds prefetch (input.no_prefetch)."),
    RealPair("tf_map", f"{_PAIRS_DIR}/tf_map_sequential.xplane.pb", f"{_PAIRS_DIR}/tf_map_parallel.xplane.pb",
             "input.sequential_map"),
    RealPair("tf_prefetch", f"{_PAIRS_DIR}/tf_prefetch_no_prefetch.xplane.pb",
             f"{_PAIRS_DIR}/tf_prefetch_prefetch.xplane.pb", "input.no_prefetch"),
    RealPair("tf_eager", f"{_PAIRS_DIR}/tf_eager_eager.xplane.pb", f"{_PAIRS_DIR}/tf_eager_function.xplane.pb",
             "host.eager_execution",
             "tf.function also compiles the step (Grappler fuses MatMul, BiasAdd and Relu) and runs independent "
             "ops on two threads, and the graph executor has its own cost per op; the eager trace shows none of "
             "these, and the model takes the eager runtime's cost per op as the shortest op run."),
    RealPair("jax_loader", f"{_PAIRS_DIR}/jax_loader_inline.xplane.pb",
             f"{_PAIRS_DIR}/jax_loader_background.xplane.pb", "input.host_batch_prep"),
    RealPair("tf_python_loader", "tests/data/real/tf221_cpu_python_loader_inline.xplane.pb",
             "tests/data/real/tf221_cpu_python_loader_prefetch.xplane.pb", "input.host_batch_prep",
             "Captured while other work loaded the 2-core machine (load average 7); the fix also decodes on two "
             "tf.data threads at once, which the estimate (one loader overlapping the step; a ceiling, as the "
             "loader computes) does not count."),
    RealPair("jax_jit", f"{_PAIRS_DIR}/jax_jit_op_by_op.xplane.pb", f"{_PAIRS_DIR}/jax_jit_jit.xplane.pb",
             "host.eager_execution",
             "An upper bound: the estimate counts the op-by-op thunks that ran element-wise or data-movement "
             "instructions alone as zero (XLA fuses them under jit) and keeps the dots' and reductions' time as the "
             "op-by-op trace shows it; with the fused thunks' time kept it would be 31.8x. The jitted dots run "
             "faster than the op-by-op trace shows, while the fix's fused element-wise kernels (18% of their "
             "op-by-op time) and its call and read-back cost more than zero and one call per step: two errors "
             "that partly cancel."),
)
