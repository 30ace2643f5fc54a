"""The check result as JSON (`check --format json`, the assistant's check tool): the gate's verdict and what it
compared, schema tb_gpu_advisor/schema/check.schema.json."""

from tb_gpu_advisor.constants import SCHEMA_VERSION
from tb_gpu_advisor.errors import EXIT_OK, EXIT_REGRESSION


def _side(report):
    return {"run": report.get("run"), "hosts": [host["host"] for host in report.get("hosts", [])]}


def check_document(result, metric, max_regression_pct, candidate, baselines):
    """The JSON-ready dict of a GateResult `result` of `candidate` (a run report) against `baselines` (run reports)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "check",
        "passed": result.passed,
        "status": "ok" if result.passed else "regression",
        "exit_status": EXIT_OK if result.passed else EXIT_REGRESSION,
        "metric": metric,
        "max_regression_pct": max_regression_pct,
        "reason": result.reason,
        "candidate": _side(candidate),
        "baselines": [_side(report) for report in baselines],
    }
