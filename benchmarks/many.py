"""Many files: one run of 8 ranks analyzed in this process, on the local process pool and on a real local Dask
cluster, side by side; prints each median wall time and the speedups, and checks the three reports agree.

The run is 8 rank files (hard links of one real H200 PyTorch trace, 13 MB of JSON each unless --source says
otherwise) in one run directory. Each measurement is a fresh `tb-gpu-advisor analyze RUN --format json`
process: "inline" with the pool threshold raised so every rank runs in the process, "pool" as a user runs it
(one worker per core), "dask" with `--dask ADDRESS` against a scheduler and 2 single-threaded workers started
with the `dask` command line on 127.0.0.1. The three modes alternate; medians of --runs.

    python benchmarks/many.py
    python benchmarks/many.py --ranks 8 --runs 3
"""

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

from benchmarks.run import compile_package, machine  # noqa: E402

SOURCE = os.path.join(HERE, "..", "tests/data/real/h200/torch/launch_eager/h200.1796402368363895332.pt.trace.json.gz")
MODES = ("inline", "pool", "dask")


def write_run(root, ranks, source):
    """The run directory of `ranks` hard links of `source` (decompressed once)."""
    plain = os.path.join(root, "source.pt.trace.json")
    opener = gzip.open if source.endswith(".gz") else open
    with opener(source, "rb") as handle, open(plain, "wb") as out:
        shutil.copyfileobj(handle, out)
    run = os.path.join(root, "logs", "ddp")  # torch.profiler.tensorboard_trace_handler's layout
    os.makedirs(run)
    for rank in range(ranks):
        os.link(plain, os.path.join(run, f"rank{rank}.{1000 + rank}.pt.trace.json"))
    return os.path.join(root, "logs"), os.path.getsize(plain)


def _child(mode, logdir, address):
    import io

    from tb_gpu_advisor import fanout
    from tb_gpu_advisor.cli import main

    argv = ["analyze", logdir, "--format", "json"]
    if mode == "inline":
        fanout.POOL_MIN_BYTES = float("inf")
    elif mode == "dask":
        argv += ["--dask", address]
    out, err = io.StringIO(), io.StringIO()
    started = time.perf_counter()
    code = main(argv, out=out, err=err)
    seconds = time.perf_counter() - started
    if code != 0:
        raise SystemExit(f"analyze exited with {code}: {err.getvalue()[-2000:]}")
    report = json.loads(out.getvalue())
    report.pop("generated_at", None)
    return {"exit": code, "seconds": seconds, "report": json.dumps(report, sort_keys=True)}


def measure(mode, logdir, address):
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--child", mode, logdir, address or ""],
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{mode} exited with {done.returncode}: {done.stderr[-2000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return wall, result


def _wait_for(predicate, what, limit_s=60):
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise TimeoutError(f"{what} did not start within {limit_s} s")


def start_cluster(workdir, workers):
    """(address, processes) of a scheduler and `workers` single-threaded worker processes on 127.0.0.1."""
    scheduler_file = os.path.join(workdir, "scheduler.json")
    dask = [sys.executable, "-m", "dask"]
    root = os.path.abspath(os.path.join(HERE, ".."))  # the workers import this checkout, as the children do
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p))
    quiet = {"cwd": workdir, "env": env, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    scheduler = subprocess.Popen(
        dask
        + ["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", scheduler_file],
        **quiet,
    )
    processes = [scheduler]
    _wait_for(lambda: os.path.exists(scheduler_file) and os.path.getsize(scheduler_file) > 0, "scheduler")
    with open(scheduler_file) as handle:
        address = json.load(handle)["address"]
    worker_args = ["worker", address, "--nworkers", str(workers), "--nthreads", "1", "--no-dashboard"]
    processes.append(subprocess.Popen(dask + worker_args + ["--host", "127.0.0.1", "--memory-limit", "0"], **quiet))
    from distributed import Client

    with Client(address, timeout=60) as client:
        client.wait_for_workers(workers, timeout=120)
    return address, processes


def stop(processes):
    for process in reversed(processes):
        process.terminate()
    for process in processes:
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--source", default=SOURCE, help="the rank trace (plain or gzip Kineto JSON)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="Dask workers")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(*args.child)))
        return
    compile_package()
    info = machine()
    info["load_avg"] = os.getloadavg()
    print(json.dumps(info), flush=True)
    root = tempfile.mkdtemp(prefix="tb_gpu_advisor_many_")
    processes = []
    try:
        logdir, rank_bytes = write_run(root, args.ranks, args.source)
        address, processes = start_cluster(root, args.workers)
        samples = {mode: [] for mode in MODES}
        reports = {}
        for index in range(args.runs):
            order = MODES if index % 2 == 0 else tuple(reversed(MODES))
            for mode in order:
                wall, result = measure(mode, logdir, address)
                samples[mode].append(wall)
                reports.setdefault(mode, result["report"])
                print(f"{mode}: {wall:.2f} s (exit {result['exit']})", flush=True)
        medians = {mode: statistics.median(values) for mode, values in samples.items()}
        same = len(set(reports.values())) == 1
        print(
            f"{args.ranks} ranks x {rank_bytes / 1e6:.1f} MB: inline {medians['inline']:.2f} s, pool "
            f"{medians['pool']:.2f} s (speedup {medians['inline'] / medians['pool']:.2f}x), dask "
            f"{medians['dask']:.2f} s with {args.workers} workers (speedup {medians['inline'] / medians['dask']:.2f}x); "
            f"reports identical: {same}; load average after {os.getloadavg()[0]:.2f}"
        )
        print(json.dumps({"samples": samples, "medians": medians, "reports_identical": same}))
    finally:
        stop(processes)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
