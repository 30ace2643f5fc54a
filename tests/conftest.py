"""Shared fixtures: the committed real V100 trace and trace-building helpers."""

import pathlib

import pytest

from tb_gpu_advisor.model.build import build_model
from tb_gpu_advisor.pipeline import host_report
from tb_gpu_advisor.xplane.reader import parse_space
from tests.data import real_trace

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]


def model_of(builder, path="generated.xplane.pb"):
    """TraceModel of a TraceBuilder, without touching the disk."""
    return build_model(parse_space(builder.to_bytes(), path))


def report_of(builder, path="generated.xplane.pb"):
    return host_report(model_of(builder, path))


@pytest.fixture
def v100_trace():
    return real_trace("gpu_multi_worker_v100x8.xplane.pb")
