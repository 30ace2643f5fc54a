"""Times our cold `analyze` of a large PyTorch (Kineto) trace against HTA's trace load + temporal breakdown on
the same file, side by side in one run.

The trace is a real H200 PyTorch profile (tests/data/real/h200_heldout, optimizer_per_tensor: 235,699 events,
78 MB of JSON) repeated `copies` times later in time with its own ids and steps
(`tb_gpu_advisor/testing/large_kineto.py`), written once into benchmarks/data/. One fresh process per
measurement (interpreter start and imports included), the file read once before each so both tools start from
the page cache; the two tools alternate, and every other round HTA goes first. Prints the medians, the ratio,
each peak RSS against the JSON's size and the issue's goals (ours >= 5x faster than HTA, 300 MB < 5 s, peak RSS
<= 1.5x the JSON).

    python benchmarks/kineto.py                      # 78 MB and 314 MB, 3 runs each
    python benchmarks/kineto.py --copies 4 --runs 5
"""

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

from benchmarks.generate import DATA_DIR  # noqa: E402
from benchmarks.run import compile_package, machine, measure  # noqa: E402

SOURCE = os.path.join(
    HERE,
    "..",
    "tests/data/real/h200_heldout/torch/optimizer_per_tensor/h200.1796408935959628428.pt.trace.json.gz",
)
GOAL_RATIO = 0.2  # ours / HTA: 5x faster
GOAL_300MB_S = 5.0
GOAL_RSS_PER_FILE = 1.5


def trace_path(copies, data_dir=DATA_DIR):
    return os.path.join(data_dir, f"h200_optimizer_{copies}x.pt.trace.json")


def ensure_trace(copies, data_dir=DATA_DIR):
    """The benchmark trace of `copies` copies, written first by a separate process (see run.ensure_trace)."""
    path = trace_path(copies, data_dir)
    if not os.path.exists(path):
        subprocess.run([sys.executable, os.path.abspath(__file__), "--write", str(copies), path], check=True)
    return path


def _write(copies, path):
    from tb_gpu_advisor.testing.large_kineto import write_repeated_kineto

    os.makedirs(os.path.dirname(path), exist_ok=True)
    started = time.perf_counter()
    size, events = write_repeated_kineto(path + ".tmp", SOURCE, copies)
    os.replace(path + ".tmp", path)
    print(f"wrote {path}: {size / 1e6:.1f} MB, {events:,} events in {time.perf_counter() - started:.1f} s")


def _child_ours(path):
    from tb_gpu_advisor.cli import main

    started = time.perf_counter()
    code = main(["analyze", path, "--format", "json"], out=io.StringIO(), err=sys.stderr)
    return {"seconds": time.perf_counter() - started, "exit": code}


def _child_hta(path):
    import logging

    logging.disable(logging.WARNING)
    from hta.trace_analysis import TraceAnalysis

    started = time.perf_counter()
    analysis = TraceAnalysis(trace_files={0: path})
    loaded = time.perf_counter() - started
    breakdown = analysis.get_temporal_breakdown(visualize=False)
    return {"seconds": time.perf_counter() - started, "load_s": loaded, "rows": len(breakdown)}


CHILDREN = {"ours": _child_ours, "hta": _child_hta}


def bench(copies, runs):
    path = ensure_trace(copies)
    rows = {"ours": [], "hta": []}
    for index in range(runs):
        order = ("ours", "hta") if index % 2 == 0 else ("hta", "ours")
        for tool in order:
            rows[tool].append(measure(tool, path, script=__file__))
    file_mb = os.path.getsize(path) / 1e6
    result = {"copies": copies, "file_mb": round(file_mb, 1), "runs": runs}
    for tool, samples in rows.items():
        result[tool] = {
            "wall_s": [round(s[0], 3) for s in samples],
            "inner_s": [round(s[2]["seconds"], 3) for s in samples],
            "peak_rss_mb": [round(s[1], 1) for s in samples],
            "median_wall_s": round(statistics.median(s[0] for s in samples), 3),
            "median_inner_s": round(statistics.median(s[2]["seconds"] for s in samples), 3),
            "max_peak_rss_mb": round(max(s[1] for s in samples), 1),
        }
    result["ratio_wall"] = round(result["ours"]["median_wall_s"] / result["hta"]["median_wall_s"], 3)
    result["ratio_inner"] = round(result["ours"]["median_inner_s"] / result["hta"]["median_inner_s"], 3)
    result["ours_rss_per_file_size"] = round(result["ours"]["max_peak_rss_mb"] / (file_mb / 1.048576), 2)
    return result


def _verdicts(result):
    ours = result["ours"]
    lines = [
        f"ours/HTA {result['ratio_wall']:.3f} (goal <= {GOAL_RATIO}): "
        + ("met" if result["ratio_wall"] <= GOAL_RATIO else "NOT met"),
        f"peak RSS {result['ours_rss_per_file_size']:.2f}x the JSON (goal <= {GOAL_RSS_PER_FILE}): "
        + ("met" if result["ours_rss_per_file_size"] <= GOAL_RSS_PER_FILE else "NOT met"),
    ]
    if result["file_mb"] >= 250:
        lines.append(
            f"{result['file_mb']:.0f} MB in {ours['median_wall_s']:.2f} s (goal < {GOAL_300MB_S} s): "
            + ("met" if ours["median_wall_s"] < GOAL_300MB_S else "NOT met")
        )
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--copies", type=int, nargs="+", default=[1, 4], help="78 MB per copy")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--child", nargs=2, metavar=("KIND", "PATH"), help=argparse.SUPPRESS)
    parser.add_argument("--write", nargs=2, metavar=("COPIES", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(CHILDREN[args.child[0]](args.child[1])))
        return
    if args.write:
        _write(int(args.write[0]), args.write[1])
        return
    compile_package()
    info = machine()
    info["load_avg"] = os.getloadavg()
    print(json.dumps(info), flush=True)
    results = []
    for copies in args.copies:
        result = bench(copies, args.runs)
        result["load_avg_after"] = os.getloadavg()
        results.append(result)
        print(json.dumps(result), flush=True)
    print(
        f"{'trace':>8} {'ours s':>7} {'HTA s':>7} {'ratio':>6} {'inner':>6} {'ours RSS':>9} {'x JSON':>6} {'HTA RSS':>8}"
    )
    for r in results:
        print(
            f"{r['file_mb']:6.1f}MB {r['ours']['median_wall_s']:7.2f} {r['hta']['median_wall_s']:7.2f} "
            f"{r['ratio_wall']:6.3f} {r['ratio_inner']:6.3f} {r['ours']['max_peak_rss_mb']:7.0f}MB "
            f"{r['ours_rss_per_file_size']:6.2f} {r['hta']['max_peak_rss_mb']:6.0f}MB"
        )
        for line in _verdicts(r):
            print("  " + line)
    os.makedirs(DATA_DIR, exist_ok=True)
    out = os.path.join(DATA_DIR, f"kineto-{time.strftime('%Y%m%d-%H%M%S')}.json")
    with open(out, "w") as handle:
        json.dump({"machine": info, "results": results}, handle, indent=1)
    print(f"results: {out}")


if __name__ == "__main__":
    main()
