"""Captures real PyTorch CPU profiles of a small training loop into a TensorBoard logdir.

`python -m tools.capture.torch_cpu --logdir DIR [--variant loader_slow|loader_fixed|all]`: an MLP
trained on a Dataset whose `__getitem__` sleeps 2 ms per sample, loaded in the main process
(`loader_slow`: `num_workers=0`) or by worker processes that prefetch (`loader_fixed`), profiled with
`torch.profiler.profile(schedule=..., on_trace_ready=tensorboard_trace_handler(<logdir>/<variant>))`, which
writes `<logdir>/<variant>/<worker>.<span>.pt.trace.json[.gz]`. PyTorch is imported only here, lazily:
`pip install -e '.[torch]'`.
"""

import argparse
import pathlib
import sys
import time

VARIANTS = ("loader_slow", "loader_fixed")
DEFAULT_STEPS = 10
WAIT_STEPS, WARMUP_STEPS = 1, 1  # the profiler's schedule: skipped, then traced but dropped
BATCH_SIZE = 16
FEATURES = 32
CLASSES = 10
SLEEP_PER_SAMPLE_S = 0.002
FIXED_WORKERS = 4  # the samples sleep rather than compute, so more workers than cores still helps
WORKER_NAME = "worker0"


def _import_torch():
    try:
        import torch
    except ImportError as exc:
        raise ImportError("capturing PyTorch profiles needs torch: pip install torch==2.13.0") from exc
    return torch


class SlowDataset:
    """Random samples that each cost SLEEP_PER_SAMPLE_S, standing for decoding and augmentation."""

    def __init__(self, torch, count):
        generator = torch.Generator().manual_seed(0)
        self.features = torch.randn(count, FEATURES, generator=generator)
        self.labels = torch.randint(0, CLASSES, (count,), generator=generator)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, index):
        time.sleep(SLEEP_PER_SAMPLE_S)
        return self.features[index], self.labels[index]


def make_loader(torch, num_batches, fixed):
    """The DataLoader of a variant: in the main process, or FIXED_WORKERS prefetching worker processes."""
    from torch.utils.data import DataLoader, Dataset

    base = SlowDataset(torch, num_batches * BATCH_SIZE)
    dataset = type(
        "SlowTorchDataset", (Dataset,), {"__len__": lambda self: len(base), "__getitem__": lambda self, i: base[i]}
    )()
    if fixed:
        return DataLoader(
            dataset, batch_size=BATCH_SIZE, num_workers=FIXED_WORKERS, prefetch_factor=4, persistent_workers=True
        )
    return DataLoader(dataset, batch_size=BATCH_SIZE, num_workers=0)


def _train(torch, run_dir, steps, fixed, use_gzip):
    torch.manual_seed(0)
    torch.set_num_threads(1)  # a tiny model: more threads only contend with the loader and other processes
    model = torch.nn.Sequential(
        torch.nn.Linear(FEATURES, 64),
        torch.nn.ReLU(),
        torch.nn.Linear(64, 64),
        torch.nn.ReLU(),
        torch.nn.Linear(64, CLASSES),
    )
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = torch.nn.CrossEntropyLoss()
    total = WAIT_STEPS + WARMUP_STEPS + steps
    schedule = torch.profiler.schedule(wait=WAIT_STEPS, warmup=WARMUP_STEPS, active=steps, repeat=1)
    handler = torch.profiler.tensorboard_trace_handler(str(run_dir), worker_name=WORKER_NAME, use_gzip=use_gzip)
    with torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU], schedule=schedule, on_trace_ready=handler
    ) as profiler:
        for step, (features, labels) in enumerate(make_loader(torch, total, fixed)):
            if step >= total:
                break
            optimizer.zero_grad(set_to_none=True)
            loss_fn(model(features), labels).backward()
            optimizer.step()
            profiler.step()


def _trace_files(directory):
    return {path: path.stat().st_mtime_ns for path in pathlib.Path(directory).glob("*.pt.trace.json*")}


def capture(logdir, variant, steps=DEFAULT_STEPS):
    """Runs one variant under the profiler; returns the trace it wrote (gzip for loader_slow, plain JSON else)."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; expected one of {', '.join(VARIANTS)}")
    if steps < 1:
        raise ValueError("steps must be at least 1")
    torch = _import_torch()
    run_dir = pathlib.Path(logdir) / variant
    before = _trace_files(run_dir) if run_dir.exists() else {}
    _train(torch, run_dir, steps, fixed=variant == "loader_fixed", use_gzip=variant == "loader_slow")
    after = _trace_files(run_dir)
    written = [path for path, mtime in after.items() if before.get(path) != mtime]
    if not written:
        raise RuntimeError(f"the profiler wrote no .pt.trace.json under {run_dir}")
    return max(written, key=after.get)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tools.capture.torch_cpu", description=__doc__)
    parser.add_argument("--logdir", required=True, help="TensorBoard logdir to write runs into")
    parser.add_argument("--variant", choices=VARIANTS + ("all",), default="all")
    parser.add_argument("--steps", type=int, default=DEFAULT_STEPS, help="number of profiled steps")
    args = parser.parse_args(argv)
    for variant in VARIANTS if args.variant == "all" else (args.variant,):
        started = time.monotonic()
        try:
            path = capture(args.logdir, variant, args.steps)
        except (ImportError, ValueError, RuntimeError) as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        print(f"{variant}: {path} ({time.monotonic() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
