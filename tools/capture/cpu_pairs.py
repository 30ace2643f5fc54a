"""Captures real CPU problem/fix pairs with TensorFlow and JAX, for regression tests and speedup calibration.

`python -m tools.capture.cpu_pairs OUTDIR [--pair NAME]... [--steps N] [--max-mb MB] [--export DIR]
[--repeats N [--runs-label LABEL]]` writes one TensorBoard run per side, `OUTDIR/<pair>_<side>/plugins/profile/<timestamp>/<host>.xplane.pb`, each
with `--steps` steps marked `train N` (`tf.profiler.experimental.Trace("train", step_num=N, _r=1)` or
`jax.profiler.StepTraceAnnotation`) after warm-up steps, trims each file to `--max-mb`, and writes
`OUTDIR/pairs.json` (versions, CPU count, per side: file, steps, wall ms/step, the costs the pair was built
with). `--export DIR` also copies each side's file to `DIR/<pair>_<side>.xplane.pb`. `--repeats N` captures everything
N times back to back, run k into `OUTDIR/run_<k>/`, exports run 1's files and `pairs.json`, writes each run's
`pairs.json` to `DIR/runs/<LABEL>_<k>.json` (LABEL `run` unless `--runs-label` says otherwise, e.g. `idle` for
the idle-machine runs tools.calibration reads), and prints each pair's wall-clock speedup over the runs:
how far a measured speedup moves between runs of the same pair. Pairs (problem -> fix):

  tf_map       sequential -> parallel      tf.data map of a per-element read (a 'read' wait in a numpy_function),
                                           sequential vs num_parallel_calls=AUTOTUNE; both prefetch
  tf_prefetch  no_prefetch -> prefetch     the same read mapped over whole batches (batch, then a sequential
                                           map), 0.8x the step time per batch; the fix adds prefetch(AUTOTUNE)
  tf_eager     eager -> function           a GradientTape step of a deep small MLP run eagerly vs tf.function
  jax_loader   inline -> background        capture.jax_gpu's input pair (small sizes), its loader taking 0.8x
                                           the step time, 90% of it a read wait: inside the step vs a background
                                           thread with jax.device_put ahead
  jax_jit      op_by_op -> jit             capture.jax_gpu's launch pair (small sizes): op by op vs jax.jit

Held-out pairs, added after the what-if models were built and never used to tune them (the calibration table
scores them in a group of their own):

  tf_map_python   sequential -> parallel  tf_map's pipeline, its numpy_function computing in pure Python (holds
                                          the GIL) instead of waiting, sequential vs num_parallel_calls=AUTOTUNE
  tf_map_compute  sequential -> parallel  tf_map's pipeline, its map TensorFlow ops that compute (C++, no GIL)
                                          and share the cores with the step; the sequential side turns off
                                          tf.data's map_parallelization, which would parallelize it unasked
  jax_adam        op_by_op -> jit         an MLP step whose AdamW update (global-norm clipping, weight decay) is
                                          mostly element-wise ops over every parameter: op by op vs jax.jit

Costs are calibrated on the machine: the consumer step is timed first (the fastest of 8) and the input work set
as a multiple of it, so each pair is built for the same effect on a faster or a slower machine; the load of a
shared machine still moves the timings (`pairs.json` records it). TensorFlow and JAX each run in their own
subprocess (they are imported only there).
"""

import argparse
import json
import os
import pathlib
import platform
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass

from tools.capture import trim as trim_module

MARKER = "train"
DEFAULT_STEPS = 20
DEFAULT_MAX_MB = 1.4
WARMUP_STEPS = 3
TF_BATCH = 32
TF_FEATURES = 64
TF_CLASSES = 10
# Sequential producer time per batch over the consumer step: the map pair starts clearly input-bound and stays
# so after a 2-way parallel map; the prefetch pair's producer takes a bit less than its step, so overlap can
# nearly halve the step.
MAP_PRODUCER_OVER_STEP = 3.0
PREFETCH_PRODUCER_OVER_STEP = 0.8
# The JAX loader: mostly a read wait, which a background thread hides even when the step keeps both cores busy
# (capture.jax_gpu's default, half NumPy work, needs spare cores that a 2-core machine does not have).
JAX_LOADER_OVER_STEP = 0.8
JAX_LOADER_READ_SHARE = 0.9
# The held-out Python map computes instead of waiting; the same producer / step ratio as tf_map. Its cost is
# sized by timing a probe of the map alone (the sequential pipeline, no step) and scaling it linearly.
PYTHON_MAP_PROBE_ITERATIONS = 20000  # pure-Python loop iterations per element in the probe
COMPUTE_MAP_PROBE_ROWS = 64  # rows of the (rows x 256) @ (256 x 256) matmul per element in the compute map's probe
# jax_adam: an MLP of ADAM_WIDTHS (1.1M parameters) on batches of ADAM_BATCH: small matmuls, so the element-wise
# update over every parameter is a large share of the step even when jitted.
ADAM_WIDTHS = (64, 1024, 1024, 10)
ADAM_BATCH = 16


@dataclass(frozen=True)
class Pair:
    name: str
    framework: str
    problem: str
    fix: str
    what: str


PAIRS = (
    Pair("tf_map", "tf", "sequential", "parallel", "tf.data map sequential vs num_parallel_calls=AUTOTUNE"),
    Pair("tf_prefetch", "tf", "no_prefetch", "prefetch", "tf.data without vs with prefetch(AUTOTUNE)"),
    Pair("tf_eager", "tf", "eager", "function", "GradientTape step eagerly vs under tf.function"),
    Pair("jax_loader", "jax", "inline", "background", "NumPy loader in the step vs a background prefetch thread"),
    Pair("jax_jit", "jax", "op_by_op", "jit", "small deep MLP step op by op vs jax.jit"),
    Pair(
        "tf_map_python",
        "tf",
        "sequential",
        "parallel",
        "tf.data map of a pure-Python numpy_function (GIL-bound) sequential vs num_parallel_calls=AUTOTUNE",
    ),
    Pair(
        "tf_map_compute",
        "tf",
        "sequential",
        "parallel",
        "tf.data map of TensorFlow compute ops sequential vs num_parallel_calls=AUTOTUNE",
    ),
    Pair("jax_adam", "jax", "op_by_op", "jit", "MLP step with an element-wise AdamW update op by op vs jax.jit"),
)
HELD_OUT = ("tf_map_python", "tf_map_compute", "jax_adam")  # captured after the models were built
PAIR_NAMES = tuple(pair.name for pair in PAIRS)


@dataclass(frozen=True)
class SideResult:
    pair: str
    side: str
    role: str  # "problem" or "fix"
    path: str
    bytes: int
    steps: int
    step_ms_mean: float  # wall time per step the file holds, measured by the script
    step_times_ms: tuple
    costs: dict


def _pair(name):
    return next(pair for pair in PAIRS if pair.name == name)


def _newest_xplane(run_dir):
    files = sorted(pathlib.Path(run_dir).glob("**/plugins/profile/*/*.xplane.pb"), key=lambda p: p.stat().st_mtime_ns)
    if not files:
        raise RuntimeError(f"the profiler wrote no .xplane.pb under {run_dir}")
    return files[-1]


def _finish(pair, side, run_dir, times, costs, max_mb):
    """Trims the side's file; its timings are those of the steps the file keeps."""
    path = _newest_xplane(run_dir)
    result = trim_module.trim_file(str(path), max_mb, MARKER)
    role = "problem" if side == pair.problem else "fix"
    kept = times[: result.steps_after]
    return SideResult(
        pair.name,
        side,
        role,
        str(path),
        result.bytes_after,
        result.steps_after,
        round(sum(kept) / len(kept), 3),
        tuple(round(t, 3) for t in kept),
        costs,
    )


# --- TensorFlow ------------------------------------------------------------------------------------------------


def _import_tensorflow():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    os.environ["CUDA_VISIBLE_DEVICES"] = "-1"
    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")
    return tf


def profiled_tf_loop(tf, run_dir, step, batches, steps, options=None):
    """Warm-up steps, then `steps` profiled steps (with profiler `options`, or TensorFlow's defaults); next() sits
    inside the step marker. Returns each profiled step's wall ms."""
    for _ in range(WARMUP_STEPS):
        float(step(*next(batches)))
    times = []
    tf.profiler.experimental.start(str(run_dir), options=options)
    try:
        for number in range(WARMUP_STEPS, WARMUP_STEPS + steps):
            started = time.perf_counter()
            with tf.profiler.experimental.Trace(MARKER, step_num=number, _r=1):
                float(step(*next(batches)))
            times.append((time.perf_counter() - started) * 1e3)
    finally:
        tf.profiler.experimental.stop()
    return times


class _TensorFlowPairs:
    """The TensorFlow sides: one custom training loop, different input pipelines or execution modes."""

    def __init__(self, tf, steps):
        self.tf, self.steps = tf, steps

    def _model(self, width, depth):
        tf = self.tf
        tf.keras.utils.set_random_seed(0)
        layers = [tf.keras.Input(shape=(TF_FEATURES,))]
        layers += [tf.keras.layers.Dense(width, activation="relu") for _ in range(depth)]
        return tf.keras.Sequential(layers + [tf.keras.layers.Dense(TF_CLASSES)])

    def _step_fn(self, model, compiled):
        tf = self.tf
        optimizer = tf.keras.optimizers.SGD(0.01)
        loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

        def step(x, y):
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        return tf.function(step) if compiled else step

    def _batch(self, seed=0):
        import numpy as np

        rng = np.random.default_rng(seed)
        return (
            rng.standard_normal((TF_BATCH, TF_FEATURES)).astype("float32"),
            rng.integers(0, TF_CLASSES, TF_BATCH).astype("int32"),
        )

    def consumer_ms(self, width, depth):
        """Fastest wall time of the compiled step on a batch already in memory (the one least slowed by others)."""
        step = self._step_fn(self._model(width, depth), compiled=True)
        x, y = self._batch()
        times = []
        for _ in range(WARMUP_STEPS + 8):
            started = time.perf_counter()
            float(step(x, y))
            times.append((time.perf_counter() - started) * 1e3)
        return min(times[WARMUP_STEPS:])

    def python_map(self, iterations):
        """A map whose numpy_function computes in pure Python for `iterations` loop turns, holding the GIL."""
        tf = self.tf

        def compute(x):
            total = 0.0
            for turn in range(iterations):
                total += turn * 0.5
            return x

        def preprocess(x, y):
            return tf.ensure_shape(tf.numpy_function(compute, [x], tf.float32), [TF_FEATURES]), y

        return preprocess

    def tf_compute_map(self, rows):
        """A map of TensorFlow ops that compute (C++, no GIL): the element tiled into a `rows` x 256 matrix, one
        matmul by a fixed 256 x 256 matrix, tanh, mean: a few ops per element whatever their cost, so the trace
        stays small."""
        tf = self.tf
        import numpy as np

        side = 4 * TF_FEATURES
        weights = tf.constant(np.random.default_rng(4).standard_normal((side, side)).astype("float32") / side)

        def preprocess(x, y):
            matrix = tf.tile(x[None, :], [rows, 4])
            return x + tf.reduce_mean(tf.tanh(tf.matmul(matrix, weights))), y

        return preprocess

    def producer_ms(self, preprocess, keep_sequential):
        """Time per batch of the sequential map alone (no step, no prefetch): 8 batches after 2, over 8. A mean,
        not the fastest: MapAndBatch computes ahead, so single next() calls can return a batch made earlier."""
        batches = iter(
            self.dataset(
                None, parallel_map=False, prefetch=False, preprocess=preprocess, keep_sequential=keep_sequential
            )
        )
        for _ in range(2):
            next(batches)
        started = time.perf_counter()
        for _ in range(8):
            next(batches)
        return (time.perf_counter() - started) * 1e3 / 8

    def dataset(self, element_s, parallel_map, prefetch, batch_first=False, preprocess=None, keep_sequential=False):
        """Batches of `TF_BATCH` elements, each read by a numpy_function that waits `element_s` (a storage read),
        or mapped by `preprocess` where given; with neither, straight from memory. `batch_first` maps whole
        batches (a vectorized map) with a plain Map stage, which, unlike the MapAndBatch that map-then-batch
        becomes, computes only when asked: without prefetch, reading and the step take turns. `keep_sequential`
        turns off tf.data's map_parallelization, which runs a sequential map of stateless ops in parallel."""
        tf = self.tf
        import numpy as np

        rng = np.random.default_rng(0)
        count = (WARMUP_STEPS + self.steps + 4) * TF_BATCH
        features = rng.standard_normal((count, TF_FEATURES)).astype("float32")
        labels = rng.integers(0, TF_CLASSES, size=count).astype("int32")

        def read(x):
            time.sleep(element_s * (len(x) if x.ndim > 1 else 1))
            return x

        def read_element(x, y):
            shape = [None, TF_FEATURES] if batch_first else [TF_FEATURES]
            return tf.ensure_shape(tf.numpy_function(read, [x], tf.float32), shape), y

        dataset = tf.data.Dataset.from_tensor_slices((features, labels))
        parallelism = tf.data.AUTOTUNE if parallel_map else None
        if batch_first:
            dataset = dataset.batch(TF_BATCH).map(read_element, num_parallel_calls=parallelism)
        else:
            if preprocess is not None or element_s is not None:
                dataset = dataset.map(preprocess or read_element, num_parallel_calls=parallelism)
            dataset = dataset.batch(TF_BATCH)
        if keep_sequential and not parallel_map:
            options = tf.data.Options()
            options.experimental_optimization.map_parallelization = False
            dataset = dataset.with_options(options)
        if prefetch:
            return dataset.prefetch(tf.data.AUTOTUNE)
        # TensorFlow injects a prefetch after a final synchronous map by default: the pipeline without prefetch
        # the pair is about must turn that off.
        options = tf.data.Options()
        options.experimental_optimization.inject_prefetch = False
        return dataset.with_options(options)

    def loop(self, run_dir, step, batches):
        """Warm-up steps, then the profiled steps; next() sits inside the marker. Returns each step's wall ms."""
        return profiled_tf_loop(self.tf, run_dir, step, batches, self.steps)

    def capture_computing_map(self, pair, outdir, max_mb, width, depth):
        """A held-out map pair whose map computes (Python, or TensorFlow ops): its cost sized by a probe of the map
        alone to MAP_PRODUCER_OVER_STEP times the consumer step per batch; sequential, then AUTOTUNE; both
        prefetch."""
        consumer_ms = self.consumer_ms(width, depth)
        if pair.name == "tf_map_python":
            probe_cost, make_map, unit = PYTHON_MAP_PROBE_ITERATIONS, self.python_map, "python_iterations"
        else:
            probe_cost, make_map, unit = COMPUTE_MAP_PROBE_ROWS, self.tf_compute_map, "matmul_rows"
        keep_sequential = pair.name == "tf_map_compute"  # stateless ops: TensorFlow would parallelize the map
        probe_ms = self.producer_ms(make_map(probe_cost), keep_sequential)
        cost = max(1, round(probe_cost * MAP_PRODUCER_OVER_STEP * consumer_ms / probe_ms))
        costs = {
            "width": width,
            "depth": depth,
            "consumer_ms": round(consumer_ms, 3),
            "producer_over_step": MAP_PRODUCER_OVER_STEP,
            f"probe_{unit}": probe_cost,
            "probe_producer_ms_per_batch": round(probe_ms, 3),
            f"{unit}_per_element": cost,
        }
        results = []
        for side, parallel_map in ((pair.problem, False), (pair.fix, True)):
            step = self._step_fn(self._model(width, depth), compiled=True)
            batches = iter(
                self.dataset(
                    None, parallel_map, prefetch=True, preprocess=make_map(cost), keep_sequential=keep_sequential
                )
            )
            run_dir = pathlib.Path(outdir) / f"{pair.name}_{side}"
            results.append(_finish(pair, side, run_dir, self.loop(run_dir, step, batches), costs, max_mb))
        return results

    def capture(self, pair, outdir, max_mb):
        width, depth = {
            "tf_eager": (32, 12),
            "tf_map": (1024, 4),
            "tf_prefetch": (1024, 4),
            "tf_map_python": (1024, 4),
            "tf_map_compute": (1024, 4),
        }[pair.name]
        if pair.name in ("tf_map_python", "tf_map_compute"):
            return self.capture_computing_map(pair, outdir, max_mb, width, depth)
        results = []
        if pair.name == "tf_eager":
            costs = {"width": width, "depth": depth}
            for side, compiled in ((pair.problem, False), (pair.fix, True)):
                step = self._step_fn(self._model(width, depth), compiled)
                batches = iter(self.dataset(None, parallel_map=False, prefetch=True))
                run_dir = pathlib.Path(outdir) / f"{pair.name}_{side}"
                results.append(_finish(pair, side, run_dir, self.loop(run_dir, step, batches), costs, max_mb))
            return results
        ratio = MAP_PRODUCER_OVER_STEP if pair.name == "tf_map" else PREFETCH_PRODUCER_OVER_STEP
        consumer_ms = self.consumer_ms(width, depth)
        element_s = ratio * consumer_ms / 1e3 / TF_BATCH
        costs = {
            "width": width,
            "depth": depth,
            "consumer_ms": round(consumer_ms, 3),
            "element_read_ms": round(element_s * 1e3, 4),
            "producer_over_step": ratio,
        }
        sides = (
            ((pair.problem, False, True), (pair.fix, True, True))
            if pair.name == "tf_map"
            else ((pair.problem, False, False), (pair.fix, False, True))
        )
        for side, parallel_map, prefetch in sides:
            step = self._step_fn(self._model(width, depth), compiled=True)
            batches = iter(self.dataset(element_s, parallel_map, prefetch, batch_first=pair.name == "tf_prefetch"))
            run_dir = pathlib.Path(outdir) / f"{pair.name}_{side}"
            results.append(_finish(pair, side, run_dir, self.loop(run_dir, step, batches), costs, max_mb))
        return results


# --- JAX -------------------------------------------------------------------------------------------------------


class _AdamStep:
    """An MLP step whose AdamW update is most of its ops: global-norm clipping, both moments, bias correction and
    weight decay, each an element-wise jnp call over every parameter when run op by op."""

    def __init__(self, jax, jnp):
        self.jax, self.jnp = jax, jnp

    def init(self):
        jax, jnp = self.jax, self.jnp
        keys = jax.random.split(jax.random.PRNGKey(3), len(ADAM_WIDTHS))
        params = [
            (jax.random.normal(key, (fan_in, fan_out)) / fan_in**0.5, jnp.zeros((fan_out,)))
            for key, fan_in, fan_out in zip(keys, ADAM_WIDTHS[:-1], ADAM_WIDTHS[1:])
        ]
        zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
        x = jax.random.normal(keys[-1], (ADAM_BATCH, ADAM_WIDTHS[0]))
        labels = jnp.arange(ADAM_BATCH) % ADAM_WIDTHS[-1]
        return {"params": params, "m": zeros, "v": zeros, "t": 0}, x, labels

    def step(self, params, m, v, t, x, labels):
        jax, jnp = self.jax, self.jnp

        def loss_fn(params):
            h = x
            for w, b in params[:-1]:
                h = jax.nn.relu(h @ w + b)
            logits = h @ params[-1][0] + params[-1][1]
            return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], axis=1))

        loss, grads = jax.value_and_grad(loss_fn)(params)
        leaves = jax.tree_util.tree_leaves(grads)
        norm = jnp.sqrt(sum(jnp.sum(g * g) for g in leaves))
        scale = jnp.minimum(1.0, 1.0 / (norm + 1e-6))
        tree_map = jax.tree_util.tree_map
        grads = tree_map(lambda g: g * scale, grads)
        m = tree_map(lambda m_, g: 0.9 * m_ + 0.1 * g, m, grads)
        v = tree_map(lambda v_, g: 0.999 * v_ + 0.001 * g * g, v, grads)
        m_hat_scale, v_hat_scale = 1.0 / (1.0 - 0.9**t), 1.0 / (1.0 - 0.999**t)
        params = tree_map(
            lambda p, m_, v_: p - 1e-3 * ((m_ * m_hat_scale) / (jnp.sqrt(v_ * v_hat_scale) + 1e-8) + 0.01 * p),
            params,
            m,
            v,
        )
        return params, m, v, loss

    def run(self, compiled):
        """A step function for jax_gpu's profiled loop: one update, then the loss read back."""
        state, x, labels = self.init()
        step = self.jax.jit(self.step) if compiled else self.step

        def run(_i):
            state["t"] += 1
            state["params"], state["m"], state["v"], loss = step(
                state["params"], state["m"], state["v"], float(state["t"]), x, labels
            )
            float(loss)

        return run


def _capture_jax(pairs, outdir, steps, max_mb):
    from tools.capture import jax_gpu

    jax, jnp = jax_gpu._import_jax()
    work = jax_gpu.Workload(
        jax, jnp, jax_gpu.SIZES["small"], loader_over_step=JAX_LOADER_OVER_STEP, loader_read_share=JAX_LOADER_READ_SHARE
    )
    runs = {"jax_loader": ("input_bound", "input_prefetch"), "jax_jit": ("launch_bound", "launch_jit")}
    results = []
    for pair in pairs:
        if pair.name == "jax_adam":
            costs = {
                "widths": list(ADAM_WIDTHS),
                "batch": ADAM_BATCH,
                "parameters": sum(a * b + b for a, b in zip(ADAM_WIDTHS[:-1], ADAM_WIDTHS[1:])),
            }
            for side, compiled in ((pair.problem, False), (pair.fix, True)):
                run_dir = pathlib.Path(outdir) / f"{pair.name}_{side}"
                shutil.rmtree(run_dir, ignore_errors=True)
                times = jax_gpu._profiled_loop(jax, run_dir, steps, _AdamStep(jax, jnp).run(compiled), False)
                results.append(_finish(pair, side, run_dir, times, costs, max_mb))
            continue
        for side, run in zip((pair.problem, pair.fix), runs[pair.name]):
            captured = jax_gpu.capture_run(work, outdir, run, steps)
            run_dir = pathlib.Path(outdir) / f"{pair.name}_{side}"
            shutil.rmtree(run_dir, ignore_errors=True)
            shutil.move(str(pathlib.Path(outdir) / run), str(run_dir))
            costs = {"sizes": asdict(work.sizes)}
            if pair.name == "jax_loader":
                read_s, units = work.loader_cost()
                costs.update(
                    loader_read_ms=round(read_s * 1e3, 3),
                    loader_numpy_units=units,
                    loader_over_step=JAX_LOADER_OVER_STEP,
                    loader_read_share=JAX_LOADER_READ_SHARE,
                    healthy_step_ms=round(work.step_ms_estimate, 3),
                )
            results.append(_finish(pair, side, run_dir, list(captured.step_times_ms), costs, max_mb))
    return results, {"jax": jax.__version__, "jaxlib": jax_gpu._jaxlib_version()}


def _capture_framework(framework, names, outdir, steps, max_mb):
    """Captures the named pairs of one framework in this process; returns (results, versions)."""
    pairs = [_pair(name) for name in names]
    if framework == "jax":
        return _capture_jax(pairs, outdir, steps, max_mb)
    tf = _import_tensorflow()
    capturer = _TensorFlowPairs(tf, steps)
    results = [result for pair in pairs for result in capturer.capture(pair, outdir, max_mb)]
    return results, {"tensorflow": tf.__version__}


def _run_in_subprocess(framework, names, args, outdir):
    """Runs one framework's pairs in a child process (TensorFlow and JAX stay apart); returns its JSON."""
    command = [
        sys.executable,
        "-m",
        "tools.capture.cpu_pairs",
        str(outdir),
        "--framework-only",
        framework,
        "--steps",
        str(args.steps),
        "--max-mb",
        str(args.max_mb),
    ]
    for name in names:
        command += ["--pair", name]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    sys.stderr.write(completed.stderr[-4000:] if completed.returncode else "")
    if completed.returncode != 0:
        raise RuntimeError(f"the {framework} capture failed (exit {completed.returncode})")
    return json.loads(completed.stdout.strip().splitlines()[-1])


def _capture_once(args, names, outdir, export):
    """One capture of `names` into `outdir`: both frameworks, pairs.json, and the files copied to `export`
    (None: not copied). Returns the pairs.json summary, or None when a framework's capture failed."""
    started = time.monotonic()
    load_before = list(os.getloadavg())  # the machine may be shared: what else ran shows here
    sides, versions = [], {}
    for framework in ("tf", "jax"):
        chosen = [name for name in names if _pair(name).framework == framework]
        if not chosen:
            continue
        try:
            child = _run_in_subprocess(framework, chosen, args, outdir)
        except (RuntimeError, subprocess.TimeoutExpired, ValueError) as error:
            print(f"error: {error}", file=sys.stderr)
            return None
        sides += child["sides"]
        versions.update(child["versions"])
    import numpy as np

    summary = {
        "versions": {**versions, "numpy": np.__version__, "python": platform.python_version()},
        "machine": {
            "cpu_count": os.cpu_count(),
            "platform": platform.platform(),
            "load_average_before": load_before,
            "load_average_after": list(os.getloadavg()),
        },
        "steps": args.steps,
        "warmup_steps": WARMUP_STEPS,
        "pairs": {},
    }
    for side in sides:
        entry = summary["pairs"].setdefault(side["pair"], {"what": _pair(side["pair"]).what})
        entry[side["role"]] = {**side, "path": os.path.relpath(side["path"], outdir)}
        print(
            f"{side['pair']} {side['role']} ({side['side']}): {side['steps']} steps, {side['step_ms_mean']:.2f} "
            f"ms/step, {side['bytes'] / 2**20:.2f} MiB: {side['path']}"
        )
        if export:
            export.mkdir(parents=True, exist_ok=True)
            shutil.copy(side["path"], export / f"{side['pair']}_{side['side']}.xplane.pb")
    (outdir / "pairs.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    if export:
        for entry in summary["pairs"].values():
            for role in ("problem", "fix"):
                if role in entry:
                    entry[role]["path"] = f"{entry[role]['pair']}_{entry[role]['side']}.xplane.pb"
        (export / "pairs.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    print(f"captured {len(sides)} sides in {time.monotonic() - started:.0f} s")
    return summary


def _print_spread(summaries):
    """Each pair's wall-clock speedup (problem mean step / fix mean step) in every run, lowest and highest."""
    seen = {}
    for summary in summaries:
        for name, pair in summary["pairs"].items():
            problem, fix = (pair.get("problem") or {}).get("step_ms_mean"), (pair.get("fix") or {}).get("step_ms_mean")
            if problem and fix:
                seen.setdefault(name, []).append(problem / fix)
    for name, values in seen.items():
        runs = ", ".join(f"{value:.2f}x" for value in values)
        print(f"{name}: wall-clock speedup {min(values):.2f}x-{max(values):.2f}x over {len(values)} runs ({runs})")


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m tools.capture.cpu_pairs",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("outdir", type=pathlib.Path, help="logdir to write the runs into (created if missing)")
    parser.add_argument("--pair", action="append", choices=PAIR_NAMES, help="capture only this pair (repeatable)")
    parser.add_argument("--steps", type=int, default=DEFAULT_STEPS, help="profiled steps per side")
    parser.add_argument("--max-mb", type=float, default=DEFAULT_MAX_MB, help="trim each file under this size")
    parser.add_argument("--export", type=pathlib.Path, help="also copy each side to DIR/<pair>_<side>.xplane.pb")
    parser.add_argument(
        "--repeats",
        type=int,
        default=1,
        help="capture everything this many times back to back, for the run-to-run spread",
    )
    parser.add_argument(
        "--runs-label",
        default="run",
        help="with --repeats and --export: each run's pairs.json goes to DIR/runs/LABEL_<k>.json",
    )
    parser.add_argument("--framework-only", choices=("tf", "jax"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    names = args.pair or list(PAIR_NAMES)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    args.outdir.mkdir(parents=True, exist_ok=True)
    if args.framework_only:
        chosen = [name for name in names if _pair(name).framework == args.framework_only]
        results, versions = _capture_framework(args.framework_only, chosen, args.outdir, args.steps, args.max_mb)
        print(json.dumps({"versions": versions, "sides": [asdict(r) for r in results]}))
        return 0
    if args.repeats == 1:
        return 0 if _capture_once(args, names, args.outdir, args.export) else 2
    summaries = []
    for run in range(1, args.repeats + 1):
        outdir = args.outdir / f"run_{run}"
        outdir.mkdir(parents=True, exist_ok=True)
        summary = _capture_once(args, names, outdir, args.export if run == 1 else None)
        if summary is None:
            return 2
        summaries.append(summary)
        if args.export:
            (args.export / "runs").mkdir(parents=True, exist_ok=True)
            (args.export / "runs" / f"{args.runs_label}_{run}.json").write_text(
                (outdir / "pairs.json").read_text(encoding="utf-8"), encoding="utf-8"
            )
    _print_spread(summaries)
    return 0


if __name__ == "__main__":
    sys.exit(main())
