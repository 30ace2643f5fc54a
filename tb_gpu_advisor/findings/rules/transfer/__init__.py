"""Transfer findings: pageable, synchronous, small or slow copies between host and GPU."""

from __future__ import annotations

from tb_gpu_advisor.findings.rules.transfer.entries import ENTRIES as ENTRIES
from tb_gpu_advisor.findings.rules.transfer.copies import low_bandwidth, pageable_memory, small_copies, sync_copies
from tb_gpu_advisor.findings.rules.transfer.in_step import d2h_sync_in_step, input_copy_in_step, wide_input_copies


RULES = (
    pageable_memory,
    input_copy_in_step,
    wide_input_copies,
    sync_copies,
    small_copies,
    low_bandwidth,
    d2h_sync_in_step,
)
