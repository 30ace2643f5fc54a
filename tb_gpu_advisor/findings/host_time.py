"""Helpers of the host-side findings: host op rows for evidence, host time on the critical path."""

from tb_gpu_advisor.findings.context import ms


HOST_OPS_LISTED = 5


def op_rows(ops):
    return [{"name": name, "count": count, "total_ms": ms(total)} for name, count, total in ops[:HOST_OPS_LISTED]]


def host_critical_ms(ctx):
    """Host time on the critical path: when no GPU works and the host is busy (preparing input on the step thread
    included) or launching."""
    return ctx.category_ms("host") + ctx.category_ms("input_prep") + ctx.category_ms("launch")
