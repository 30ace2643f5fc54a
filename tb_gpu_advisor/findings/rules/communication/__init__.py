"""Communication findings: exposed all-reduce and unevenly busy GPUs."""

from __future__ import annotations

from tb_gpu_advisor.findings.rules.communication.entries import ENTRIES as ENTRIES
from tb_gpu_advisor.findings.rules.communication.exposed import (
    allreduce_exposed,
    collective_waits_of as collective_waits_of,
    late_gpu_waited_for as late_gpu_waited_for,
    overlap_compute_ms as overlap_compute_ms,
    exposed_collectives_ms as exposed_collectives_ms,
    kinds_of as kinds_of,
)
from tb_gpu_advisor.findings.rules.communication.imbalance import gpu_imbalance
from tb_gpu_advisor.findings.rules.communication.bandwidth import collective_below_link


RULES = (allreduce_exposed, collective_below_link, gpu_imbalance)
