"""The Python API, for notebooks and scripts: the same analysis and comparison the CLI and the tab run.

import tb_gpu_advisor
report = tb_gpu_advisor.analyze("logs", run="train/2026_01_01_00_00_00")
report["hosts"][0]["summary"]["verdict"]
tb_gpu_advisor.compare("before/", "after/")["verdict"]
"""

from tb_gpu_advisor.comparison.diff import compare_reports
from tb_gpu_advisor.constants import DEFAULT_MAX_FILE_BYTES
from tb_gpu_advisor.files.discovery import resolve_target
from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.pipeline import run_report


def analyze(path, run=None, host=None, max_bytes=DEFAULT_MAX_FILE_BYTES, executor=None):
    """The run report (docs/report.md, schema_version 1) of a logdir, run directory or `.xplane.pb` file,
    local or an fsspec URL: its newest run unless `run` names one, every host unless `host` names one.

    A host that cannot be read is an entry of `report["errors"]`; ProfileError when the path itself names
    nothing to analyze. `executor`: None (local processes for big multi-host runs), "inline", or a
    concurrent.futures.Executor such as a Dask client's `get_executor()`.
    """
    run_id, host_files = resolve_target(path, run=run, host=host)
    return run_report(run_id, host_files, max_bytes=max_bytes, executor=executor)


def compare(
    baseline,
    candidate,
    baseline_run=None,
    candidate_run=None,
    host=None,
    baseline_host=None,
    candidate_host=None,
    max_bytes=DEFAULT_MAX_FILE_BYTES,
    executor=None,
):
    """The Comparison (docs/report.md, "Comparison") of two profiles, each as `analyze` takes it; ProfileError
    when a side has no host that could be analyzed."""
    sides = []
    for path, run, side_host in (
        (baseline, baseline_run, baseline_host or host),
        (candidate, candidate_run, candidate_host or host),
    ):
        report = analyze(path, run=run, host=side_host, max_bytes=max_bytes, executor=executor)
        if not report["hosts"]:
            first = report["errors"][0] if report["errors"] else {"file": path, "error": "no host could be analyzed"}
            raise ProfileError(first["file"], first["error"])
        sides.append(report)
    return compare_reports(*sides)
