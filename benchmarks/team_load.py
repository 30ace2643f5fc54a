"""Many users on one server: a bounded loopback load test of the tab's routes.

Serves the plugin (TensorBoard's WSGI app, werkzeug's threaded server, as `tensorboard` does) on 127.0.0.1 over
a logdir of --runs runs (the demo's profiles, each its own file), then --clients threads for --seconds each
ask, one request after the other, what a teammate's tab asks: the overview, a run's report, its timeline, a
kernel page, and a comparison with another run (202 "still analyzing" answers are asked again, as the tab
does). Prints latency p50/p95/max per route, errors (any answer but 200/202, or a timeout), how many analyses
ran against how many distinct files, and the process's peak RSS.

    python benchmarks/team_load.py                       # 20 clients, 30 s, 8 runs
    python benchmarks/team_load.py --warm                # every run analyzed before the clients start
    python benchmarks/team_load.py --clients 5 --seconds 10
"""

import argparse
import json
import logging
import os
import random
import resource
import shutil
import statistics
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

PREFIX = "/data/plugin/gpu_advisor"
DEMO = os.path.join(HERE, "..", "demo_logs")


def _logdir(root, count):
    """The first `count` demo runs, copied (XProf or anything else never writes beside the originals)."""
    logdir = os.path.join(root, "logs")
    runs = sorted(name for name in os.listdir(DEMO) if os.path.isdir(os.path.join(DEMO, name, "plugins")))[:count]
    for name in runs:
        shutil.copytree(
            os.path.join(DEMO, name),
            os.path.join(logdir, name),
            ignore=lambda directory, names: [
                n for n in names if os.path.isfile(os.path.join(directory, n)) and not n.endswith(".xplane.pb")
            ],
        )
    return logdir


def _serve(logdir, cache_entries):
    from tensorboard.backend import application
    from tensorboard.plugins import base_plugin
    from werkzeug.serving import make_server

    from tb_gpu_advisor.plugin.plugin import GpuAdvisorPlugin

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request
    flags = type("Flags", (), {"gpu_advisor_cache_entries": cache_entries})()
    plugin = GpuAdvisorPlugin(base_plugin.TBContext(logdir=logdir, flags=flags))
    server = make_server("127.0.0.1", 0, application.TensorBoardWSGI([plugin]), threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return plugin, server


def _get(port, route, limit_s, params):
    """(seconds until an answer that is not 202, its HTTP status or "timeout")."""
    url = f"http://127.0.0.1:{port}{PREFIX}/{route}?{urllib.parse.urlencode(params)}"
    started = time.perf_counter()
    while True:
        try:
            with urllib.request.urlopen(url, timeout=limit_s) as response:
                status = response.status
                json.loads(response.read())
        except urllib.error.HTTPError as err:
            status = err.code
        except OSError:
            status = "timeout"
        elapsed = time.perf_counter() - started
        if status != 202 or elapsed > limit_s:
            return elapsed, status
        time.sleep(0.5)  # the tab's retry interval


def _requests(runs, rng):
    """One teammate's visit: the overview, then a run's report, timeline, a kernel page and a comparison."""
    run = rng.choice(runs)
    other = rng.choice([r for r in runs if r["run"] != run["run"]])
    ids = {"run": run["run"], "host": run["hosts"][0]}
    return [
        ("overview", {}),
        ("report", ids),
        ("timeline", {**ids, "bins": rng.choice((120, 240, 480))}),
        ("kernels", {**ids, "filter": rng.choice(("", "gemm", "cudnn")), "sort": "total_us"}),
        ("compare", {**ids, "baseline_run": other["run"], "baseline_host": other["hosts"][0]}),
    ]


def _percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--cache-entries", type=int, default=32, help="--gpu_advisor_cache_entries")
    parser.add_argument(
        "--warm", action="store_true", help="analyze every run before the clients start (latencies of a warm server)"
    )
    parser.add_argument("--limit-s", type=float, default=120.0, help="a request waiting longer is an error")
    args = parser.parse_args(argv)
    root = tempfile.mkdtemp(prefix="tb_gpu_advisor_team_load_")
    os.environ["TB_GPU_ADVISOR_CACHE"] = os.path.join(root, "cache")
    analyses, counter = [], threading.Lock()
    latencies, errors = {}, []
    try:
        logdir = _logdir(root, args.runs)
        plugin, server = _serve(logdir, args.cache_entries)
        real_submit = plugin.service._pool.submit

        def counting(size, fn, *job_args, **options):  # each analysis handed to a worker process
            with counter:
                analyses.append(options.get("label"))
            return real_submit(size, fn, *job_args, **options)

        plugin.service._pool.submit = counting
        port = server.server_port
        runs = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}{PREFIX}/runs", timeout=60).read())
        if args.warm:
            for run in runs:
                _get(port, "report", args.limit_s, {"run": run["run"], "host": run["hosts"][0]})
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        deadline = time.monotonic() + args.seconds

        def client(seed):
            rng = random.Random(seed)
            while time.monotonic() < deadline:
                for route, params in _requests(runs, rng):
                    elapsed, status = _get(port, route, args.limit_s, params)
                    with counter:
                        latencies.setdefault(route, []).append(elapsed)
                        if status not in (200,):
                            errors.append((route, status, params))
                    if time.monotonic() >= deadline:
                        return

        threads = [threading.Thread(target=client, args=(seed,)) for seed in range(args.clients)]
        started = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.monotonic() - started
        server.shutdown()
        plugin.service.shutdown(wait=True)
        files = {host_file.path for run in plugin.index.runs() for host_file in run.hosts}
        result = {
            "clients": args.clients,
            "seconds": args.seconds,
            "wall_s": round(wall, 1),
            "runs": len(runs),
            "host_files": len(files),
            "analyses": len(analyses),
            "distinct_files_analyzed": len(set(analyses)),
            "requests": sum(len(v) for v in latencies.values()),
            "errors": len(errors),
            "error_samples": errors[:5],
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "rss_before_load_mb": round(rss_before / 1024, 1),
            "latency_s": {
                route: {
                    "count": len(values),
                    "p50": round(statistics.median(values), 3),
                    "p95": round(_percentile(values, 0.95), 3),
                    "max": round(max(values), 3),
                }
                for route, values in sorted(latencies.items())
            },
        }
        print(json.dumps(result, indent=1))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
