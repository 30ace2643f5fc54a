"""Prints the verdict, first findings and headline estimate of every committed real H200 run (tests/data/real/h200
and h200_heldout) beside the speedup its fix measured. Run from the project root: .venv/bin/python scripts/h200_pairs.py
A healthy run should have no bottleneck; a problem run its own cause first, with an estimate within 25% of the
measured fix. A fix run that still reads a bottleneck is marked `remainder` when its estimate is physically
possible (the step it promises, on the step measured without the profiler, is no shorter than the GPU compute per
step in the trace, copies aside; tests/findings/test_h200_twins.py decides which remainders are real), else `IMPOSSIBLE`; a
healthy run with one is `FALSE+`."""

import glob
import json
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "real")


def _runs():
    for sub in ("h200/jax", "h200/torch", "h200_heldout/torch"):
        cap_path = os.path.join(ROOT, sub, "capture.json")
        if not os.path.exists(cap_path):
            continue
        with open(cap_path) as f:
            runs = json.load(f)["runs"]
        ms = {k: v.get("step_ms_unprofiled", v.get("step_ms_mean")) for k, v in runs.items()}
        for name in sorted(runs):
            files = glob.glob(os.path.join(ROOT, sub, name, "plugins/profile/*/*.xplane.pb")) or glob.glob(
                os.path.join(ROOT, sub, name, "*.pt.trace.json.gz")
            )
            if not files:
                continue
            fixes = [k for k, v in runs.items() if v.get("fix_of") == name]
            measured = max((ms[name] / ms[k] for k in fixes), default=None)
            yield f"{sub}/{name}", files[0], measured, ms[name], bool(runs[name].get("fix_of"))


def main() -> None:
    header = ("run", "verdict", "first findings", "estimate", "measured", "ok")
    rows = []
    for label, path, measured, step_ms, is_fix in _runs():
        proc = subprocess.run(
            [sys.executable, "-m", "tb_gpu_advisor", "analyze", path, "--format", "json"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        try:
            host = json.loads(proc.stdout)["hosts"][0]
        except (ValueError, KeyError, IndexError):
            rows.append((label, "ERROR", proc.stderr.strip()[-80:], "", "", ""))
            continue
        summary = host["summary"]
        est = (summary.get("combined_estimate") or {}).get("estimated_speedup")
        top = ",".join(f["id"] for f in host.get("findings", [])[:3])
        ok = ""
        if measured:
            ok = "yes" if est and abs(est / measured - 1) <= 0.25 else "NO"
        elif est and est > 1.1 or summary.get("bottleneck_finding"):
            breakdown = summary.get("breakdown_pct") or {}
            compute_pct = sum(v or 0 for k, v in breakdown.items() if k.startswith("compute"))
            gpu_ms = compute_pct / 100.0 * ((summary.get("step_time_ms") or {}).get("mean") or 0)
            possible = not est or not gpu_ms or step_ms / est >= gpu_ms
            ok = ("remainder" if possible else "IMPOSSIBLE") if is_fix else "FALSE+"
        rows.append(
            (
                label,
                str(summary.get("bottleneck"))[:40],
                top,
                f"{est:.2f}x" if est else "-",
                f"{measured:.2f}x" if measured else "-",
                ok,
            )
        )
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    for r in [header] + rows:
        print("  ".join(c.ljust(widths[i]) for i, c in enumerate(r)))


if __name__ == "__main__":
    main()
