"""Fixtures for comparison tests: run reports of the generated scenario pairs."""

import pytest

from tb_gpu_advisor.files.discovery import resolve_target
from tb_gpu_advisor.pipeline import run_report
from tb_gpu_advisor.testing.pairs import PAIRS


@pytest.fixture(scope="session")
def pair_reports(tmp_path_factory):
    """{pair: {"problem": run report, "fixed": run report, "problem_again": run report (another seed)}}."""
    root = tmp_path_factory.mktemp("pairs")
    reports = {}
    for name, write in PAIRS.items():
        reports[name] = {
            side: run_report(*resolve_target(write(str(root / name / side), fixed, seed)))
            for side, fixed, seed in (("problem", False, 0), ("fixed", True, 1), ("problem_again", False, 7))
        }
    return reports
