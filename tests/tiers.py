"""Which test modules belong to a slow tier: `pytest` runs only the fast tier, `scripts/test.sh` (and CI) all but perf."""

# tier -> the modules (paths from the repository root) whose every test is in it. A test module that starts a
# browser, a TensorBoard process, an S3 server or a Dask cluster, or runs a real capture, belongs here:
# tests/test_tiers.py fails when one is missing.
TIER_MODULES = {
    "browser": [  # Debian's chromium driven by Playwright
        "tests/plugin/test_plugin_browser.py",
        "tests/plugin/test_plugin_layout.py",
        "tests/plugin/test_plugin_collectives.py",
        "tests/plugin/test_browser_sharing.py",
        "tests/report/test_html_screenshot.py",
        "tests/plugin/test_plugin_truth.py",
        "tests/plugin/test_plugin_views.py",
        "tests/plugin/test_plugin_ranks_view.py",
    ],
    "tensorboard": [  # a real TensorBoard (or `tb-gpu-advisor serve`) subprocess
        "tests/plugin/test_plugin_serve.py",
        "tests/plugin/test_plugin_isolation.py",
    ],
    "mcp": [  # the MCP server as a subprocess, driven by the SDK's client
        "tests/assistant/test_mcp_server.py",
    ],
    "remote": [  # a local S3 server (moto) or a Dask cluster
        "tests/plugin/test_plugin_remote.py",
        "tests/remote/test_s3_server.py",
        "tests/test_fanout.py",
        "tests/analysis/ranks/test_scale.py",
    ],
    "capture": [  # real TensorFlow, JAX and PyTorch CPU captures
        "tests/capture/test_cpu_pairs.py",
        "tests/capture/test_jax_feeder.py",
        "tests/capture/test_jax_gpu.py",
        "tests/capture/test_tf_cpu.py",
        "tests/capture/test_tf_python_loader.py",
        "tests/capture/test_torch_cpu.py",
        "tests/findings/test_fix_code_runs.py",  # a catalog fix runs under real TensorFlow
    ],
    "fuzz": [  # many generated hostile files, a fixed number from a fixed seed
        "tests/test_fuzz.py",
    ],
    "perf": [],  # side-by-side benchmarks against a committed baseline ratio (single tests below)
    "package": [  # pip builds the wheel
        "tests/test_wheel.py",
    ],
}

# tier -> single tests in otherwise fast modules ("module.py::test_name").
TIER_TESTS = {
    "browser": ["tests/commands/test_report_site.py::test_the_index_sorts_and_filters_in_a_browser"],
    "perf": ["tests/test_speed_guard.py::test_the_guard_holds_against_the_committed_baseline"],
    "fuzz": [
        "tests/test_linear_matching.py::test_every_name_classifier_is_fast_on_100k_character_names",
        "tests/test_linear_matching.py::test_the_timing_catches_backtracking_patterns",
    ],
}

TIERS = tuple(TIER_MODULES)

# Tiers whose tests time things: they run only when named (`pytest -m perf`, or a path), never under
# --all-tiers, because a wall-clock or CPU-time limit on a shared CI machine fails on its load, not on the code.
NAMED_ONLY_TIERS = ("perf",)


def tier_of(module_path, test_name):
    """The slow tier of one test, or None for the fast tier."""
    for tier, tests in TIER_TESTS.items():
        if f"{module_path}::{test_name}" in tests:
            return tier
    for tier, modules in TIER_MODULES.items():
        if module_path in modules:
            return tier
    return None
