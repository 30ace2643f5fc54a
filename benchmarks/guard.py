"""The speed guard: the side-by-side benchmarks in a small form, against a committed baseline ratio.

Two pairs, each on a trace of a few MB: our cold `analyze` against XProf's overview page + kernel stats on a
generated 8-GPU XPlane trace, and our `analyze` against HTA's trace load + temporal breakdown on a real H200
PyTorch trace. Each measurement is a fresh process timing its own work in CPU seconds (user + system, its
waited-for children included: HTA parses in a pool worker), so the load of other jobs on a shared machine
moves it far less than wall time; the two tools alternate (every other round the reference goes first) and
the ratio is median(ours) / median(reference), so a machine that is uniformly slower or faster cancels out.

A pair fails when its ratio is more than TOLERANCE (20%) above the baseline's. One measurement that fails is
measured again, and the two sets of samples are pooled: a single noisy moment does not fail CI, a real
slowdown still does.

    python benchmarks/guard.py                    # measure and compare with benchmarks/guard_baseline.json
    python benchmarks/guard.py --write-baseline   # 3 rounds; records the median round's ratios (commit it)
"""

import argparse
import datetime
import io
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

BASELINE = os.path.join(HERE, "guard_baseline.json")
TOLERANCE = 0.20
RUNS = 5
KINETO_SOURCE = os.path.join(HERE, "..", "tests/data/real/h200/torch/healthy/h200.1796402349290750784.pt.trace.json.gz")
XPLANE_STEPS = 5  # 8 GPUs x 1000 kernels a step: about 3.5 MB

# pair -> (our child, the reference's child, the trace it runs on)
PAIRS = {"xplane_vs_xprof": ("ours", "xprof", "xplane"), "kineto_vs_hta": ("ours", "hta", "kineto")}


# --- the comparison (pure: tests/test_speed_guard.py drives it with fake numbers) ---


def ratio(ours, reference):
    """median(ours) / median(reference) of two lists of seconds."""
    return statistics.median(ours) / statistics.median(reference)


def verdict(measured, baseline, tolerance=TOLERANCE):
    """(ok, message): ok unless `measured` is more than `tolerance` above `baseline` (ratios: ours / reference)."""
    limit = baseline * (1 + tolerance)
    change = measured / baseline - 1
    message = f"ratio {measured:.3f} against the baseline {baseline:.3f} ({change:+.0%}; limit {limit:.3f})"
    return measured <= limit, message


def interleaved(measure, ours, reference, runs):
    """(our samples, the reference's samples): `runs` rounds of `measure(kind)`, alternating which goes first."""
    samples = {ours: [], reference: []}
    for index in range(runs):
        for kind in (ours, reference) if index % 2 == 0 else (reference, ours):
            samples[kind].append(measure(kind))
    return samples[ours], samples[reference]


def check_pair(measure, ours, reference, baseline, runs=RUNS, tolerance=TOLERANCE):
    """{ok, ratio, message, ours_s, reference_s} of one pair; a failing first set is measured again and the
    two sets pooled before the verdict."""
    ours_s, reference_s = interleaved(measure, ours, reference, runs)
    ok, message = verdict(ratio(ours_s, reference_s), baseline, tolerance)
    if not ok:
        more_ours, more_reference = interleaved(measure, ours, reference, runs)
        ours_s, reference_s = ours_s + more_ours, reference_s + more_reference
        ok, message = verdict(ratio(ours_s, reference_s), baseline, tolerance)
        message += f" (pooled over {len(ours_s)} runs after a first set over the limit)"
    return {
        "ok": ok,
        "ratio": ratio(ours_s, reference_s),
        "message": message,
        "ours_s": ours_s,
        "reference_s": reference_s,
    }


# --- the measurements ---


def _cpu_seconds():
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _timed(work):
    cpu, wall = _cpu_seconds(), time.perf_counter()
    work()
    return {"cpu_s": _cpu_seconds() - cpu, "wall_s": time.perf_counter() - wall}


def _child_ours(path):
    from tb_gpu_advisor.cli import main

    def work():
        code = main(["analyze", path, "--format", "json"], out=io.StringIO(), err=sys.stderr)
        assert code == 0, code

    return _timed(work)


def _child_xprof(path):
    from xprof.convert import raw_to_tool_data

    logdir = tempfile.mkdtemp(prefix="guard-xprof-")  # XProf writes a cache beside the trace: use a copy
    try:
        run_dir = os.path.join(logdir, "plugins", "profile", "guard")
        os.makedirs(run_dir)
        copy = os.path.join(run_dir, "host.xplane.pb")
        shutil.copyfile(path, copy)

        def work():
            for tool in ("overview_page", "kernel_stats"):
                raw_to_tool_data.xspace_to_tool_data([copy], tool, {"use_saved_result": False})

        return _timed(work)
    finally:
        shutil.rmtree(logdir, ignore_errors=True)


def _child_hta(path):
    import logging

    logging.disable(logging.WARNING)
    from hta.trace_analysis import TraceAnalysis

    return _timed(lambda: TraceAnalysis(trace_files={0: path}).get_temporal_breakdown(visualize=False))


CHILDREN = {"ours": _child_ours, "xprof": _child_xprof, "hta": _child_hta}


def write_traces(directory):
    """{"xplane": path, "kineto": path} of the guard's small traces, written into `directory`."""
    import gzip

    from tb_gpu_advisor.testing.large import write_training_trace

    xplane = os.path.join(directory, "guard_8gpu.xplane.pb")
    if not os.path.exists(xplane):
        write_training_trace(xplane, gpus=8, steps=XPLANE_STEPS, kernels_per_step=1000)
    kineto = os.path.join(directory, "guard_h200.pt.trace.json")
    if not os.path.exists(kineto):
        with gzip.open(KINETO_SOURCE, "rb") as source, open(kineto + ".tmp", "wb") as out:
            shutil.copyfileobj(source, out)
        os.replace(kineto + ".tmp", kineto)
    return {"xplane": xplane, "kineto": kineto}


def child_measure(path, field="cpu_s"):
    """measure(kind) -> seconds of one fresh process running `kind` on `path`."""

    def measure(kind):
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", GLOG_minloglevel="3")
        done = subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--child", kind, path],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{kind} on {path} exited with {done.returncode}: {done.stderr[-2000:]}")
        return json.loads(done.stdout.strip().splitlines()[-1])[field]

    return measure


def machine():
    model = next(
        (line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?"
    )
    return {"cpu": model, "cores": os.cpu_count(), "python": sys.version.split()[0]}


def run_guard(directory, baseline=None, runs=RUNS, tolerance=TOLERANCE):
    """{pair: result} for every pair; with `baseline` ({pair: ratio}) each result carries its verdict."""
    from benchmarks.run import compile_package

    compile_package()
    traces = write_traces(directory)
    results = {}
    for pair, (ours, reference, trace) in PAIRS.items():
        measure = child_measure(traces[trace])
        if baseline is None:
            ours_s, reference_s = interleaved(measure, ours, reference, runs)
            results[pair] = {"ratio": ratio(ours_s, reference_s), "ours_s": ours_s, "reference_s": reference_s}
        else:
            results[pair] = check_pair(measure, ours, reference, baseline[pair], runs, tolerance)
        results[pair]["trace_mb"] = round(os.path.getsize(traces[trace]) / 1e6, 2)
    return results


def load_baseline(path=BASELINE):
    """{pair: ratio} of the committed baseline."""
    with open(path, encoding="utf-8") as handle:
        return {pair: entry["ratio"] for pair, entry in json.load(handle)["pairs"].items()}


def _commit():
    done = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True, text=True, cwd=HERE)
    return done.stdout.strip() or None


def _print(results):
    for pair, result in results.items():
        ours, reference = statistics.median(result["ours_s"]), statistics.median(result["reference_s"])
        verdict_text = result.get("message", f"ratio {result['ratio']:.3f}")
        print(f"{pair} ({result['trace_mb']} MB): ours {ours:.3f} s, reference {reference:.3f} s; {verdict_text}")


def baseline_record(rounds, load_before):
    """The baseline JSON of several rounds of run_guard without a baseline: per pair, the median round's ratio."""
    record = {
        "machine": {**machine(), "load_avg_before": [round(v, 2) for v in load_before]},
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="minutes"),
        "commit": _commit(),
        "rounds": len(rounds),
        "runs": len(rounds[0][next(iter(PAIRS))]["ours_s"]),
        "measure": "CPU seconds (user + system, children included) of a fresh process; ratio of the medians, "
        "the median over the rounds",
        "pairs": {},
    }
    for pair in PAIRS:
        ratios = [results[pair]["ratio"] for results in rounds]
        record["pairs"][pair] = {
            "ratio": round(statistics.median(ratios), 4),
            "round_ratios": [round(r, 4) for r in ratios],
            "trace_mb": rounds[0][pair]["trace_mb"],
            "ours_s": [[round(s, 3) for s in results[pair]["ours_s"]] for results in rounds],
            "reference_s": [[round(s, 3) for s in results[pair]["reference_s"]] for results in rounds],
        }
    return record


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--write-baseline", action="store_true")
    parser.add_argument("--rounds", type=int, default=3, help="rounds measured for --write-baseline")
    parser.add_argument("--data-dir", default=os.path.join(HERE, "data"))
    parser.add_argument("--child", nargs=2, metavar=("KIND", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(CHILDREN[args.child[0]](args.child[1])))
        return 0
    os.makedirs(args.data_dir, exist_ok=True)
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if not args.write_baseline:
        results = run_guard(args.data_dir, load_baseline(), args.runs)
        _print(results)
        return 0 if all(r["ok"] for r in results.values()) else 1
    rounds = []
    for _ in range(args.rounds):
        rounds.append(run_guard(args.data_dir, None, args.runs))
        _print(rounds[-1])
    with open(BASELINE, "w", encoding="utf-8") as handle:
        json.dump(baseline_record(rounds, load), handle, indent=1)
        handle.write("\n")
    print(f"baseline: {BASELINE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
