"""Times our cold `analyze` against XProf's cold overview_page + kernel_stats conversion on the same traces.

One fresh process per measurement (interpreter start and imports included, as a user sees it), the trace
read once beforehand so both tools start from the page cache; runs of the two tools alternate. Prints the
median wall time, the ratio and each peak RSS (from wait4), the cost curve of `analyze` over the trace sizes,
and how fast AnalysisService answers a repeated request.

    python benchmarks/run.py                       # all sizes, 3 runs each (writes missing traces first)
    python benchmarks/run.py --sizes 75 300 --runs 5
"""

import argparse
import datetime
import importlib.metadata
import io
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

from benchmarks.generate import DATA_DIR, DEFAULT_SIZES, STEPS, trace_path  # noqa: E402

CACHE_REPEATS = 20


def ensure_trace(size_mb):
    """The benchmark trace of `size_mb`, written first by a separate process: Linux keeps a process's peak RSS
    across fork and exec, so writing it here would raise every later child's measured peak to ours."""
    path = trace_path(size_mb)
    if not os.path.exists(path):
        subprocess.run([sys.executable, os.path.join(HERE, "generate.py"), "--sizes", str(size_mb)], check=True)
    return path


def _child_ours(path):
    from tb_gpu_advisor.cli import main

    started = time.perf_counter()
    code = main(["analyze", path, "--format", "json"], out=io.StringIO(), err=sys.stderr)
    return {"seconds": time.perf_counter() - started, "exit": code}


def _child_xprof(path):
    from xprof.convert import raw_to_tool_data

    started = time.perf_counter()
    sizes = {}
    for tool in ("overview_page", "kernel_stats"):
        data, _ = raw_to_tool_data.xspace_to_tool_data([path], tool, {"use_saved_result": False})
        sizes[tool] = len(data or b"")
    return {"seconds": time.perf_counter() - started, "output_bytes": sizes}


def _child_cache(path):
    from tb_gpu_advisor.files.runs import HostFile
    from tb_gpu_advisor.service import AnalysisService

    service = AnalysisService()
    host = HostFile("host", path)
    started = time.perf_counter()
    service.submit("bench", host).result()
    cold = time.perf_counter() - started
    repeats = []
    for _ in range(CACHE_REPEATS):
        started = time.perf_counter()
        service.submit("bench", host).result()
        repeats.append((time.perf_counter() - started) * 1000)
    service.shutdown()
    return {"cold_s": cold, "repeat_ms": repeats}


CHILDREN = {"ours": _child_ours, "xprof": _child_xprof, "cache": _child_cache}


def compile_package():
    """Writes the package's bytecode, as an install does: without it (PYTHONDONTWRITEBYTECODE set, a fresh
    checkout) every child would compile our modules first, about half a second."""
    import compileall

    compileall.compile_dir(os.path.join(HERE, "..", "tb_gpu_advisor"), quiet=1)


def _warm(path):
    """Reads the file once so that both tools start from the page cache (a cold process, not a cold disk)."""
    with open(path, "rb") as handle:
        while handle.read(8 << 20):
            pass


def measure(kind, path, script=__file__):
    """(wall seconds, peak RSS MB, the child's own JSON) of one fresh process running `script --child KIND PATH`."""
    _warm(path)
    argv = [sys.executable, os.path.abspath(script), "--child", kind, path]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", GLOG_minloglevel="3")
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    output = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"{kind} on {path} exited with {process.returncode}")
    return wall, usage.ru_maxrss / 1024, json.loads(output.decode().strip().splitlines()[-1])


def _xprof_copy(path):
    """XProf writes a cache beside the trace: convert a copy placed in a throwaway logdir."""
    logdir = tempfile.mkdtemp(prefix="xprof-bench-")
    run_dir = os.path.join(logdir, "plugins", "profile", "bench")
    os.makedirs(run_dir)
    copy = os.path.join(run_dir, "host.xplane.pb")
    shutil.copyfile(path, copy)
    return logdir, copy


def bench_size(size_mb, runs, with_xprof):
    path = ensure_trace(size_mb)
    rows = {"ours": [], "xprof": []}
    for _ in range(runs):
        rows["ours"].append(measure("ours", path))
        if with_xprof:
            logdir, copy = _xprof_copy(path)
            try:
                rows["xprof"].append(measure("xprof", copy))
            finally:
                shutil.rmtree(logdir, ignore_errors=True)
    result = {
        "size_mb_nominal": size_mb,
        "file_mb": os.path.getsize(path) / 1e6,
        "kernels": 8 * 1000 * STEPS[size_mb],
        "runs": runs,
    }
    for tool, samples in rows.items():
        if samples:
            result[tool] = {
                "wall_s": [round(s[0], 3) for s in samples],
                "inner_s": [round(s[2]["seconds"], 3) for s in samples],
                "peak_rss_mb": [round(s[1], 1) for s in samples],
                "median_wall_s": round(statistics.median(s[0] for s in samples), 3),
                "median_inner_s": round(statistics.median(s[2]["seconds"] for s in samples), 3),
                "max_peak_rss_mb": round(max(s[1] for s in samples), 1),
            }
    if rows["xprof"]:
        result["ratio_wall"] = round(result["ours"]["median_wall_s"] / result["xprof"]["median_wall_s"], 3)
        result["ratio_inner"] = round(result["ours"]["median_inner_s"] / result["xprof"]["median_inner_s"], 3)
    result["ours_rss_per_file_size"] = round(result["ours"]["max_peak_rss_mb"] / (result["file_mb"] / 1.048576), 2)
    return result


def linear_fit(points):
    """(slope, intercept, r squared) of least squares y = slope * x + intercept."""
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mean_x) ** 2 for x in xs)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys)) / sxx
    intercept = mean_y - slope * mean_x
    total = sum((y - mean_y) ** 2 for y in ys)
    residual = sum((y - slope * x - intercept) ** 2 for x, y in zip(xs, ys))
    return slope, intercept, 1 - residual / total if total else 1.0


def machine():
    model = next(
        (line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
        platform.processor(),
    )
    memory = next((int(line.split()[1]) // 1024 for line in open("/proc/meminfo") if line.startswith("MemTotal")), 0)
    versions = {}
    for name in ("numpy", "protobuf", "xprof", "dask"):
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return {
        "cpu": model,
        "cores": os.cpu_count(),
        "memory_mb": memory,
        "python": platform.python_version(),
        "date": datetime.date.today().isoformat(),
        **versions,
    }


def _print_table(results):
    print(
        f"{'trace':>8} {'kernels':>9} {'ours s':>7} {'XProf s':>8} {'ratio':>6} {'ours RSS':>9} "
        f"{'x file':>6} {'XProf RSS':>10}"
    )
    for r in results:
        xprof = r.get("xprof")
        print(
            f"{r['file_mb']:6.1f}MB {r['kernels']:>9,} {r['ours']['median_wall_s']:7.2f} "
            f"{xprof['median_wall_s'] if xprof else float('nan'):8.2f} {r.get('ratio_wall', float('nan')):6.3f} "
            f"{r['ours']['max_peak_rss_mb']:7.0f}MB {r['ours_rss_per_file_size']:6.2f} "
            f"{xprof['max_peak_rss_mb'] if xprof else float('nan'):8.0f}MB"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=DEFAULT_SIZES, choices=sorted(STEPS))
    parser.add_argument(
        "--xprof-sizes", type=int, nargs="*", default=None, help="sizes to also run XProf on (default: all of --sizes)"
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cache-size", type=int, default=75, choices=sorted(STEPS))
    parser.add_argument("--child", nargs=2, metavar=("KIND", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(CHILDREN[args.child[0]](args.child[1])))
        return
    xprof_sizes = set(args.sizes if args.xprof_sizes is None else args.xprof_sizes)
    compile_package()
    info = machine()
    info["load_avg"] = os.getloadavg()
    print(json.dumps(info))
    results = []
    for size_mb in sorted(args.sizes):
        results.append(bench_size(size_mb, args.runs, size_mb in xprof_sizes))
        print(json.dumps(results[-1]), flush=True)
    _print_table(results)
    fit = None
    if len(results) >= 2:
        slope, intercept, r2 = linear_fit([(r["file_mb"], r["ours"]["median_wall_s"]) for r in results])
        fit = {"s_per_mb": slope, "intercept_s": intercept, "r2": r2}
        print(
            f"analyze cost: {slope * 100:.2f} s per 100 MB + {intercept:.2f} s fixed (R^2 = {r2:.4f}); per MB: "
            + ", ".join(f"{r['ours']['median_wall_s'] / r['file_mb'] * 1000:.0f} ms" for r in results)
        )
    wall, rss, cache = measure("cache", ensure_trace(args.cache_size))
    repeat = statistics.median(cache["repeat_ms"])
    print(
        f"AnalysisService on the {args.cache_size} MB trace: cold {cache['cold_s']:.2f} s, repeated request "
        f"median {repeat:.2f} ms (max {max(cache['repeat_ms']):.2f} ms over {CACHE_REPEATS})"
    )
    summary = {
        "machine": info,
        "results": results,
        "fit": fit,
        "cache": {"size_mb": args.cache_size, **cache, "median_repeat_ms": repeat},
    }
    os.makedirs(DATA_DIR, exist_ok=True)
    out = os.path.join(DATA_DIR, f"results-{datetime.datetime.now():%Y%m%d-%H%M%S}.json")
    with open(out, "w") as handle:
        json.dump(summary, handle, indent=1)
    print(f"results: {out}")


if __name__ == "__main__":
    main()
