"""Captures a real TensorFlow CPU custom loop that builds each batch in Python from many small image files.

`python -m tools.capture.tf_python_loader OUTDIR [--steps N] [--max-mb MB] [--export DIR]` writes two
TensorBoard runs, each with `--steps` steps marked `train N` after warm-up steps (the profiler is asked for
Python calls, `python_tracer_level=1`, but TensorFlow 2.21 writes none: the trace shows TensorFlow's own events):

  inline    the loop reads and decodes one small JPEG file per example eagerly (`tf.io.read_file`,
            `tf.io.decode_jpeg`) and stacks the uint8 batch with NumPy on the step thread, then calls the
            `tf.function` step (which scales the pixels): no tf.data
  prefetch  the same reads and decoding as a tf.data pipeline over the file names (map with
            num_parallel_calls=AUTOTUNE, batch, prefetch(AUTOTUNE)), so the next batch is made while the step runs

Each file is trimmed to `--max-mb` (capture.trim); `OUTDIR/python_loader.json` records versions, machine load and
per side the file, steps and wall ms per step. `--export DIR` copies the sides to
`DIR/tf221_cpu_python_loader_<side>.xplane.pb`. TensorFlow is imported only here.
"""

import argparse
import json
import os
import pathlib
import platform
import shutil
import sys
import tempfile
from dataclasses import asdict

from tools.capture import cpu_pairs
from tools.capture.cpu_pairs import WARMUP_STEPS, Pair

DEFAULT_STEPS = 12
BATCH = 32
IMAGE_SIDE = 224
POOL = 8  # the step averages 8x8 pixels first: a small model, so the loader is the larger part of the step
CLASSES = 10
FILES = 256
PAIR = Pair(
    "tf_python_loader",
    "tf",
    "inline",
    "prefetch",
    "a loop reading and decoding small JPEG files eagerly per batch vs the same work in a prefetched tf.data map",
)


def write_images(tf, directory, count=FILES, side=IMAGE_SIDE):
    """`count` small random RGB JPEG files; returns their paths."""
    import numpy as np

    rng = np.random.default_rng(0)
    paths = []
    for index in range(count):
        path = str(pathlib.Path(directory) / f"img_{index:04d}.jpg")
        tf.io.write_file(path, tf.io.encode_jpeg(rng.integers(0, 256, (side, side, 3), dtype=np.uint8)))
        paths.append(path)
    return paths


def load_batch(tf, paths, start):
    """One batch built the way many custom loops do, eagerly on the step thread: read and decode each file with
    TensorFlow ops (`tf.io.read_file`, `tf.io.decode_jpeg`) and stack the uint8 batch with NumPy."""
    import numpy as np

    images = []
    for offset in range(BATCH):
        data = tf.io.read_file(paths[(start + offset) % len(paths)])
        images.append(tf.io.decode_jpeg(data, channels=3).numpy())
    labels = np.arange(start, start + BATCH, dtype=np.int32) % CLASSES
    return np.stack(images), labels


def _step(tf):
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential(
        [
            tf.keras.Input(shape=(IMAGE_SIDE, IMAGE_SIDE, 3)),
            tf.keras.layers.AveragePooling2D(POOL),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(512, activation="relu"),
            tf.keras.layers.Dense(512, activation="relu"),
            tf.keras.layers.Dense(CLASSES),
        ]
    )
    optimizer = tf.keras.optimizers.SGD(0.01)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        x = tf.cast(x, tf.float32) / 255.0
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    return train_step


def _batches(tf, paths, side):
    """An iterator of (x, y) batches: built inline on each next(), or by a parallel tf.data pipeline ahead of the
    step (the same reads, decoding and scaling as tf.data stages)."""
    if side == "inline":

        def generate():
            start = 0
            while True:
                yield load_batch(tf, paths, start)
                start += BATCH

        return generate()

    def read_and_decode(path, label):
        return tf.io.decode_jpeg(tf.io.read_file(path), channels=3), label

    labels = [index % CLASSES for index in range(len(paths))]
    dataset = tf.data.Dataset.from_tensor_slices((paths, labels)).repeat()
    dataset = dataset.map(read_and_decode, num_parallel_calls=tf.data.AUTOTUNE).batch(BATCH, drop_remainder=True)
    return iter(dataset.prefetch(tf.data.AUTOTUNE))


def _loop(tf, run_dir, step, batches, steps):
    """Warm-up steps, then the profiled steps with the Python tracer; next() sits inside the marker."""
    options = tf.profiler.experimental.ProfilerOptions(host_tracer_level=2, python_tracer_level=1)
    return cpu_pairs.profiled_tf_loop(tf, run_dir, step, batches, steps, options)


def capture(outdir, steps, max_mb):
    """Captures both sides; returns their cpu_pairs.SideResult and TensorFlow's version."""
    tf = cpu_pairs._import_tensorflow()
    results = []
    with tempfile.TemporaryDirectory() as images:
        paths = write_images(tf, images)
        for side in (PAIR.problem, PAIR.fix):
            run_dir = pathlib.Path(outdir) / f"{PAIR.name}_{side}"
            times = _loop(tf, run_dir, _step(tf), _batches(tf, paths, side), steps)
            costs = {"batch": BATCH, "image_side": IMAGE_SIDE, "files": len(paths), "format": "JPEG", "pool": POOL}
            results.append(cpu_pairs._finish(PAIR, side, run_dir, times, costs, max_mb))
    return results, tf.__version__


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m tools.capture.tf_python_loader",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("outdir", type=pathlib.Path, help="logdir to write the runs into (created if missing)")
    parser.add_argument("--steps", type=int, default=DEFAULT_STEPS, help="profiled steps per side")
    parser.add_argument("--max-mb", type=float, default=cpu_pairs.DEFAULT_MAX_MB, help="trim each file under this")
    parser.add_argument("--export", type=pathlib.Path, help="also copy each side to DIR/tf221_cpu_python_loader_*")
    args = parser.parse_args(argv)
    args.outdir.mkdir(parents=True, exist_ok=True)
    load_before = list(os.getloadavg())
    results, tf_version = capture(args.outdir, args.steps, args.max_mb)
    import numpy as np

    summary = {
        "versions": {"tensorflow": tf_version, "numpy": np.__version__, "python": platform.python_version()},
        "machine": {
            "cpu_count": os.cpu_count(),
            "platform": platform.platform(),
            "load_average_before": load_before,
            "load_average_after": list(os.getloadavg()),
        },
        "steps": args.steps,
        "warmup_steps": WARMUP_STEPS,
        "what": PAIR.what,
        "sides": {r.side: {**asdict(r), "path": os.path.relpath(r.path, args.outdir)} for r in results},
    }
    for result in results:
        print(
            f"{result.side}: {result.steps} steps, {result.step_ms_mean:.2f} ms/step, "
            f"{result.bytes / 2**20:.2f} MiB: {result.path}"
        )
        if args.export:
            args.export.mkdir(parents=True, exist_ok=True)
            name = f"tf221_cpu_python_loader_{result.side}.xplane.pb"
            shutil.copy(result.path, args.export / name)
            summary["sides"][result.side]["path"] = name
    (args.outdir / "python_loader.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    if args.export:
        (args.export / "tf221_cpu_python_loader.json").write_text(
            json.dumps(summary, indent=1) + "\n", encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
