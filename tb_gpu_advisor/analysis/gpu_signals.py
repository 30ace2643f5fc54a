"""What in a trace says the job was set up for a GPU, apart from GPU work: host events that name a GPU device or
GPU library, and CUDA or ROCm library versions in the metadata."""

from __future__ import annotations

import re

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.model.trace import TraceModel


# Host event names that ask for a GPU: device strings, GPU libraries (CUDA's and ROCm's), XLA's GPU runtime.
_GPU_REQUEST = re.compile(
    r"/device:GPU:\d|/gpu:\d|\bGPU:\d|cudnn|cublas|nccl|miopen|rocblas|hipblas|rccl|"
    r"GpuExecutable|XLA GPU module",
    re.IGNORECASE,
)
# /host:metadata keys of a CUDA or ROCm build (their presence says the GPU libraries were loaded).
GPU_LIBRARY_KEYS = (
    "cuda_version",
    "cuda_runtime_version",
    "cuda_driver_version",
    "cudnn_version",
    "cublas_version",
    "nccl_version",
    "rocm_version",
    "hip_version",
    "miopen_version",
    "rccl_version",
)


def gpu_requests(model: TraceModel) -> list:
    """The host event names that ask for a GPU, sorted."""
    return sorted(name for name in model.host_activity.op_totals if _GPU_REQUEST.search(name))


def gpu_library_versions(environment: dict) -> dict:
    """{metadata key: version} of the CUDA or ROCm libraries the trace's metadata records."""
    return {key: environment[key] for key in GPU_LIBRARY_KEYS if key in environment}


def set_up_for_gpu(model: TraceModel) -> bool:
    """Anything GPU-specific in the trace: GPU planes, host events that ask for a GPU, GPU library versions."""
    return bool(model.gpus or gpu_requests(model) or gpu_library_versions(model.environment))
