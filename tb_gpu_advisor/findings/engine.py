"""Runs every rule family over a host's model and analyses and returns the ranked findings and the verdict."""

from dataclasses import dataclass, replace

from tb_gpu_advisor.findings.context import Context
from tb_gpu_advisor.findings.finding import SEVERITIES, capped
from tb_gpu_advisor.findings.overlaps import with_overlaps
from tb_gpu_advisor.findings.rules import RULES
from tb_gpu_advisor.findings.verdict import decide, not_enough
from tb_gpu_advisor.findings import pytorch_fixes  # noqa: F401 (registers PyTorch's wording of the findings)


@dataclass(frozen=True)
class Diagnosis:
    verdict: object  # verdict.Verdict
    findings: tuple  # Finding, most impactful first
    errors: tuple  # one line per rule that failed on this trace


def diagnose(model, analysis):
    """Diagnosis of one host from its model and HostAnalysis: every rule, ranked by severity
    then estimated speedup, and the verdict. With the trace's confidence low, no finding is high and the verdict
    says the trace is not enough."""
    ctx = Context(model, analysis)
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
    if ctx.confidence.level == "low":
        verdict = not_enough(verdict, ctx.confidence)
        found = [(order, capped(finding, "medium")) for order, finding in found]
        found.sort(key=lambda item: (SEVERITIES.index(item[1].severity), -item[1].estimated_speedup, item[0]))
        findings = tuple(finding for _, finding in found)
    return Diagnosis(verdict=verdict, findings=with_overlaps(findings), errors=tuple(errors))
