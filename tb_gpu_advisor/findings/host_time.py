"""Helpers of the host-side findings: host op rows for evidence, host time on the critical path."""

from __future__ import annotations

from tb_gpu_advisor.findings.context import ms

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.findings.context import Context


HOST_OPS_LISTED = 5


def op_rows(ops: list[tuple[str, int, int]]) -> list[dict]:
    return [{"name": name, "count": count, "total_ms": ms(total)} for name, count, total in ops[:HOST_OPS_LISTED]]


def host_critical_ms(ctx: Context) -> float:
    """Host time on the critical path: when no GPU works and the host is busy (preparing input on the step thread
    included) or launching."""
    return ctx.category_ms("host") + ctx.category_ms("input_prep") + ctx.category_ms("launch")
