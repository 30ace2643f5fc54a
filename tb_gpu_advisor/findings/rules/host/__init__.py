"""Host findings: host work while the GPU idles, eager ops, retracing, Python functions, GC pauses, the
thread feeding the device blocked on other threads."""

from __future__ import annotations

from tb_gpu_advisor.findings.finding import Finding
from tb_gpu_advisor.findings.rules.host_stalls import stall_finding
from tb_gpu_advisor.findings.rules.host.entries import ENTRIES as ENTRIES
from tb_gpu_advisor.findings.rules.host.busy import gpu_idle_host_busy
from tb_gpu_advisor.findings.rules.host.eager import JAX_EXECUTIONS as JAX_EXECUTIONS, eager_execution
from tb_gpu_advisor.findings.rules.host.functions import gc_pauses, python_function, retracing
from tb_gpu_advisor.findings.rules.host.feeder import feeder_blocked

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.findings.context import Context


def op_stall(ctx: Context) -> Finding | None:
    """The GPU idles while the step thread is blocked inside an op call: a wait, not host work (host_stalls)."""
    return stall_finding(ctx, "host.op_stall")


RULES = (op_stall, gpu_idle_host_busy, eager_execution, retracing, python_function, gc_pauses, feeder_blocked)
