"""Launch findings: the GPU starved by kernel launches, and kernels too short to hide them."""

from __future__ import annotations

from tb_gpu_advisor.findings.rules.launch.entries import ENTRIES as ENTRIES
from tb_gpu_advisor.findings.rules.launch.kernels import gpu_starved_by_launches, tiny_kernels
from tb_gpu_advisor.findings.rules.launch.optimizer import per_tensor_optimizer


RULES = (gpu_starved_by_launches, tiny_kernels, per_tensor_optimizer)
