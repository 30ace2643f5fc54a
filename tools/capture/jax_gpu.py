"""Captures JAX profiles of a healthy training step and four problem/fix pairs, sized for one NVIDIA GPU.

`python -m tools.capture.jax_gpu OUTDIR [--steps N] [--only RUN]... [--trim MB] [--size auto|gpu|small]`
writes one TensorBoard run per case, `OUTDIR/<run>/plugins/profile/<timestamp>/<host>.xplane.pb`, each with
`--steps` steps marked by `jax.profiler.StepTraceAnnotation("train", step_num=N)` after warm-up steps that keep
compilation out of the profile, and with the profiler's defaults (HLO protos embedded in `/host:metadata`)
except the Python tracer, off unless `--python-tracer`: it slows every Python call, which would inflate the
op-by-op run it measures. Runs (problem -> fix):

  healthy                                  a jitted bf16 transformer block (fwd, bwd, SGD), data on the device
  input_bound -> input_prefetch            the same step fed by a slow loader inside the step (a read wait
                                           and NumPy shuffles, 0.8x the healthy step time); the fix
                                           loads in a background thread and `jax.device_put`s ahead
  launch_bound -> launch_jit               a small deep MLP trained op by op without jit; the fix: one jax.jit
  precision_fp32 -> precision_bf16         the block in fp32 under jax.default_matmul_precision("highest");
                                           the fix: the block in bf16
  transfer_pageable -> transfer_on_device  a large frozen table kept as a NumPy array and copied to the device
                                           every step; the fix keeps it on the device (transfer_pinned, GPU
                                           only: copies it every step from pinned host memory instead)

Every step ends with `float(loss)`, as a loop that logs its loss does, so each step's device work lies inside
its marker. `--size gpu` (the default on a GPU backend) fills an H200 for a few seconds per run; `--size small`
(the default elsewhere) runs everything on a CPU in seconds. `--trim MB` shrinks each file to the leading steps
that fit. It prints what it wrote and writes `OUTDIR/capture.json` (versions, sizes, per run: file, bytes,
steps, measured mean step time). JAX is imported only here: `pip install -e '.[jax]'` (CPU) or JAX with CUDA.
"""

import argparse
import json
import math
import os
import pathlib
import platform
import queue
import sys
import threading
import time
from dataclasses import asdict, dataclass

from tools.capture import trim as trim_module

MARKER = "train"
DEFAULT_STEPS = 12
WARMUP_STEPS = 3
LEARNING_RATE = 1e-3
# The loader does this share of one measured step's time per batch: the prefetch fix can hide all of it.
LOADER_OVER_STEP = 0.8
LOADER_READ_SHARE = 0.5  # of the loader's time spent waiting as on a storage read; the rest is NumPy work
LOADER_UNIT_ELEMENTS = 1 << 16  # one unit of loader work: sorting this many float32 keys (a shuffle)
DEFAULT_BUDGET_S = 240.0


@dataclass(frozen=True)
class Sizes:
    """Problem sizes of every run; `gpu` fills an H200 for milliseconds per step, `small` suits a CPU."""

    name: str
    batch: int
    seq: int
    d_model: int
    heads: int
    mlp: int
    vocab: int
    layers: int
    tiny_batch: int
    tiny_width: int
    tiny_layers: int
    table_mib: int


SIZES = {
    "gpu": Sizes(
        "gpu",
        batch=16,
        seq=1024,
        d_model=2048,
        heads=16,
        mlp=8192,
        vocab=32768,
        layers=2,
        tiny_batch=256,
        tiny_width=1024,
        tiny_layers=32,
        table_mib=256,
    ),
    "small": Sizes(
        "small",
        batch=4,
        seq=64,
        d_model=128,
        heads=4,
        mlp=512,
        vocab=1024,
        layers=1,
        tiny_batch=32,
        tiny_width=64,
        tiny_layers=16,
        table_mib=8,
    ),
}


@dataclass(frozen=True)
class RunSpec:
    name: str
    what: str
    fix_of: str = ""  # the problem run this run fixes
    gpu_only: str = ""  # why it needs a GPU backend, when it does


RUNS = (
    RunSpec("healthy", "jitted bf16 transformer block, data on the device"),
    RunSpec("input_bound", "NumPy loader inside the step, no prefetch"),
    RunSpec("input_prefetch", "loader in a background thread, device_put ahead", fix_of="input_bound"),
    RunSpec("launch_bound", "small deep MLP trained op by op, no jit"),
    RunSpec("launch_jit", "the same MLP step under one jax.jit", fix_of="launch_bound"),
    RunSpec("precision_fp32", "block in fp32, default_matmul_precision('highest')"),
    RunSpec("precision_bf16", "block in bf16", fix_of="precision_fp32"),
    RunSpec("transfer_pageable", "frozen table copied from a NumPy array every step"),
    RunSpec(
        "transfer_pinned",
        "frozen table copied from pinned host memory every step",
        fix_of="transfer_pageable",
        gpu_only="pinned vs pageable host memory exists only for a GPU: on the CPU backend the host memory "
        "is the device memory",
    ),
    RunSpec("transfer_on_device", "frozen table kept on the device", fix_of="transfer_pageable"),
)
RUN_NAMES = tuple(spec.name for spec in RUNS)


@dataclass(frozen=True)
class RunResult:
    run: str
    path: str
    bytes: int
    steps: int
    step_ms_mean: float  # wall time per step the file holds, measured by the script
    seconds: float
    step_times_ms: tuple = ()  # each step's wall time, of the steps the file holds
    trimmed_from_steps: int = 0


def _import_jax():
    try:
        import jax
        import jax.numpy as jnp
    except ImportError as exc:
        raise ImportError("capturing JAX profiles needs JAX: pip install -e '.[jax]' (or JAX with CUDA)") from exc
    return jax, jnp


class Workload:
    """The models, data and step functions of every run, built once per process."""

    def __init__(self, jax, jnp, sizes, loader_over_step=LOADER_OVER_STEP, loader_read_share=LOADER_READ_SHARE):
        self.jax, self.jnp, self.sizes = jax, jnp, sizes
        self.loader_over_step, self.loader_read_share = loader_over_step, loader_read_share
        self.device = jax.devices()[0]
        self._train_steps = {}
        self._loader_cost = None
        self.step_ms_estimate = None

    # --- the transformer block -----------------------------------------------------------------------------
    def init_block(self, dtype):
        jax, jnp, s = self.jax, self.jnp, self.sizes
        keys = iter(jax.random.split(jax.random.PRNGKey(0), 3 + 4 * s.layers))

        def weight(shape, fan_in):
            return (jax.random.normal(next(keys), shape, jnp.float32) / math.sqrt(fan_in)).astype(dtype)

        layers = [
            {
                "qkv": weight((s.d_model, 3 * s.d_model), s.d_model),
                "out": weight((s.d_model, s.d_model), s.d_model),
                "up": weight((s.d_model, s.mlp), s.d_model),
                "down": weight((s.mlp, s.d_model), s.mlp),
            }
            for _ in range(s.layers)
        ]
        return {
            "embed": weight((s.vocab, s.d_model), 1.0),
            "layers": layers,
            "unembed": weight((s.d_model, s.vocab), s.d_model),
        }

    def _layer_norm(self, x):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) * self.jax.lax.rsqrt(var + 1e-5)

    def _forward(self, params, tokens, table):
        jax, jnp, s = self.jax, self.jnp, self.sizes
        x = params["embed"][tokens]
        if table is not None:
            x = x + table[tokens % table.shape[0]].astype(x.dtype)
        batch, seq = tokens.shape
        head_dim = s.d_model // s.heads
        causal = jnp.tril(jnp.ones((seq, seq), dtype=bool))
        for layer in params["layers"]:
            q, k, v = jnp.split(self._layer_norm(x) @ layer["qkv"], 3, axis=-1)
            q, k, v = (t.reshape(batch, seq, s.heads, head_dim) for t in (q, k, v))
            scores = jnp.einsum("bqhd,bkhd->bhqk", q, k).astype(jnp.float32) / math.sqrt(head_dim)
            probs = jax.nn.softmax(jnp.where(causal, scores, -1e30), axis=-1).astype(x.dtype)
            x = x + jnp.einsum("bhqk,bkhd->bqhd", probs, v).reshape(batch, seq, s.d_model) @ layer["out"]
            x = x + jax.nn.gelu(self._layer_norm(x) @ layer["up"]) @ layer["down"]
        return self._layer_norm(x) @ params["unembed"]

    def _loss(self, params, tokens, table):
        jnp = self.jnp
        logits = self._forward(params, tokens[:, :-1], table).astype(jnp.float32)
        logp = self.jax.nn.log_softmax(logits)
        return -jnp.take_along_axis(logp, tokens[:, 1:, None], axis=-1).mean()

    def train_step(self, precision=None):
        """The jitted block step (params, tokens, table or None) -> (params, loss); params are donated."""
        if precision not in self._train_steps:
            jax = self.jax

            def step(params, tokens, table):
                loss, grads = jax.value_and_grad(self._loss)(params, tokens, table)
                return jax.tree.map(lambda p, g: p - LEARNING_RATE * g.astype(p.dtype), params, grads), loss

            self._train_steps[precision] = jax.jit(step, donate_argnums=0)
        return self._train_steps[precision]

    def tokens(self, seed):
        import numpy as np

        rng = np.random.default_rng(seed)
        return rng.integers(0, self.sizes.vocab, (self.sizes.batch, self.sizes.seq + 1), dtype=np.int32)

    # --- the slow NumPy loader -------------------------------------------------------------------------------
    def load_batch(self, seed):
        """A batch of token ids after a read wait and NumPy shuffles (stand-ins for reading and decoding)."""
        import numpy as np

        read_s, units = self.loader_cost()
        time.sleep(read_s)
        rng = np.random.default_rng(seed)
        keys = rng.random(LOADER_UNIT_ELEMENTS, dtype=np.float32)
        for _ in range(units):
            keys = np.sort(keys + np.float32(0.5) * rng.random(LOADER_UNIT_ELEMENTS, dtype=np.float32))
        batch = self.tokens(seed)
        batch[:, 0] = (keys[: batch.shape[0]] * self.sizes.vocab).astype(np.int32) % self.sizes.vocab
        return batch

    def loader_cost(self):
        """(read wait s, NumPy work units) per batch: together `loader_over_step` of the healthy step time measured
        on this machine, `loader_read_share` of it waiting as a storage read would, the rest NumPy work."""
        if self._loader_cost is None:
            import numpy as np

            target_ms = self.loader_over_step * self.measure_healthy_step_ms()
            rng = np.random.default_rng(1)
            keys = rng.random(LOADER_UNIT_ELEMENTS, dtype=np.float32)
            started = time.perf_counter()
            for _ in range(8):
                keys = np.sort(keys + np.float32(0.5) * rng.random(LOADER_UNIT_ELEMENTS, dtype=np.float32))
            unit_ms = (time.perf_counter() - started) * 1e3 / 8
            self._loader_cost = (
                self.loader_read_share * target_ms / 1e3,
                max(1, round((1 - self.loader_read_share) * target_ms / unit_ms)),
            )
        return self._loader_cost

    def measure_healthy_step_ms(self):
        """Fastest wall time of the healthy bf16 step after compilation (on a shared machine the fastest is the
        one least slowed by others)."""
        if self.step_ms_estimate is None:
            step = self.train_step()
            params = self.init_block(self.jnp.bfloat16)
            tokens = self.jax.device_put(self.tokens(0), self.device)
            times = []
            for _ in range(WARMUP_STEPS + 8):
                started = time.perf_counter()
                params, loss = step(params, tokens, None)
                float(loss)
                times.append((time.perf_counter() - started) * 1e3)
            self.step_ms_estimate = min(times[WARMUP_STEPS:])
        return self.step_ms_estimate

    # --- the small deep MLP (launch pair) -------------------------------------------------------------------
    def init_tiny(self):
        jax, jnp, s = self.jax, self.jnp, self.sizes
        keys = jax.random.split(jax.random.PRNGKey(1), s.tiny_layers + 1)
        params = [
            (
                jax.random.normal(keys[i], (s.tiny_width, s.tiny_width)) / math.sqrt(s.tiny_width),
                jnp.zeros((s.tiny_width,)),
            )
            for i in range(s.tiny_layers)
        ]
        x = jax.random.normal(keys[-1], (s.tiny_batch, s.tiny_width))
        return params, x

    def tiny_step(self, params, x):
        """One SGD step of the MLP; run as is, every jnp call is its own dispatch (and GPU kernel)."""
        jax, jnp = self.jax, self.jnp

        def loss_fn(params, x):
            for w, b in params:
                x = jnp.tanh(x @ w + b)
            return jnp.mean(x * x)

        loss, grads = jax.value_and_grad(loss_fn)(params, x)
        return [(w - LEARNING_RATE * gw, b - LEARNING_RATE * gb) for (w, b), (gw, gb) in zip(params, grads)], loss

    def frozen_table(self):
        """A bf16 NumPy table of `table_mib` MiB (rows x d_model)."""
        import numpy as np

        rows = max(1, self.sizes.table_mib * 2**20 // (2 * self.sizes.d_model))
        values = np.random.default_rng(2).standard_normal((rows, self.sizes.d_model), dtype=np.float32)
        return values.astype(self.jnp.bfloat16)


def _profiler_options(jax, python_tracer):
    """Keyword arguments of jax.profiler.trace: the Python tracer off unless asked for (a JAX without
    ProfileOptions gets its defaults)."""
    if python_tracer or not hasattr(jax.profiler, "ProfileOptions"):
        return {}
    options = jax.profiler.ProfileOptions()
    options.python_tracer_level = 0
    return {"profiler_options": options}


def _profiled_loop(jax, run_dir, steps, step_fn, python_tracer):
    """Warm-up steps, then `steps` steps under the profiler, each inside a step marker; returns each step's
    wall time (ms)."""
    for i in range(WARMUP_STEPS):
        step_fn(i)
    times = []
    with jax.profiler.trace(str(run_dir), **_profiler_options(jax, python_tracer)):
        for i in range(WARMUP_STEPS, WARMUP_STEPS + steps):
            started = time.perf_counter()
            with jax.profiler.StepTraceAnnotation(MARKER, step_num=i):
                step_fn(i)
            times.append((time.perf_counter() - started) * 1e3)
    return times


def _block_step(work, dtype, precision=None, feed=None, table_for_step=None):
    """A step function over the jitted block: `feed(i)` gives the tokens on the device, `table_for_step(i)`
    the frozen table argument (or None)."""
    step = work.train_step(precision)
    state = {"params": work.init_block(dtype)}
    fixed_tokens = work.jax.device_put(work.tokens(0), work.device)
    feed = feed or (lambda i: fixed_tokens)
    table_for_step = table_for_step or (lambda i: None)

    def run(i):
        state["params"], loss = step(state["params"], feed(i), table_for_step(i))
        float(loss)

    return run


class _Prefetcher:
    """Loads batches in a background thread and puts them on the device ahead of the step."""

    def __init__(self, work, depth=2):
        self._work = work
        self._queue = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._produce, name="prefetch", daemon=True)
        self._thread.start()

    def _produce(self):
        seed = 0
        while not self._stop.is_set():
            batch = self._work.jax.device_put(self._work.load_batch(seed), self._work.device)
            seed += 1
            while not self._stop.is_set():
                try:
                    self._queue.put(batch, timeout=0.1)
                    break
                except queue.Full:
                    continue

    def next(self, _step):
        return self._queue.get()

    def close(self):
        self._stop.set()
        self._thread.join(timeout=30)


def _run_step_fn(work, name, closers):
    """The step function of run `name`; resources to release afterwards go into `closers`."""
    jax, jnp = work.jax, work.jnp
    if name in ("healthy", "precision_bf16"):
        return _block_step(work, jnp.bfloat16)
    if name == "precision_fp32":
        inner = _block_step(work, jnp.float32, precision="highest")

        def fp32(i):
            with jax.default_matmul_precision("highest"):  # active while jit traces the step
                inner(i)

        return fp32
    if name == "input_bound":
        work.loader_cost()
        return _block_step(work, jnp.bfloat16, feed=lambda i: jax.device_put(work.load_batch(i), work.device))
    if name == "input_prefetch":
        work.loader_cost()
        prefetcher = _Prefetcher(work)
        closers.append(prefetcher.close)
        return _block_step(work, jnp.bfloat16, feed=prefetcher.next)
    if name.startswith("transfer_"):
        table = work.frozen_table()
        if name == "transfer_pageable":
            return _block_step(work, jnp.bfloat16, table_for_step=lambda i: jax.device_put(table, work.device))
        on_device = jax.sharding.SingleDeviceSharding(work.device, memory_kind="device")
        if name == "transfer_pinned":
            pinned = jax.device_put(table, jax.sharding.SingleDeviceSharding(work.device, memory_kind="pinned_host"))
            return _block_step(work, jnp.bfloat16, table_for_step=lambda i: jax.device_put(pinned, on_device))
        resident = jax.device_put(table, on_device)
        return _block_step(work, jnp.bfloat16, table_for_step=lambda i: resident)
    if name in ("launch_bound", "launch_jit"):
        params, x = work.init_tiny()
        state = {"params": params}
        tiny = work.tiny_step if name == "launch_bound" else jax.jit(work.tiny_step)

        def run(i):
            state["params"], loss = tiny(state["params"], x)
            float(loss)

        return run
    raise ValueError(f"unknown run {name!r}")


def _newest_xplane(run_dir):
    files = sorted(pathlib.Path(run_dir).glob("plugins/profile/*/*.xplane.pb"), key=lambda p: p.stat().st_mtime_ns)
    if not files:
        raise RuntimeError(f"the profiler wrote no .xplane.pb under {run_dir}")
    return files[-1]


def capture_run(work, outdir, name, steps, trim_mb=None, python_tracer=False):
    """Captures run `name` under `outdir/name`; returns a RunResult."""
    started = time.monotonic()
    closers = []
    try:
        times = _profiled_loop(
            work.jax, pathlib.Path(outdir) / name, steps, _run_step_fn(work, name, closers), python_tracer
        )
    finally:
        for close in closers:
            close()
    path = _newest_xplane(pathlib.Path(outdir) / name)
    trimmed_from = 0
    if trim_mb:
        result = trim_module.trim_file(str(path), trim_mb, MARKER)
        trimmed_from = result.steps_before if result.steps_after != result.steps_before else 0
    with open(path, "rb") as handle:
        markers = trim_module.step_markers(trim_module.schema.XSpace.FromString(handle.read()), MARKER)
    if not markers:
        raise RuntimeError(f"no '{MARKER}' step markers in {path}")
    kept = times[: len(markers)]
    return RunResult(
        name,
        str(path),
        path.stat().st_size,
        len(markers),
        round(sum(kept) / len(kept), 3),
        round(time.monotonic() - started, 1),
        step_times_ms=tuple(round(t, 3) for t in kept),
        trimmed_from_steps=trimmed_from,
    )


def _skip_reason(spec, on_gpu):
    return spec.gpu_only if spec.gpu_only and not on_gpu else ""


def _environment(jax, work):
    import numpy as np

    device = work.device
    return {
        "jax": jax.__version__,
        "jaxlib": _jaxlib_version(),
        "numpy": np.__version__,
        "python": platform.python_version(),
        "backend": jax.default_backend(),
        "device_kind": getattr(device, "device_kind", str(device)),
        "device_count": jax.device_count(),
        "cpu_count": os.cpu_count(),
        "sizes": asdict(work.sizes),
    }


def _jaxlib_version():
    try:
        import jaxlib

        return jaxlib.__version__
    except (ImportError, AttributeError):
        return None


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m tools.capture.jax_gpu",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("outdir", help="logdir to write the runs into (created if missing)")
    parser.add_argument("--steps", type=int, default=DEFAULT_STEPS, help="profiled steps per run (10 or more)")
    parser.add_argument(
        "--only",
        action="append",
        choices=RUN_NAMES,
        metavar="RUN",
        help=f"capture only this run (repeatable): {', '.join(RUN_NAMES)}",
    )
    parser.add_argument("--trim", type=float, metavar="MB", help="shrink each file to the leading steps under MB MiB")
    parser.add_argument(
        "--size",
        choices=("auto",) + tuple(SIZES),
        default="auto",
        help="problem sizes: gpu (an H200), small (a CPU); auto picks by backend",
    )
    parser.add_argument(
        "--python-tracer",
        action="store_true",
        help="keep JAX's Python tracer on (its default; it slows every Python call and makes op-by-op runs many MB)",
    )
    parser.add_argument(
        "--budget-s", type=float, default=DEFAULT_BUDGET_S, help="skip the runs not started within this many seconds"
    )
    args = parser.parse_args(argv)
    if args.steps < 1:
        parser.error("--steps must be at least 1")
    started = time.monotonic()
    try:
        jax, jnp = _import_jax()
    except ImportError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    on_gpu = jax.default_backend() in ("gpu", "cuda", "rocm")
    sizes = SIZES[args.size if args.size != "auto" else ("gpu" if on_gpu else "small")]
    work = Workload(jax, jnp, sizes)
    env = _environment(jax, work)
    print(
        f"JAX {env['jax']} on {env['backend']} ({env['device_kind']} x{env['device_count']}), sizes {sizes.name}, "
        f"{args.steps} steps per run",
        flush=True,
    )
    outdir = pathlib.Path(args.outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    wanted = [spec for spec in RUNS if not args.only or spec.name in args.only]
    results, skipped, failed = [], {}, {}
    for spec in wanted:
        reason = _skip_reason(spec, on_gpu)
        if not reason and time.monotonic() - started > args.budget_s:
            reason = f"time budget of {args.budget_s:.0f} s spent"
        if reason:
            skipped[spec.name] = reason
            print(f"{spec.name}: skipped: {reason}", flush=True)
            continue
        try:
            result = capture_run(work, outdir, spec.name, args.steps, args.trim, args.python_tracer)
        except Exception as error:  # one failing run (an unsupported memory kind, say) must not cost the others
            failed[spec.name] = f"{type(error).__name__}: {error}"
            print(f"{spec.name}: failed: {failed[spec.name]}", flush=True)
            continue
        results.append(result)
        trimmed = f", trimmed from {result.trimmed_from_steps} steps" if result.trimmed_from_steps else ""
        print(
            f"{spec.name}: {result.steps} steps, {result.step_ms_mean:.2f} ms/step, "
            f"{result.bytes / 2**20:.2f} MiB{trimmed}, {result.seconds:.1f} s: {result.path}",
            flush=True,
        )
    summary = {
        **env,
        "steps_requested": args.steps,
        "warmup_steps": WARMUP_STEPS,
        "loader_read_s_and_units": work._loader_cost,
        "healthy_step_ms_estimate": work.step_ms_estimate,
        "runs": {
            r.run: {
                **asdict(r),
                "path": os.path.relpath(r.path, outdir),
                "fix_of": next(s.fix_of for s in RUNS if s.name == r.run),
            }
            for r in results
        },
        "skipped": skipped,
        "failed": failed,
        "seconds": round(time.monotonic() - started, 1),
    }
    (outdir / "capture.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    print(
        f"wrote {len(results)} runs ({sum(r.bytes for r in results) / 2**20:.2f} MiB) into {outdir} "
        f"in {summary['seconds']:.0f} s; skipped {len(skipped)}, failed {len(failed)}",
        flush=True,
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
