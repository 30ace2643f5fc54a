"""Times the run-level analysis of a 128-rank run (tb_gpu_advisor.testing.rank_sets.write_straggler_set from the
real 4-rank gloo capture tests/data/real/ddp_cpu/slow_compute: three slow ranks, a clock offset per rank) in this
process, on the local process pool and on a Dask LocalCluster; prints each wall time, the speedup over in-process
and the parent's peak Python heap (tracemalloc: what the parent holds of the ranks).

    python benchmarks/ranks.py                  # 128 ranks, 2 workers
    python benchmarks/ranks.py --ranks 256 --workers 4
"""

import argparse
import os
import sys
import tempfile
import time
import tracemalloc

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import tb_gpu_advisor  # noqa: E402
from tb_gpu_advisor import fanout  # noqa: E402
from tb_gpu_advisor.testing.rank_sets import write_straggler_set  # noqa: E402

RUN = os.path.join(HERE, "..", "tests", "data", "real", "ddp_cpu", "slow_compute")
SLOW = (37, 90, 101)


def _timed(label, analyze, traced=False):
    """Runs `analyze`, prints its wall time (and, `traced`, the parent's peak Python heap, from a run under
    tracemalloc: slower, so never the timed one) with the straggler it names; returns the wall time."""
    if traced:
        tracemalloc.start()
    started = time.perf_counter()
    report = analyze()
    elapsed = time.perf_counter() - started
    peak = f"   parent peak {tracemalloc.get_traced_memory()[1] / 2**20:.1f} MiB" if traced else ""
    tracemalloc.stop()
    slow = report["ranks"]["slowest"]
    print(
        f"{label:<34} {elapsed:7.1f} s{peak}   slowest rank {slow['rank']} ({slow['cause']}), as late: "
        f"{slow['as_late']}",
        flush=True,
    )
    return elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=128)
    parser.add_argument("--workers", type=int, default=min(4, os.cpu_count() or 1))
    parser.add_argument("--no-dask", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as out:
        write_straggler_set(
            RUN, out, args.ranks, [r for r in SLOW if r < args.ranks], clock_us=lambda r: r % 50 * 100.0
        )
        size = sum(os.path.getsize(os.path.join(out, name)) for name in os.listdir(out))
        print(
            f"{args.ranks} ranks, {size / 2**20:.1f} MiB of gzip traces, {os.cpu_count()} cores, {args.workers} workers"
        )
        inline = _timed("in-process", lambda: tb_gpu_advisor.analyze(out, executor="inline"))
        with fanout.local_pool(args.workers) as pool:
            pooled = _timed(
                f"local pool ({args.workers} processes)", lambda: tb_gpu_advisor.analyze(out, executor=pool)
            )
        print(f"local pool speedup {inline / pooled:.2f}x")
        with fanout.local_pool(args.workers) as pool:
            _timed("local pool, parent traced", lambda: tb_gpu_advisor.analyze(out, executor=pool), traced=True)
        if not args.no_dask:
            from distributed import Client, LocalCluster

            with LocalCluster(n_workers=args.workers, threads_per_worker=1, dashboard_address=None) as cluster:
                with Client(cluster) as client:
                    executor = client.get_executor(pure=False)
                    on_dask = _timed(
                        f"Dask ({args.workers} workers)", lambda: tb_gpu_advisor.analyze(out, executor=executor)
                    )
            print(f"Dask speedup {inline / on_dask:.2f}x")


if __name__ == "__main__":
    main()
