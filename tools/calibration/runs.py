"""Run-to-run spread of each real pair's wall-clock speedup over the repeated captures kept under runs/."""

import glob
import json
import os
from dataclasses import dataclass

RUNS_GLOB = "tests/data/real/cpu_pairs/runs/idle_*.json"


@dataclass(frozen=True)
class Spread:
    """The lowest and highest wall-clock speedup (problem mean step / fix mean step) over `runs` captures."""

    low: float
    high: float
    runs: int


def speedups(pairs_json):
    """{pair name: wall-clock speedup} of one capture's pairs.json (pairs with both sides' mean step time)."""
    out = {}
    for name, pair in (pairs_json.get("pairs") or {}).items():
        problem = (pair.get("problem") or {}).get("step_ms_mean")
        fix = (pair.get("fix") or {}).get("step_ms_mean")
        if problem and fix:
            out[name] = problem / fix
    return out


def run_spreads(root, pattern=RUNS_GLOB):
    """{pair name: Spread} over every pairs.json matching `pattern` under `root` (none: an empty dict)."""
    seen = {}
    for path in sorted(glob.glob(os.path.join(root, pattern))):
        with open(path, encoding="utf-8") as handle:
            for name, value in speedups(json.load(handle)).items():
                seen.setdefault(name, []).append(value)
    return {name: Spread(min(values), max(values), len(values)) for name, values in seen.items()}
