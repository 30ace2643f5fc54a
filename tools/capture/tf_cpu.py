"""Captures real TensorFlow CPU profiles of small trainings into a TensorBoard logdir.

`python -m tools.capture.tf_cpu --logdir DIR [--variant input_bound|input_fixed|custom_loop|all]`:
Keras `fit` over a tf.data map that sleeps 2 ms per element without parallelism (`input_bound`, run
`input_bound/train/<timestamp>`), the same with a parallel map and prefetch (`input_fixed`), and a GradientTape
loop over the slow pipeline marked with `tf.profiler.experimental.Trace("train", step_num=..., _r=1)`
(`custom_loop`). TensorFlow is imported only here, lazily: `pip install -e '.[tf]'`.
"""

import argparse
import os
import pathlib
import sys
import time

from tb_gpu_advisor.errors import EXIT_BAD_INPUT, EXIT_OK

VARIANTS = ("input_bound", "input_fixed", "custom_loop")
DEFAULT_STEPS = 20
WARMUP_STEPS = 3  # run before profiling starts, so tracing of tf.functions stays out of the profile
BATCH_SIZE = 32
FEATURES = 32
CLASSES = 10
SLEEP_PER_ELEMENT_S = 0.002


def _import_tensorflow():
    """Imports TensorFlow quiet and CPU-only; the environment must be set before the first import."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")  # also silences the oneDNN banner
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    os.environ["CUDA_VISIBLE_DEVICES"] = "-1"
    try:
        import tensorflow as tf
    except ImportError as exc:
        raise ImportError("capturing profiles needs TensorFlow: pip install tensorflow-cpu") from exc

    tf.get_logger().setLevel("ERROR")
    return tf


def _slow_identity(features):
    """Stands for costly per-element Python preprocessing (decoding, augmentation)."""
    time.sleep(SLEEP_PER_ELEMENT_S)
    return features


def make_dataset(tf, num_batches, parallel):
    """A tf.data pipeline whose map runs Python per element; `parallel` adds AUTOTUNE map and prefetch."""
    import numpy as np

    rng = np.random.default_rng(0)
    count = num_batches * BATCH_SIZE
    features = rng.standard_normal((count, FEATURES)).astype("float32")
    labels = rng.integers(0, CLASSES, size=count).astype("int32")

    def preprocess(x, y):
        x = tf.numpy_function(_slow_identity, [x], tf.float32)
        return tf.ensure_shape(x, [FEATURES]), y

    dataset = tf.data.Dataset.from_tensor_slices((features, labels))
    if parallel:
        dataset = dataset.map(preprocess, num_parallel_calls=tf.data.AUTOTUNE)
        return dataset.batch(BATCH_SIZE).prefetch(tf.data.AUTOTUNE)
    return dataset.map(preprocess).batch(BATCH_SIZE)


def make_model(tf):
    """A tiny 3-layer MLP classifier."""
    return tf.keras.Sequential(
        [
            tf.keras.Input(shape=(FEATURES,)),
            tf.keras.layers.Dense(64, activation="relu"),
            tf.keras.layers.Dense(64, activation="relu"),
            tf.keras.layers.Dense(CLASSES),
        ]
    )


def _xplane_files(directory):
    """Maps each `.xplane.pb` under `directory` to its modification time, to tell new writes from old."""
    return {path: path.stat().st_mtime_ns for path in pathlib.Path(directory).glob("**/plugins/profile/*/*.xplane.pb")}


def _fit_with_keras_profiler(tf, run_dir, steps, parallel):
    """Keras `fit` for one epoch; the TensorBoard callback profiles the batches after the warm-up."""
    model = make_model(tf)
    model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    total = WARMUP_STEPS + steps
    # Keras counts profile batches from 1 and profiles both ends of the range.
    profiler = tf.keras.callbacks.TensorBoard(
        log_dir=str(run_dir), profile_batch=(WARMUP_STEPS + 1, total), write_graph=False, update_freq="epoch"
    )
    model.fit(
        make_dataset(tf, total, parallel),
        epochs=1,
        steps_per_epoch=total,
        callbacks=[profiler],
        shuffle=False,
        verbose=0,
    )


def _custom_loop_with_profiler(tf, run_dir, steps):
    """A GradientTape loop over the slow pipeline; each profiled step is a `train` trace with step_num."""
    model = make_model(tf)
    optimizer = tf.keras.optimizers.Adam()
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    batches = iter(make_dataset(tf, WARMUP_STEPS + steps, parallel=False))
    for _ in range(WARMUP_STEPS):
        train_step(*next(batches))
    tf.profiler.experimental.start(str(run_dir))
    try:
        for step in range(WARMUP_STEPS, WARMUP_STEPS + steps):
            # next() sits inside the step marker so that waiting for input counts towards the step.
            with tf.profiler.experimental.Trace("train", step_num=step, _r=1):
                train_step(*next(batches))
    finally:
        tf.profiler.experimental.stop()


def capture(logdir: str, variant: str, steps: int = DEFAULT_STEPS) -> pathlib.Path:
    """Runs one variant under the profiler and returns the `.xplane.pb` it wrote under `logdir`.

    Runs: `<variant>/train` for the Keras variants (the callback adds `train`), `custom_loop` otherwise.
    """
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; expected one of {', '.join(VARIANTS)}")
    if steps < 1:
        raise ValueError("steps must be at least 1")
    tf = _import_tensorflow()
    tf.keras.utils.set_random_seed(0)
    run_dir = pathlib.Path(logdir) / variant
    before = _xplane_files(run_dir)
    if variant == "custom_loop":
        _custom_loop_with_profiler(tf, run_dir, steps)
    else:
        _fit_with_keras_profiler(tf, run_dir, steps, parallel=(variant == "input_fixed"))
    after = _xplane_files(run_dir)
    written = [path for path, mtime in after.items() if before.get(path) != mtime]
    if not written:
        raise RuntimeError(f"the profiler wrote no .xplane.pb under {run_dir}")
    return max(written, key=after.get)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tools.capture.tf_cpu", description=__doc__)
    parser.add_argument("--logdir", required=True, help="TensorBoard logdir to write runs into")
    parser.add_argument("--variant", choices=VARIANTS + ("all",), default="all")
    parser.add_argument("--steps", type=int, default=DEFAULT_STEPS, help="number of profiled steps")
    args = parser.parse_args(argv)
    variants = VARIANTS if args.variant == "all" else (args.variant,)
    for variant in variants:
        started = time.monotonic()
        try:
            path = capture(args.logdir, variant, args.steps)
        except (ImportError, ValueError, RuntimeError) as error:
            print(f"error: {error}", file=sys.stderr)
            return EXIT_BAD_INPUT
        print(f"{variant}: {path} ({time.monotonic() - started:.1f} s)")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
