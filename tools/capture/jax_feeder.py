"""Captures a real JAX CPU pair where the step thread reads batches from a queue.Queue that loader threads fill:
one loader slower than the step (the step thread blocks in `queue.get`) vs eight loaders, enough to keep the queue full.

`python -m tools.capture.jax_feeder OUTDIR [--steps N] [--max-mb MB] [--export DIR]` writes one
TensorBoard run per side, `OUTDIR/feeder_<side>/plugins/profile/<timestamp>/<host>.xplane.pb`, profiled with
JAX's Python tracer (`python_tracer_level=1`: it records `queue.get`, `Condition.wait` and lock `acquire`), each
step marked `train N` after warm-up steps, trims each file to `--max-mb` and writes `OUTDIR/feeder.json`
(versions, CPU count, per side: loaders, the costs, wall ms per step). `--export DIR` copies each side's file to
`DIR/feeder_<side>.xplane.pb`. Each batch costs a loader `LOADER_OVER_STEP` times the step (timed first on the
machine, the fastest of 8): a read-like wait (`time.sleep`, which releases the GIL) and a copy of a batch made
before the profile, so several loaders overlap even on 2 cores and take no core from the step.
"""

import argparse
import json
import os
import pathlib
import platform
import shutil
import sys
import time

from tools.capture import trim as trim_module

MARKER = "train"
DEFAULT_STEPS = 16
DEFAULT_MAX_MB = 1.0
WARMUP_STEPS = 3
LOADER_OVER_STEP = 5.0
SIDES = (("one_loader", 1), ("eight_loaders", 8))  # problem, fix


def _step_function(jax):
    jnp = jax.numpy

    @jax.jit
    def step(weights, batch):
        hidden = jnp.tanh(batch @ weights)
        return weights - 1e-3 * (batch.T @ hidden), jnp.mean(hidden**2)

    return step


def _fastest_step_s(jax, step, weights, batch, repeats=8):
    best = None
    for _ in range(repeats):
        started = time.perf_counter()
        _, loss = step(weights, batch)
        float(loss)
        elapsed = time.perf_counter() - started
        best = elapsed if best is None else min(best, elapsed)
    return best


def _capture_side(jax, np, outdir, side, loaders, steps, batch_s):
    """Runs one side: `loaders` threads fill a queue the step thread reads; returns (run dir, wall ms per step)."""
    import queue
    import threading

    step = _step_function(jax)
    rng = np.random.default_rng(0)
    weights = jax.numpy.asarray(rng.standard_normal((512, 512), dtype=np.float32) * 0.02)
    batches = queue.Queue(maxsize=2 * loaders)
    stop = threading.Event()

    made = [rng.standard_normal((256, 512)).astype(np.float32) for _ in range(4)]

    def load(seed):
        count = seed
        while not stop.is_set():
            time.sleep(batch_s)  # a storage read: waits, releases the GIL
            count += 1
            try:
                batches.put(made[count % len(made)].copy(), timeout=1.0)
            except queue.Full:
                continue

    threads = [threading.Thread(target=load, args=(seed,), daemon=True) for seed in range(loaders)]
    for thread in threads:
        thread.start()
    for _ in range(WARMUP_STEPS):
        weights, loss = step(weights, batches.get())
        float(loss)
    run_dir = outdir / f"feeder_{side}"
    options = jax.profiler.ProfileOptions()
    options.python_tracer_level = 1
    times = []
    with jax.profiler.trace(str(run_dir), profiler_options=options):
        for number in range(WARMUP_STEPS, WARMUP_STEPS + steps):
            started = time.perf_counter()
            with jax.profiler.StepTraceAnnotation(MARKER, step_num=number):
                weights, loss = step(weights, batches.get())
                float(loss)
            times.append((time.perf_counter() - started) * 1000)
    stop.set()
    for thread in threads:
        thread.join(timeout=5)
    return run_dir, round(sum(times) / len(times), 3)


def _newest_xplane(run_dir):
    found = sorted(run_dir.glob("plugins/profile/*/*.xplane.pb"))
    if not found:
        raise SystemExit(f"{run_dir}: the profiler wrote no .xplane.pb")
    return found[-1]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("outdir")
    parser.add_argument("--steps", type=int, default=DEFAULT_STEPS)
    parser.add_argument("--max-mb", type=float, default=DEFAULT_MAX_MB)
    parser.add_argument("--export", default=None)
    args = parser.parse_args(argv)
    import jax
    import numpy as np

    outdir = pathlib.Path(args.outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    probe = _step_function(jax)
    rng = np.random.default_rng(1)
    weights = jax.numpy.asarray(rng.standard_normal((512, 512), dtype=np.float32))
    batch = rng.standard_normal((256, 512)).astype(np.float32)
    step_s = _fastest_step_s(jax, probe, weights, batch)
    batch_s = LOADER_OVER_STEP * step_s
    record = {
        "jax": jax.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "load_before": os.getloadavg()[0],
        "step_ms_fastest": round(step_s * 1e3, 3),
        "loader_batch_ms": round(batch_s * 1e3, 3),
        "sides": [],
    }
    for side, loaders in SIDES:
        run_dir, wall_ms = _capture_side(jax, np, outdir, side, loaders, args.steps, batch_s)
        path = _newest_xplane(run_dir)
        trim_module.main([str(path), "--max-mb", str(args.max_mb), "--marker", MARKER])
        record["sides"].append(
            {"side": side, "loaders": loaders, "file": f"feeder_{side}.xplane.pb", "wall_ms_per_step": wall_ms}
        )
        if args.export:
            shutil.copyfile(path, pathlib.Path(args.export) / f"feeder_{side}.xplane.pb")
    record["load_after"] = os.getloadavg()[0]
    (outdir / "feeder.json").write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps(record, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
