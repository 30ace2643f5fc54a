"""The team overview on a large logdir: how fast /overview answers, how fast rows fill in, and what a restart
costs (cold: nothing analyzed; warm: a new server on the same summary cache).

Writes N runs (hard links of one small input-bound profile: each its own path, so each is its own analysis)
into a temporary logdir, serves the plugin in-process (TensorBoard's WSGI app) and asks /overview like the tab
does (every second until nothing is pending), then builds a second plugin on the same cache directory.

    python benchmarks/overview.py               # 500 runs
    python benchmarks/overview.py --runs 100
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))


def _logdir(root, count):
    from tb_gpu_advisor.testing.pairs import write_input_pair

    source = write_input_pair(os.path.join(root, "source"), fixed=False, run="train")
    logdir = os.path.join(root, "logs")
    for index in range(count):
        series, day = f"model_{index // 5:03d}", index % 5 + 1
        target = os.path.join(logdir, series, "plugins", "profile", f"2026_01_0{day}_00_00_00")
        os.makedirs(target, exist_ok=True)
        os.link(source, os.path.join(target, "localhost.xplane.pb"))
    return logdir


def _client(logdir):
    from tensorboard.backend import application
    from tensorboard.plugins import base_plugin
    from werkzeug import test as werkzeug_test

    from tb_gpu_advisor.plugin.plugin import GpuAdvisorPlugin

    plugin = GpuAdvisorPlugin(base_plugin.TBContext(logdir=logdir))
    return plugin, werkzeug_test.Client(application.TensorBoardWSGI([plugin]))


def _counting(plugin, analyses):
    """Appends the file of every analysis `plugin` hands to a worker process to `analyses`."""
    submit = plugin.service._pool.submit

    def counted(size, fn, *args, **options):
        analyses.append(options.get("label"))
        return submit(size, fn, *args, **options)

    plugin.service._pool.submit = counted


def _overview(client):
    started = time.perf_counter()
    response = client.get("/data/plugin/gpu_advisor/overview")
    elapsed = time.perf_counter() - started
    assert response.status_code == 200, response.get_data(as_text=True)
    return elapsed, json.loads(response.get_data(as_text=True))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=500)
    parser.add_argument("--limit-s", type=float, default=1800, help="give up waiting for rows after this long")
    args = parser.parse_args(argv)
    root = tempfile.mkdtemp(prefix="tb_gpu_advisor_overview_")
    os.environ["TB_GPU_ADVISOR_CACHE"] = os.path.join(root, "cache")
    analyses = []
    try:
        logdir = _logdir(root, args.runs)
        results = {"runs": args.runs}
        plugin, client = _client(logdir)
        _counting(plugin, analyses)
        started = time.perf_counter()
        first_s, body = _overview(client)
        results["cold_first_answer_s"] = round(first_s, 3)
        results["cold_first_answer_done"] = body["done"]
        answers, first_rows_s = [first_s], None
        while (body["pending"] or body["scanning"]) and time.perf_counter() - started < args.limit_s:
            time.sleep(1.0)  # the tab's poll interval
            elapsed, body = _overview(client)
            answers.append(elapsed)
            if first_rows_s is None and body["done"] >= 10:
                first_rows_s = time.perf_counter() - started
        results["cold_first_10_rows_s"] = round(first_rows_s, 1) if first_rows_s else None
        results["cold_all_rows_s"] = round(time.perf_counter() - started, 1) if not body["pending"] else None
        plugin.overview.close()
        results["cold_answer_max_s"] = round(max(answers), 3)
        results["cold_analyses"] = len(analyses)
        plugin.service.shutdown(wait=True)

        analyses.clear()
        plugin, client = _client(logdir)  # a restarted server on the same summary cache
        _counting(plugin, analyses)
        warm_s, body = _overview(client)
        results["warm_first_answer_s"] = round(warm_s, 3)
        started = time.perf_counter()
        while body["scanning"] and time.perf_counter() - started < args.limit_s:
            time.sleep(0.2)
            _, body = _overview(client)
        results["warm_scan_complete_s"] = round(warm_s + time.perf_counter() - started, 2)
        results["warm_done"] = body["done"]
        plugin.overview.close()
        results["warm_analyses"] = len(analyses)
        plugin.service.shutdown(wait=True)
        print(json.dumps(results, indent=1))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
