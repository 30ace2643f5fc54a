"""Every test module that needs a browser, a TensorBoard process, a server or a real capture is in a slow tier."""

import pathlib

from tests.tiers import TIER_MODULES, TIER_TESTS

ROOT = pathlib.Path(__file__).resolve().parents[1]

# What in a test module's source shows that it needs a slow tier, and the tier it most likely belongs to.
SIGNS = {
    "sync_playwright": "browser",
    "CHROMIUM": "browser",
    "TensorBoardProcess": "tensorboard",
    "s3_server": "remote",
    "dask_scheduler": "remote",
    "tools.capture": "capture",
}


def _tiers_of(path):
    relative = path.relative_to(ROOT).as_posix()
    tiers = {tier for tier, modules in TIER_MODULES.items() if relative in modules}
    tiers |= {tier for tier, tests in TIER_TESTS.items() if any(t.startswith(relative + "::") for t in tests)}
    return tiers


def test_every_slow_module_is_in_a_tier():
    missing = []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        if path.name == "test_tiers.py":
            continue
        source = path.read_text(encoding="utf-8")
        for sign, tier in SIGNS.items():
            if sign in source and not _tiers_of(path):
                missing.append(
                    f"{path.relative_to(ROOT)} uses {sign}: put it in a slow tier in tests/tiers.py (likely {tier})"
                )
    assert not missing, "\n".join(missing)


def test_every_listed_module_exists():
    listed = [m for modules in TIER_MODULES.values() for m in modules]
    listed += [t.split("::")[0] for tests in TIER_TESTS.values() for t in tests]
    assert [m for m in listed if not (ROOT / m).is_file()] == []


# The two modules that hold the tests below: collecting only them (as the `testpaths` of a plain run, so no path is
# named on the command line and the tier selection of tests/conftest.py applies as in a whole-suite run) keeps each
# run from importing every test module.
MODULES = "tests/test_speed_guard.py tests/test_linear_matching.py"


def _collected(*args):
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider", "-o", f"testpaths={MODULES}", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    ).stdout
    return {line.split("::")[-1].split("[")[0] for line in out.splitlines() if "::" in line}


def test_all_tiers_leaves_the_timed_tier_out_and_naming_it_runs_it():
    """CI runs --all-tiers on a shared machine: the speed guard must not run there, but `-m perf` runs it."""
    guard = "test_the_guard_holds_against_the_committed_baseline"
    timing = "test_the_timing_catches_backtracking_patterns"
    every = _collected("--all-tiers", "-k", f"{guard} or {timing}")
    assert timing in every and guard not in every, every
    assert guard in _collected("-m", "perf", "-k", guard)
