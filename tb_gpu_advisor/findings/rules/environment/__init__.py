"""Environment findings: GPU generation, precision support, CUDA and driver versions."""

from __future__ import annotations

from tb_gpu_advisor.findings.rules.environment.entries import ENTRIES as ENTRIES
from tb_gpu_advisor.findings.rules.environment.compatibility import (
    bf16_without_hardware,
    cuda_older_than_gpu,
    cuda_version as cuda_version,
    driver_older_than_runtime,
    no_tensor_cores,
    versions_misaligned,
)
from tb_gpu_advisor.findings.rules.environment.devices import gpu_not_used, idle_gpus


RULES = (
    gpu_not_used,
    idle_gpus,
    no_tensor_cores,
    bf16_without_hardware,
    cuda_older_than_gpu,
    driver_older_than_runtime,
    versions_misaligned,
)
