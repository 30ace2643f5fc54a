"""Shared fixtures: the real traces in ../shared/traces (skipped when absent) and trace-building helpers."""

import os
import pathlib

import sys

import pytest

import tb_gpu_advisor.report.host_report as _host_report_module
from tb_gpu_advisor.model.build import build_model
from tb_gpu_advisor.report.invariants import report_problems


def _checked(produce):
    def host_report(model):
        report = produce(model)
        problems = report_problems(report, where=f"HostReport of {model.path}")
        assert not problems, "a report broke the invariants (finite numbers, shares in 0-100): " + \
            "; ".join(problems[:5])
        return report
    host_report.__wrapped__ = produce
    return host_report


def _check_every_report():
    """Every HostReport any test produces in this process is checked against report.invariants: the
    function is replaced wherever it was imported by name, now and in modules imported later."""
    original = getattr(_host_report_module.host_report, "__wrapped__", _host_report_module.host_report)
    checked = _checked(original)
    for module in list(sys.modules.values()):
        if getattr(module, "host_report", None) is original:
            module.host_report = checked


_check_every_report()


def pytest_collection_finish(session):
    _check_every_report()  # test modules imported during collection bound the name themselves


from tb_gpu_advisor.report.host_report import host_report  # noqa: E402 (the checked one)
from tb_gpu_advisor.xplane.reader import parse_space

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
SHARED = pathlib.Path(os.environ.get("TB_GPU_ADVISOR_SHARED", REPO_ROOT.parent / "shared"))
TRACES = SHARED / "traces"
REFERENCE = SHARED / "reference"


def shared_trace(name):
    """Path of a real trace in ../shared/traces; skips the test when the folder is absent."""
    path = TRACES / name
    if not path.exists():
        pytest.skip(f"real trace {name} not available: {TRACES} is absent (CI lays ../shared beside the clone)")
    return path


def shared_reference(*parts):
    path = REFERENCE.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"XProf reference output {path} not available")
    return path


def model_of(builder, path="generated.xplane.pb"):
    """TraceModel of a TraceBuilder, without touching the disk."""
    return build_model(parse_space(builder.to_bytes(), path))


def report_of(builder, path="generated.xplane.pb"):
    return host_report(model_of(builder, path))


@pytest.fixture
def v100_trace():
    return shared_trace("gpu_multi_worker_v100x8.xplane.pb")
