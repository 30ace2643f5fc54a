"""Loopback load test of the plugin's HTTP routes: is a small run answered while a large trace is analyzed and a
client sweeps `/timeline?bins=`?

Serves the plugin (TensorBoard's WSGI app) with a threaded werkzeug server on 127.0.0.1, then at once:
- client A asks /report of the large run (a benchmark trace, 73 MB by default);
- client B asks /timeline of the large run with bins 100, 101, ... 111 (one request after the other);
- client C, from 0.5 s on, asks /report of small runs (0.2 MB each, never analyzed before), one after another;
and prints each latency (until 200: a 202 "still running" is asked again), the CPU time the process used, and
the answer of a cold small /report on an idle server for reference. Bounded: every request gives up after
--limit-s seconds.

    python benchmarks/load.py                      # the 75 MB benchmark trace (written first if missing)
    python benchmarks/load.py --size 19 --small 5
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

from benchmarks.generate import STEPS, ensure_trace  # noqa: E402
from tb_gpu_advisor.demo import demo_timestamp  # noqa: E402

TIMESTAMP = "2026_01_01_00_00_00"
PREFIX = "/data/plugin/gpu_advisor"


def _logdir(root, big_trace, small_count):
    """<root>/big/plugins/profile/<ts>/host.xplane.pb (a link to the trace) and small_<i> runs of the demo's
    transfer-bound profile (0.13 MB), each its own file so each is a cold analysis."""
    small_source = os.path.join(
        HERE,
        "..",
        "demo_logs",
        "transfer_bound",
        "plugins",
        "profile",
        demo_timestamp("transfer_bound"),
        "a100-pcie-07.xplane.pb",
    )
    big = os.path.join(root, "big", "plugins", "profile", TIMESTAMP)
    os.makedirs(big)
    os.symlink(os.path.abspath(big_trace), os.path.join(big, "host.xplane.pb"))
    for index in range(small_count + 1):
        run = os.path.join(root, f"small_{index}", "plugins", "profile", TIMESTAMP)
        os.makedirs(run)
        shutil.copy(small_source, os.path.join(run, "host.xplane.pb"))
    return root


def _serve(logdir):
    from tensorboard.backend import application
    from tensorboard.plugins import base_plugin
    from werkzeug.serving import make_server

    from tb_gpu_advisor.plugin.plugin import GpuAdvisorPlugin

    flags = type("Flags", (), {"gpu_advisor_follow_symlinks": True})()
    plugin = GpuAdvisorPlugin(base_plugin.TBContext(logdir=logdir, flags=flags))
    server = make_server("127.0.0.1", 0, application.TensorBoardWSGI([plugin]), threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return plugin, server


def _get(port, route, limit_s, **params):
    """(seconds until a 200, HTTP status of the last answer): 202 answers are asked again."""
    url = f"http://127.0.0.1:{port}{PREFIX}{route}?{urllib.parse.urlencode(params)}"
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
        time.sleep(0.05)


def run(big_trace, small_count, limit_s):
    root = tempfile.mkdtemp(prefix="tb_gpu_advisor_load_")
    results = {"trace_mb": round(os.path.getsize(big_trace) / 2**20, 1), "small_runs": small_count}
    try:
        plugin, server = _serve(_logdir(root, big_trace, small_count))
        port = server.server_port
        plugin.wait_s = 2.0  # answer 202 quickly so that clients poll, as the tab does
        big_run = f"big/{TIMESTAMP}"
        idle, _ = _get(port, "/report", limit_s, run=f"small_{small_count}/{TIMESTAMP}", host="host")
        results["small_cold_idle_s"] = round(idle, 3)
        cpu_before = time.process_time()
        started = time.perf_counter()
        big, timeline, small = {}, [], []

        def client_a():
            big["seconds"], big["status"] = _get(port, "/report", limit_s, run=big_run, host="host")

        def client_b():
            for bins in range(100, 112):
                timeline.append((bins, *_get(port, "/timeline", limit_s, run=big_run, host="host", bins=bins)))

        def client_c():
            time.sleep(0.5)
            for index in range(small_count):
                small.append(_get(port, "/report", limit_s, run=f"small_{index}/{TIMESTAMP}", host="host"))

        threads = [threading.Thread(target=target) for target in (client_a, client_b, client_c)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(limit_s * 20)
        results.update(
            {
                "big_report_s": round(big["seconds"], 2),
                "big_report_status": big["status"],
                "timeline_sweep": [{"bins": b, "s": round(s, 3), "status": st} for b, s, st in timeline],
                "timeline_sweep_total_s": round(sum(s for _, s, _ in timeline), 2),
                "small_cold_under_load_s": [round(s, 3) for s, _ in small],
                "small_statuses": sorted({st for _, st in small}),
                "wall_s": round(time.perf_counter() - started, 2),
                "cpu_s": round(time.process_time() - cpu_before, 2),
            }
        )
        server.shutdown()
        plugin.service.shutdown()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=75, choices=sorted(STEPS), help="large trace, MB")
    parser.add_argument("--small", type=int, default=8, help="cold small runs asked for under load")
    parser.add_argument("--limit-s", type=float, default=120.0, help="a request gives up after this long")
    args = parser.parse_args()
    results = run(ensure_trace(args.size), args.small, args.limit_s)
    print(json.dumps(results, indent=1))
    small = results["small_cold_under_load_s"]
    print(
        f"large {results['trace_mb']} MB /report: {results['big_report_s']} s; timeline sweep of 12 bin "
        f"counts: {results['timeline_sweep_total_s']} s in all; cold small /report under load: max "
        f"{max(small):.3f} s, median {sorted(small)[len(small) // 2]:.3f} s (idle: "
        f"{results['small_cold_idle_s']} s); process CPU {results['cpu_s']} s over {results['wall_s']} s"
    )


if __name__ == "__main__":
    main()
