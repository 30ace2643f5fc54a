"""Runs every rule family over (TraceModel, HostReport so far) and returns the ranked findings and the verdict."""

from dataclasses import dataclass, replace

from tb_gpu_advisor.findings import (environment, host, input, kernels, launch, multi_gpu, steps, transfers,
                                     utilization)
from tb_gpu_advisor.findings.context import Context
from tb_gpu_advisor.findings.finding import SEVERITIES, capped
from tb_gpu_advisor.findings.overlaps import with_overlaps
from tb_gpu_advisor.findings.verdict import decide, not_enough

FAMILIES = (input, utilization, launch, kernels, transfers, host, multi_gpu, steps, environment)
RULES = tuple(rule for family in FAMILIES for rule in family.RULES)


@dataclass(frozen=True)
class Diagnosis:
    verdict: object  # verdict.Verdict
    findings: tuple  # Finding, most impactful first
    errors: tuple  # one line per rule that failed on this trace


def diagnose(model, report, framework=None, confidence=None):
    """Diagnosis of one host: every rule, ranked by severity then estimated speedup, and the verdict.

    With `confidence` low, no finding is high and the verdict says the trace is not enough.
    """
    ctx = Context(model, report, framework, confidence)
    found, errors = [], []
    for order, rule in enumerate(RULES):
        try:
            result = rule(ctx)
        except Exception as error:  # one faulty rule must not take the report down
            errors.append(f"Finding rule {rule.__module__.rsplit('.', 1)[-1]}.{rule.__name__} failed on this "
                          f"trace ({type(error).__name__}: {error}); its finding is missing.")
            continue
        if result is not None:
            found.append((order, replace(result, framework=ctx.framework.name)))
    found.sort(key=lambda item: (SEVERITIES.index(item[1].severity), -item[1].estimated_speedup, item[0]))
    findings = tuple(finding for _, finding in found)
    verdict = decide(ctx, findings)
    if confidence is not None and confidence.level == "low":
        verdict = not_enough(verdict, confidence)
        found = [(order, capped(finding, "medium")) for order, finding in found]
        found.sort(key=lambda item: (SEVERITIES.index(item[1].severity), -item[1].estimated_speedup, item[0]))
        findings = tuple(finding for _, finding in found)
    return Diagnosis(verdict=verdict, findings=with_overlaps(findings), errors=tuple(errors))
