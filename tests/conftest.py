"""Shared fixtures: the real traces in ../shared/traces (skipped when absent) and trace-building helpers."""

import os
import pathlib

import pytest

from tb_gpu_advisor.model.build import build_model
from tb_gpu_advisor.report.host_report import host_report
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
