"""Captures real multi-rank PyTorch DDP profiles on the CPU (gloo), one Kineto trace per rank, with known stragglers.

`python -m tools.capture.torch_ddp OUTDIR [--ranks 4] [--steps 10] [--timed-steps 10] [--rounds 3]` starts
`--ranks` processes (gloo over 127.0.0.1, one thread each) that train a small MLP wrapped in
DistributedDataParallel, reading each batch from a DataLoader (`num_workers=0`, so the input shows as
`enumerate(DataLoader)...__next__`), in three variants:

  balanced      every rank does the same work
  slow_compute  rank SLOW_RANK also runs EXTRA_MATMULS matmuls of EXTRA_SIZE x EXTRA_SIZE per step (more compute:
                the data or model imbalance case)
  slow_input    rank SLOW_RANK's loader sleeps INPUT_SLEEP_MS per batch (a late host: its input)

The variants run in one job, one after the other: first `--rounds` rounds of `--timed-steps` steps of each variant
without the profiler (interleaved, so a shared machine's changing load weighs on every variant alike), timing each
step and the injected work; then each variant once under `torch.profiler` (`record_shapes=True`;
`tensorboard_trace_handler(OUTDIR/<variant>, worker_name=f"rank{r}", use_gzip=True)`: the traces carry
`distributedInfo`), timing the injected work again. `OUTDIR/capture.json` records versions, the machine's load,
and per variant the files, the step times without and with the profiler and the injected amounts. PyTorch is
imported only in the rank processes and in main().
"""

import argparse
import json
import multiprocessing
import os
import pathlib
import platform
import socket
import statistics
import sys
import time

VARIANTS = ("balanced", "slow_compute", "slow_input")
WORLD = 4
SLOW_RANK = 2
WIDTH = 128
LAYERS = 3
BATCH = 32
CLASSES = 10
EXTRA_SIZE = 384
EXTRA_MATMULS = 16  # several times the rest of the step, which is kept small so 4 ranks fit on 2 cores
INPUT_SLEEP_MS = 20.0
WARMUP_STEPS = 3
DEFAULT_STEPS = 10
DEFAULT_TIMED_STEPS = 10
DEFAULT_ROUNDS = 3
PROFILER_WAIT, PROFILER_WARMUP = 1, 1


class _Batches:
    """A map-style dataset whose items are whole batches (DataLoader(batch_size=None)); sleeps `sleep_s` per batch
    while it is set, recording how long each sleep took."""

    def __init__(self, torch, count, rank):
        generator = torch.Generator().manual_seed(rank)
        self.features = torch.randn(count, BATCH, WIDTH, generator=generator)
        self.labels = torch.randint(0, CLASSES, (count, BATCH), generator=generator)
        self.sleep_s = 0.0
        self.slept_s = []

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, index):
        if self.sleep_s:
            started = time.perf_counter()
            time.sleep(self.sleep_s)
            self.slept_s.append(time.perf_counter() - started)
        return self.features[index], self.labels[index]


def _rank_main(rank, world, port, outdir, steps, timed_steps, rounds, result_path):
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel
    from torch.utils.data import DataLoader, Dataset

    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    layers = []
    for _ in range(LAYERS):
        layers += [torch.nn.Linear(WIDTH, WIDTH), torch.nn.ReLU()]
    model = DistributedDataParallel(torch.nn.Sequential(*layers, torch.nn.Linear(WIDTH, CLASSES)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = torch.nn.CrossEntropyLoss()
    weight = torch.randn(EXTRA_SIZE, EXTRA_SIZE)
    total = WARMUP_STEPS + len(VARIANTS) * (rounds * (timed_steps + 1) + PROFILER_WAIT + PROFILER_WARMUP + steps)
    base = _Batches(torch, total, rank)
    dataset = type(
        "RankBatches", (Dataset,), {"__len__": lambda self: len(base), "__getitem__": lambda self, i: base[i]}
    )()
    batches = iter(DataLoader(dataset, batch_size=None, num_workers=0))
    state = {"extra": False, "extra_s": []}

    def set_variant(variant):
        slow = rank == SLOW_RANK
        state["extra"] = slow and variant == "slow_compute"
        base.sleep_s = INPUT_SLEEP_MS / 1000.0 if slow and variant == "slow_input" else 0.0

    def step():
        features, labels = next(batches)
        if state["extra"]:
            started = time.perf_counter()
            for _ in range(EXTRA_MATMULS):
                torch.tanh(weight @ weight)
            state["extra_s"].append(time.perf_counter() - started)
        optimizer.zero_grad(set_to_none=True)
        loss_fn(model(features), labels).backward()
        optimizer.step()

    def timed(count, profiler=None):
        times = []
        for _ in range(count):
            started = time.perf_counter()
            step()
            times.append(round((time.perf_counter() - started) * 1000, 3))
            if profiler is not None:
                profiler.step()
        return times

    result = {
        variant: {"step_ms_unprofiled": [], "injected_ms": [], "step_ms_profiled": [], "injected_ms_profiled": []}
        for variant in VARIANTS
    }

    def injected():
        found = [round(t * 1000, 3) for t in state["extra_s"] + base.slept_s]
        state["extra_s"].clear()
        base.slept_s.clear()
        return found

    timed(WARMUP_STEPS)
    for _ in range(rounds):
        for variant in VARIANTS:
            set_variant(variant)
            timed(1)  # the first step of a variant starts from the previous one's state
            injected()
            dist.barrier()
            result[variant]["step_ms_unprofiled"] += timed(timed_steps)
            result[variant]["injected_ms"] += injected()
    skip = PROFILER_WAIT + PROFILER_WARMUP
    for variant in VARIANTS:
        set_variant(variant)
        dist.barrier()
        handler = torch.profiler.tensorboard_trace_handler(
            str(pathlib.Path(outdir) / variant), worker_name=f"rank{rank}", use_gzip=True
        )
        schedule = torch.profiler.schedule(wait=PROFILER_WAIT, warmup=PROFILER_WARMUP, active=steps, repeat=1)
        with torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU],
            schedule=schedule,
            on_trace_ready=handler,
            record_shapes=True,
        ) as profiler:
            times = timed(skip + steps, profiler)
        found = injected()
        result[variant]["step_ms_profiled"] = times[skip:]
        result[variant]["injected_ms_profiled"] = found[skip:] if found else []
    dist.barrier()
    dist.destroy_process_group()
    pathlib.Path(result_path).write_text(json.dumps({"rank": rank, "variants": result}))


def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _mean(values):
    return round(statistics.mean(values), 3) if values else 0.0


def capture(outdir, world=WORLD, steps=DEFAULT_STEPS, timed_steps=DEFAULT_TIMED_STEPS, rounds=DEFAULT_ROUNDS):
    """Runs the job on `world` ranks; returns {variant: its capture.json entry}."""
    outdir = pathlib.Path(outdir)
    before = {variant: set((outdir / variant).glob("*.pt.trace.json*")) for variant in VARIANTS}
    context = multiprocessing.get_context("spawn")
    port = _free_port()
    outdir.mkdir(parents=True, exist_ok=True)
    results = [outdir / f".rank{r}.json" for r in range(world)]
    processes = [
        context.Process(
            target=_rank_main, args=(r, world, port, str(outdir), steps, timed_steps, rounds, str(results[r]))
        )
        for r in range(world)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(900)
    if any(p.exitcode != 0 for p in processes):
        raise RuntimeError(f"rank exit codes {[p.exitcode for p in processes]}")
    ranks = [json.loads(path.read_text()) for path in results]
    for path in results:
        path.unlink()
    runs = {}
    for variant in VARIANTS:
        per = [r["variants"][variant] for r in ranks]
        # A synchronous step ends on every rank at the same all-reduce: the job's step is the ranks' mean.
        unprofiled = [
            statistics.mean(p["step_ms_unprofiled"][i] for p in per) for i in range(len(per[0]["step_ms_unprofiled"]))
        ]
        profiled = [statistics.mean(p["step_ms_profiled"][i] for p in per) for i in range(steps)]
        slow = per[SLOW_RANK]
        files = sorted(p.name for p in set((outdir / variant).glob("*.pt.trace.json*")) - before[variant])
        runs[variant] = {
            "slow_rank": SLOW_RANK if variant != "balanced" else None,
            "injected": {
                "kind": {"slow_compute": "compute", "slow_input": "input"}.get(variant),
                "extra_matmuls": EXTRA_MATMULS if variant == "slow_compute" else 0,
                "input_sleep_ms": INPUT_SLEEP_MS if variant == "slow_input" else 0.0,
                "measured_ms_per_step": _mean(slow["injected_ms"]),
                "measured_ms_per_step_profiled": _mean(slow["injected_ms_profiled"]),
            },
            "step_ms_unprofiled": _mean(unprofiled),
            "step_ms_unprofiled_median": round(statistics.median(unprofiled), 3),
            "step_ms_profiled": _mean(profiled),
            "ranks": [{"rank": r, **per[r]} for r in range(world)],
            "files": files,
            "bytes": sum((outdir / variant / name).stat().st_size for name in files),
        }
    return runs


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m tools.capture.torch_ddp",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("outdir")
    parser.add_argument("--ranks", type=int, default=WORLD)
    parser.add_argument("--steps", type=int, default=DEFAULT_STEPS, help="profiled steps per variant")
    parser.add_argument(
        "--timed-steps",
        type=int,
        default=DEFAULT_TIMED_STEPS,
        help="steps timed without the profiler per variant and round",
    )
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS)
    args = parser.parse_args(argv)
    if args.ranks <= SLOW_RANK or min(args.steps, args.timed_steps, args.rounds) < 1:
        print(f"error: need more than {SLOW_RANK} ranks and at least one step and round", file=sys.stderr)
        return 2
    import torch

    started = time.monotonic()
    record = {
        "torch": torch.__version__,
        "python": platform.python_version(),
        "backend": "gloo",
        "world_size": args.ranks,
        "cpus": os.cpu_count(),
        "load_before": round(os.getloadavg()[0], 2),
        "model": {"width": WIDTH, "layers": LAYERS, "batch": BATCH, "extra_size": EXTRA_SIZE},
        "steps": args.steps,
        "timed_steps": args.timed_steps,
        "rounds": args.rounds,
    }
    try:
        record["runs"] = capture(args.outdir, args.ranks, args.steps, args.timed_steps, args.rounds)
    except RuntimeError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    record["load_after"] = round(os.getloadavg()[0], 2)
    record["seconds"] = round(time.monotonic() - started, 1)
    for variant, run in record["runs"].items():
        print(
            f"{variant}: {run['step_ms_unprofiled']} ms/step unprofiled ({run['step_ms_profiled']} profiled), "
            f"injected {run['injected']['measured_ms_per_step']} ms, {run['bytes']} bytes"
        )
    path = pathlib.Path(args.outdir) / "capture.json"
    path.write_text(json.dumps(record, indent=1) + "\n")
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
