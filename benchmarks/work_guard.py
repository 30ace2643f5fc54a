"""The work guard: counts of our analysis's work on the guard's small traces, against a committed baseline.

The timed guard (benchmarks/guard.py) compares seconds, and seconds move with the machine's load: CI measured
it at +32% on a tree that measures +1% on an idle machine. This guard measures what a slower reader or model
does more of, in units the load cannot move: in a fresh process, `analyze` of each small trace (the 8-GPU XPlane
trace and the H200 PyTorch trace of benchmarks/guard.py) under a profiler that counts

- `lines`: Python lines executed in tb_gpu_advisor's own code (a loop over every event shows here),
- `calls`: calls of tb_gpu_advisor's functions (a generator's resumptions included),
- `peak_bytes`: the peak of memory allocated (tracemalloc: Python objects and numpy arrays).

A trace fails when one of its counts is more than TOLERANCE (20%) above the baseline's, or when the lines of
one part of the package (readers, model, analysis, ...) or of one module of the reader or the model grow by more
than 20% and by at least MIN_GROWTH (2%) of the trace's lines: a loop over every event in one reader module shows
even where the reader's other, vectorized lines are many. The failure message names what grew and the modules
whose lines grew the most.

    python benchmarks/work_guard.py                    # measure and compare with benchmarks/work_baseline.json
    python benchmarks/work_guard.py --write-baseline   # measure and record the baseline (commit it)
"""

import argparse
import datetime
import io
import json
import os
import subprocess
import sys
import tracemalloc

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

BASELINE = os.path.join(HERE, "work_baseline.json")
TOLERANCE = 0.20
MIN_GROWTH = 0.02
WATCHED = ("readers/", "model/")  # modules checked one by one: the reader and the model
MEASURES = ("lines", "calls", "peak_bytes")
PACKAGE = os.path.join(ROOT, "tb_gpu_advisor") + os.sep


def module_of(filename):
    """A source file's path in the package ("readers/xplane/reader.py"), or None outside it."""
    if not filename.startswith(PACKAGE):
        return None
    return filename[len(PACKAGE) :].replace(os.sep, "/")


def part_of(module):
    """The part of the package a module belongs to: its top folder ("readers", "model") or itself ("cli.py")."""
    return module.split("/", 1)[0]


class WorkCounter:
    """Counts lines executed and calls (generator resumptions included) of the package's code, per module,
    while installed as the trace function (sys.settrace): other code runs untraced."""

    def __init__(self):
        self.lines = {}
        self.calls = {}
        self._codes = {}  # code object -> (module, its line tracer), or None outside the package
        self._tracers = {}  # module -> its line tracer

    def _line_tracer(self, module):
        lines = self.lines
        lines[module] = 0

        def local(frame, event, arg):
            if event == "line":
                lines[module] += 1
            return local

        return local

    def trace(self, frame, event, arg):
        code = frame.f_code
        known = self._codes.get(code, False)
        if known is False:
            module = module_of(code.co_filename)
            if module is not None and module not in self._tracers:
                self._tracers[module] = self._line_tracer(module)
            known = self._codes[code] = None if module is None else (module, self._tracers[module])
        if known is None:
            return None
        self.calls[known[0]] = self.calls.get(known[0], 0) + 1
        return known[1]

    def __enter__(self):
        sys.settrace(self.trace)
        return self

    def __exit__(self, *exc):
        sys.settrace(None)


def measure_child(path):
    """{lines, calls, peak_bytes, modules: {module: [lines, calls]}} of one `analyze` of `path` (run in a fresh
    process: imports and caches then start the same way every time)."""
    from tb_gpu_advisor.cli import main

    out = io.StringIO()
    tracemalloc.start()
    with WorkCounter() as counter:
        code = main(["analyze", path, "--format", "json"], out=out, err=sys.stderr)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    if code != 0:
        raise SystemExit(f"analyze {path} exited with {code}")
    modules = sorted(set(counter.lines) | set(counter.calls))
    return {
        "lines": sum(counter.lines.values()),
        "calls": sum(counter.calls.values()),
        "peak_bytes": peak,
        "modules": {m: [counter.lines.get(m, 0), counter.calls.get(m, 0)] for m in modules},
    }


def measure(paths):
    """{name: measure_child(path)} of {name: path}, each in a fresh process, the processes side by side."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", GLOG_minloglevel="3")
    children = {
        name: subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--child", path],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for name, path in paths.items()
    }
    measured = {}
    for name, child in children.items():
        out, err = child.communicate()
        if child.returncode != 0:
            raise RuntimeError(f"work guard child on {paths[name]} exited with {child.returncode}: {err[-2000:]}")
        measured[name] = json.loads(out.strip().splitlines()[-1])
    return measured


# --- the comparison (pure: tests/test_work_guard.py drives it with made-up counts) ---


def _growth(measured, baseline):
    return measured / baseline - 1 if baseline else float("inf") if measured else 0.0


def parts(measured):
    """{part: lines} of one trace's measurement."""
    totals = {}
    for module, (lines, _) in measured["modules"].items():
        totals[part_of(module)] = totals.get(part_of(module), 0) + lines
    return totals


def compare(measured, baseline, tolerance=TOLERANCE, min_growth=MIN_GROWTH):
    """Messages for every count of one trace that grew too much (none: it holds)."""
    problems = []
    for name in MEASURES:
        change = _growth(measured[name], baseline[name])
        if change > tolerance:
            problems.append(f"{name} {baseline[name]:,} -> {measured[name]:,} ({change:+.0%}; limit +{tolerance:.0%})")
    floor = min_growth * baseline["lines"]
    groups = [(parts(baseline), parts(measured))]
    groups.append(
        tuple({m: c[0] for m, c in e["modules"].items() if m.startswith(WATCHED)} for e in (baseline, measured))
    )
    for old, new in groups:
        for name in sorted(set(new) | set(old)):
            before, after = old.get(name, 0), new.get(name, 0)
            change = _growth(after, before)
            if change > tolerance and after - before >= floor:
                problems.append(f"lines in tb_gpu_advisor/{name} {before:,} -> {after:,} ({change:+.0%})")
    return problems


def grown_modules(measured, baseline, top=3):
    """The modules whose lines grew the most, with their calls, as text (what a failure message points at)."""
    rows = []
    for module, (lines, calls) in measured["modules"].items():
        old_lines, old_calls = baseline["modules"].get(module, [0, 0])
        if lines > old_lines:
            rows.append((lines - old_lines, module, old_lines, lines, old_calls, calls))
    rows.sort(key=lambda row: (-row[0], row[1]))
    return [
        f"tb_gpu_advisor/{module}: lines {old_lines:,} -> {lines:,}, calls {old_calls:,} -> {calls:,}"
        for _, module, old_lines, lines, old_calls, calls in rows[:top]
    ]


def check(paths, baseline, tolerance=TOLERANCE):
    """{trace: {ok, problems, measured}} for every trace of the baseline ({name: path} in `paths`)."""
    measured = measure({name: paths[name] for name in baseline["traces"]})
    results = {}
    for name, entry in baseline["traces"].items():
        problems = compare(measured[name], entry, tolerance)
        if problems:
            problems.append("grew the most: " + "; ".join(grown_modules(measured[name], entry)))
        results[name] = {"ok": not problems, "problems": problems, "measured": measured[name]}
    return results


def same_python(baseline):
    """Whether this interpreter is the baseline's major.minor version (line counts are defined per version)."""
    return baseline["python"].split(".")[:2] == sys.version.split()[0].split(".")[:2]


def load_baseline(path=BASELINE):
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def traces(directory):
    """{"xplane": path, "kineto": path}: the timed guard's small traces (written once into `directory`)."""
    from benchmarks.guard import write_traces

    return write_traces(directory)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write-baseline", action="store_true")
    parser.add_argument("--data-dir", default=os.path.join(HERE, "data"))
    parser.add_argument("--child", metavar="PATH", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure_child(args.child)))
        return 0
    os.makedirs(args.data_dir, exist_ok=True)
    paths = traces(args.data_dir)
    if args.write_baseline:
        record = {
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="minutes"),
            "python": sys.version.split()[0],
            "measure": "lines executed and calls made in tb_gpu_advisor, peak tracemalloc bytes, of one analyze",
            "traces": measure(paths),
        }
        with open(BASELINE, "w", encoding="utf-8") as handle:
            json.dump(record, handle, indent=1, sort_keys=True)
            handle.write("\n")
        for name, entry in record["traces"].items():
            print(f"{name}: " + ", ".join(f"{m} {entry[m]:,}" for m in MEASURES))
        print(f"baseline: {BASELINE}")
        return 0
    baseline = load_baseline()
    if not same_python(baseline):
        print(f"the baseline was measured with Python {baseline['python']}: rerecord it with --write-baseline")
        return 2
    results = check(paths, baseline)
    for name, result in results.items():
        counts = ", ".join(f"{m} {result['measured'][m]:,}" for m in MEASURES)
        print(f"{name}: {counts}: " + ("ok" if result["ok"] else "FAILED: " + "; ".join(result["problems"])))
    return 0 if all(r["ok"] for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
