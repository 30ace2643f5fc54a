"""Shared fixtures: the committed real V100 trace and trace-building helpers."""

import pathlib
import sys

import pytest

import tb_gpu_advisor.pipeline as _pipeline
from tb_gpu_advisor.readers.xplane.build import build_model
from tb_gpu_advisor.readers.xplane.reader import parse_space
from tb_gpu_advisor.report.invariants import report_problems
from tests.data import real_trace
from tests.readers.kineto.real import kineto_models  # noqa: F401 (a session fixture for every test module)
from tests.tiers import NAMED_ONLY_TIERS, TIERS, tier_of


def _checked(produce):
    def host_report(model, *args, **kwargs):
        report = produce(model, *args, **kwargs)
        problems = report_problems(report, where=f"HostReport of {model.path}")
        assert not problems, "a report broke the invariants (finite numbers, shares in 0-100): " + "; ".join(
            problems[:5]
        )
        return report

    host_report.__wrapped__ = produce
    return host_report


def _check_every_report():
    """Every HostReport any test produces in this process is checked against report.invariants: the
    function is replaced wherever it was imported by name, now and in modules imported later."""
    original = getattr(_pipeline.host_report, "__wrapped__", _pipeline.host_report)
    checked = _checked(original)
    for module in list(sys.modules.values()):
        if getattr(module, "host_report", None) is original:
            module.host_report = checked


_check_every_report()


def pytest_addoption(parser):
    parser.addoption(
        "--all-tiers",
        action="store_true",
        help="run the slow tiers too, all but the timed ones (tests/tiers.py); scripts/test.sh and CI pass it",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """Plain `pytest` (the whole fast tier) runs on every core through pytest-xdist; `-n N` picks the number of
    processes (`-n 0`: one), and a run that names tests, a tier or --all-tiers stays in one process unless given -n.
    Each module runs whole in one process (`--dist loadfile` unless --dist is given): its module fixtures and the
    analyses its tests share are made once, not once per process."""
    if (
        config.pluginmanager.hasplugin("xdist")
        and not hasattr(config, "workerinput")
        and config.option.numprocesses is None
        and not config.getoption("usepdb", False)
        and not (config.getoption("--all-tiers") or config.getoption("markexpr") or _names_tests(config))
    ):
        config.option.numprocesses = "auto"
        if config.option.dist == "no":
            config.option.dist = "loadfile"


def pytest_collection_modifyitems(config, items):
    """Marks each test of a slow tier (tests/tiers.py) with its tier. A plain `pytest` deselects them; `-m`,
    `--all-tiers` or a path or test id on the command line runs what it names. A timed tier (perf) runs only when
    named: `-m perf` or a path, never under --all-tiers alone."""
    for item in items:
        module, _, name = item.nodeid.partition("::")
        tier = tier_of(module, name.split("[")[0])
        if tier:
            item.add_marker(getattr(pytest.mark, tier))
    if config.getoption("markexpr") or _names_tests(config):
        return
    if config.getoption("--all-tiers"):
        timed = [item for item in items if any(item.get_closest_marker(tier) for tier in NAMED_ONLY_TIERS)]
        if timed:
            config.hook.pytest_deselected(items=timed)
            items[:] = [item for item in items if item not in set(timed)]
        return
    slow = [item for item in items if any(item.get_closest_marker(tier) for tier in TIERS)]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if item not in set(slow)]


def _names_tests(config):
    """Whether the command line names test files, folders or ids (then their slow tests run too)."""
    root = pathlib.Path(str(config.rootpath))
    return any(
        not arg.startswith("-") and (root / arg.split("::")[0]).exists() and arg.split("::")[0] != "tests"
        for arg in config.invocation_params.args
    )


def pytest_collection_finish(session):
    _check_every_report()  # test modules imported during collection bound the name themselves


from tb_gpu_advisor.pipeline import host_report  # noqa: E402 (the checked one)

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]


def model_of(builder, path="generated.xplane.pb"):
    """TraceModel of a TraceBuilder, without touching the disk."""
    return build_model(parse_space(builder.to_bytes(), path))


def report_of(builder, path="generated.xplane.pb"):
    return host_report(model_of(builder, path))


@pytest.fixture
def v100_trace():
    return real_trace("gpu_multi_worker_v100x8.xplane.pb")
