"""Hostile inputs against the server (issue 28): how long files under 1 MB crafted to be slow take to analyze, and
how fast a 10,000-run logdir's overview and unknown ids are answered.

Part 1 writes the crafted shapes of issue 28 (long repeated-fragment kernel and event names, deep nesting, bad
numbers, an HLO module whose computations each call the next twice, many tiny kernels), each under 1 MB, and
analyzes each `--repeats` times through the server's AnalysisService (a worker process per analysis slot, under
the default budgets; `--time-budget-s` caps a file that still runs away), in this process; it prints the median
seconds per file and whether it stayed under 2 s. Part 2 writes a logdir of `--runs` runs (hard links of one
small profile), serves the plugin in-process through TensorBoard's WSGI app and times the first /overview
answer, the answers while the background scan reads the runs, the time until the scan is complete, and
requests naming unknown runs.

    python benchmarks/hostile.py                  # both parts, 10,000 runs
    python benchmarks/hostile.py --runs 1000 --skip-files
"""

import argparse
import gzip
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

LIMIT_S = 2.0  # any file under 1 MB
OVERVIEW_LIMIT_S = 1.0


def _kineto(path, events, **top):
    from tb_gpu_advisor.testing.kineto_trace import trace_text

    text = trace_text(events, **top)
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write(text)
    return path


def _run_dir(root, name):
    directory = os.path.join(root, name)
    os.makedirs(directory, exist_ok=True)
    return directory


def hostile_files(root):
    """{case: path} of crafted files, each under 1 MB on disk."""
    from tb_gpu_advisor.testing.builder import TraceBuilder
    from tb_gpu_advisor.testing.hlo import HloModuleBuilder, shape
    from tb_gpu_advisor.testing.kineto_trace import kernel, launch, x_event

    files = {}
    fragment = "gemm_f3_" * 60_000  # `gemm.*f32`-shaped: many starts, never the end a pattern looks for
    files["kineto_long_kernel_name"] = _kineto(
        os.path.join(_run_dir(root, "k1"), "w.pt.trace.json.gz"), [kernel(fragment, 1000, 5, 1), launch(990, 3, 1)]
    )
    buffers = "buffer_" * 60_000  # `buffer.*full`-shaped
    files["kineto_long_event_names"] = _kineto(
        os.path.join(_run_dir(root, "k2"), "w.pt.trace.json.gz"),
        [x_event("cpu_op", buffers + str(i), 1000 + 10 * i, 5) for i in range(20)] + [kernel("k", 1000, 5, 1)],
    )
    nested = '{"a": ' * 10_000 + "1" + "}" * 10_000
    path = os.path.join(_run_dir(root, "k3"), "w.pt.trace.json.gz")
    with gzip.open(path, "wt") as handle:
        handle.write('{"traceEvents": [' + kernel("k", 1000, 5, 1)[:-1] + ', "deep": ' + nested + "}]}")
    files["kineto_deep_nesting"] = path
    files["kineto_bad_numbers"] = _kineto(
        os.path.join(_run_dir(root, "k4"), "w.pt.trace.json.gz"),
        [
            kernel("k", 1000, "1e100", 1),
            kernel("k2", 2**70, 5, 2),
            kernel("\\ud800", 1000, 5, 3),
            x_event("cpu_op", "x", "1e308", 5),
        ],
    )
    many = TraceBuilder()
    gpu = many.gpu(0)
    for index in range(9_000):
        gpu.kernel(f"tiny_kernel_{index % 50}", 1000 + 3 * index, 2)
    files["xplane_9000_tiny_kernels"] = many.write(os.path.join(_run_dir(root, "x1"), "h.xplane.pb"))
    names = TraceBuilder()
    gpu = names.gpu(0)
    for index in range(4):
        gpu.kernel("void gemm_f3_" + "<gemm_f3_" * 8_000 + str(index), 1000 + 100 * index, 50)
    files["xplane_long_template_names"] = names.write(os.path.join(_run_dir(root, "x2"), "h.xplane.pb"))
    module = HloModuleBuilder("jit_train_step", 1)
    x = module.entry.parameter("x", shape("f32", 64, 64))
    callee = None
    for depth in range(40):  # each computation calls the next twice: 2**40 paths through the module
        computation = module.computation(f"level_{depth}")
        p = computation.parameter("p", shape("f32", 64, 64))
        if callee is None:
            computation.add("dot", "dot", shape("f32", 64, 64), (p, p))
        else:
            first = computation.add("call.a", "call", shape("f32", 64, 64), (p,), called=[callee])
            computation.add("call.b", "call", shape("f32", 64, 64), (first,), called=[callee])
        callee = computation
    module.entry.add("call", "call", shape("f32", 64, 64), (x,), called=[callee])
    chain = TraceBuilder()
    chain.hlo_module(1, "jit_train_step", module.to_bytes())
    gpu = chain.gpu(0)
    for index in range(10):
        gpu.kernel("loop_fusion", 1000 + 100 * index, 50, hlo_op="call", program_id=1)
    files["xplane_hlo_call_chain"] = chain.write(os.path.join(_run_dir(root, "x3"), "h.xplane.pb"))
    for case, path in files.items():
        assert os.path.getsize(path) < 2**20, (case, os.path.getsize(path))
    return files


def time_files(root, repeats, time_budget_s):
    from tb_gpu_advisor.errors import ProfileError
    from tb_gpu_advisor.files.runs import HostFile
    from tb_gpu_advisor.service import AnalysisService

    results = {}
    for case, path in hostile_files(root).items():
        samples, outcome = [], None
        for _ in range(repeats):
            service = AnalysisService(time_budget_s=time_budget_s)  # a fresh cache: every sample analyzes
            started = time.perf_counter()
            try:
                report = service.submit("run", HostFile("h", path)).result()
                outcome = f"{len(report.get('kernels') or [])} kernels"
            except ProfileError as err:
                outcome = f"error: {err.problem[:90]}"
            samples.append(time.perf_counter() - started)
            service.shutdown(wait=True)
        median = statistics.median(samples)
        results[case] = {
            "bytes": os.path.getsize(path),
            "median_s": round(median, 3),
            "max_s": round(max(samples), 3),
            "under_2s": median < LIMIT_S,
            "outcome": outcome,
        }
        print(
            f"{case:28s} {os.path.getsize(path):>8d} B  median {median:7.3f} s  max {max(samples):7.3f} s  "
            f"{'ok' if median < LIMIT_S else 'OVER 2 s'}  ({outcome})",
            flush=True,
        )
    return results


def big_logdir(root, count):
    from tb_gpu_advisor.testing.quickstart import write_quickstart

    source = write_quickstart(os.path.join(root, "source"))
    logdir = os.path.join(root, "logs")
    for index in range(count):
        target = os.path.join(
            logdir, f"model_{index // 5:05d}", "plugins", "profile", f"2026_01_0{index % 5 + 1}_00_00_00"
        )
        os.makedirs(target, exist_ok=True)
        os.link(source, os.path.join(target, "localhost.xplane.pb"))
    return logdir


def time_overview(root, count):
    from tensorboard.backend import application
    from tensorboard.plugins import base_plugin
    from werkzeug import test as werkzeug_test

    from tb_gpu_advisor.plugin.plugin import GpuAdvisorPlugin

    logdir = big_logdir(root, count)
    plugin = GpuAdvisorPlugin(base_plugin.TBContext(logdir=logdir))
    client = werkzeug_test.Client(application.TensorBoardWSGI([plugin]))

    def get(route, **params):
        started = time.perf_counter()
        response = client.get(f"/data/plugin/gpu_advisor{route}", query_string=params)
        return time.perf_counter() - started, response.status_code, json.loads(response.get_data(as_text=True))

    try:
        started = time.perf_counter()
        first_s, code, body = get("/overview")
        assert code == 200
        answers, progress = [first_s], [body["scanning"]]
        while body["scanning"] is not None and time.perf_counter() - started < 600:
            time.sleep(0.25)
            elapsed, _, body = get("/overview")
            answers.append(elapsed)
            progress.append(body["scanning"])
        complete_s = time.perf_counter() - started
        complete = [get("/overview")[0] for _ in range(5)]
        unknown = [get("/report", run=f"nope/{index}", host="localhost") for index in range(20)]
        results = {
            "runs": count,
            "first_answer_s": round(first_s, 3),
            "first_answer_scanning": progress[0],
            "answers_while_scanning": len(answers),
            "answer_median_s": round(statistics.median(answers), 3),
            "answer_max_s": round(max(answers), 3),
            "scan_complete_s": round(complete_s, 2),
            "rows": len(body["runs"]),
            "complete_answer_median_s": round(statistics.median(complete), 3),
            "unknown_run_median_s": round(statistics.median(u[0] for u in unknown), 4),
            "unknown_run_max_s": round(max(u[0] for u in unknown), 3),
            "unknown_run_codes": sorted({u[1] for u in unknown}),
            "listings": plugin.index.listings,
        }
    finally:
        plugin.overview.close()
        plugin.service.shutdown(wait=True)
    print(json.dumps(results, indent=1))
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--time-budget-s", type=float, default=120.0)
    parser.add_argument("--skip-files", action="store_true")
    parser.add_argument("--skip-overview", action="store_true")
    args = parser.parse_args(argv)
    root = tempfile.mkdtemp(prefix="tb_gpu_advisor_hostile_")
    os.environ["TB_GPU_ADVISOR_CACHE"] = os.path.join(root, "cache")
    try:
        results = {}
        if not args.skip_files:
            results["files"] = time_files(os.path.join(root, "files"), args.repeats, args.time_budget_s)
        if not args.skip_overview:
            results["overview"] = time_overview(os.path.join(root, "overview"), args.runs)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
