"""Runs every rule family over a host's model and analyses and returns the ranked findings and the verdict."""

from dataclasses import dataclass

from tb_gpu_advisor.findings.context import Context
from tb_gpu_advisor.findings.finding import SEVERITIES
from tb_gpu_advisor.findings.rules import RULES
from tb_gpu_advisor.findings.verdict import decide


@dataclass(frozen=True)
class Diagnosis:
    verdict: object  # verdict.Verdict
    findings: tuple  # Finding, most impactful first
    errors: tuple  # one line per rule that failed on this trace


def diagnose(model, analysis, report):
    """Diagnosis of one host from its model, HostAnalysis and rendered report: every rule, ranked by severity
    then estimated speedup, and the verdict."""
    ctx = Context(model, analysis, report)
    found, errors = [], []
    for order, rule in enumerate(RULES):
        try:
            result = rule(ctx)
        except Exception as error:  # one faulty rule must not take the report down
            errors.append(f"Finding rule {rule.__module__.rsplit('.', 1)[-1]}.{rule.__name__} failed on this "
                          f"trace ({type(error).__name__}: {error}); its finding is missing.")
            continue
        if result is not None:
            found.append((order, result))
    found.sort(key=lambda item: (SEVERITIES.index(item[1].severity), -item[1].estimated_speedup, item[0]))
    findings = tuple(finding for _, finding in found)
    return Diagnosis(verdict=decide(ctx, findings), findings=findings, errors=tuple(errors))
