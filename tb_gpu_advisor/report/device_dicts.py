"""The per-GPU and per-kernel entries of a HostReport: device, work by type, stream idle, memory, kernel rows."""

from __future__ import annotations

from tb_gpu_advisor.analysis.kernel_names import kernel_precision
from tb_gpu_advisor.analysis.kernels import launch_recorded
from tb_gpu_advisor.analysis.rounding import pct, sig, us

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.analysis.gpu_memory import GpuMemory
    from tb_gpu_advisor.analysis.kernel_types import KernelTypeTimes
    from tb_gpu_advisor.analysis.kernels import KernelRow
    from tb_gpu_advisor.analysis.peaks import DevicePeaks
    from tb_gpu_advisor.analysis.roofline import KernelRoofline
    from tb_gpu_advisor.analysis.utilization import DeviceUsage
    from tb_gpu_advisor.model.trace import GpuDevice


def gpu_memory_dict(row: GpuMemory) -> dict:
    """One GPU's peak memory and headroom (analysis.gpu_memory.GpuMemory)."""
    return {
        "device": row.ordinal,
        "allocator": row.allocator,
        "peak_bytes_in_use": row.peak_bytes,
        "limit_bytes": row.limit_bytes,
        "capacity_bytes": row.capacity_bytes,
        "headroom_bytes": row.headroom_bytes,
        "peak_pct_of_limit": row.peak_pct,
        "doubled_batch_fits": row.doubled_batch_fits,
    }


def _capability_fields(caps):
    bandwidth = caps.memory_bandwidth_bytes_per_s
    return {
        "model_name": caps.model_name,
        "vendor": caps.vendor,
        "sm_count": caps.sm_count,
        "clock_mhz": caps.clock_mhz,
        "memory_bandwidth_gbps": round(bandwidth / 1e9, 3) if bandwidth else None,
        "memory_bytes": caps.memory_bytes,
        "compute_capability": ".".join(map(str, caps.compute_capability)) if caps.compute_capability else None,
        "arch": caps.arch,
    }


def device_dict(gpu: GpuDevice, usage: DeviceUsage, peaks: DevicePeaks) -> dict:
    return {
        "name": gpu.name,
        "ordinal": gpu.ordinal,
        "busy_pct": pct(usage.busy_pct),
        "compute_busy_pct": pct(usage.compute_busy_pct),
        "collective_busy_pct": pct(usage.collective_busy_pct),
        "kernel_busy_pct": pct(usage.kernel_busy_pct),
        "busy_time_us": us(usage.busy_ps),
        "window_us": us(usage.window_ps),
        "kernel_count": usage.kernel_count,
        "kernel_time_us": us(usage.kernel_ps),
        "memcpy_count": usage.memcpy_count,
        "memcpy_time_us": us(usage.memcpy_ps),
        "memset_count": usage.memset_count,
        "memset_time_us": us(usage.memset_ps),
        "nccl_time_us": us(usage.nccl_ps),
        "largest_gap_us": us(usage.largest_gap_ps),
        "stream_count": usage.stream_count,
        **_capability_fields(gpu.capabilities),
        "peak_tflops": sig(peaks.matrix_tflops),
        "peak_vector_tflops": sig(peaks.vector_tflops),
        "peak_gbps": sig(peaks.hbm_gbps),
        "peak_source": peaks.source,
        "peak_gbps_source": peaks.hbm_source or None,
    }


def work_by_type_dict(times: KernelTypeTimes) -> dict:
    """HTA's per-GPU views (analysis.kernel_types) over the device events inside the analysis window."""
    temporal = times.temporal_pct()
    return {
        "work_by_type_pct": {key: pct(value) for key, value in times.exclusive_pct().items()},
        "collective_overlap_pct": pct(times.overlap_pct),
        "temporal_pct": {key: pct(value) for key, value in temporal.items()} if temporal else None,
    }


def stream_idle_dict(by_stream):
    """{stream id (text): {host_wait, kernel_wait, other}} idle µs between the events of each stream."""
    return {str(stream): {cause: us(ps) for cause, ps in causes.items()} for stream, causes in by_stream.items()}


def kernel_dict(row: KernelRow, roof: KernelRoofline) -> dict:
    total_ns = row.total_ps // 1000
    recorded = launch_recorded(row)  # else the launch values are the readers' fillers: null, not in the trace
    # Every kernel uses registers: 0 is a trace that did not record the kernel's resources (ROCm's xplane), so its
    # registers and its shared memory (0 beside it) are unknown, not zero.
    resources = recorded and bool(row.registers_per_thread)
    return {
        "name": row.name,
        "occurrences": row.occurrences,
        "total_us": us(row.total_ps),
        # XProf divides integer nanoseconds; we do the same so the tables agree to the nanosecond.
        "avg_us": round((total_ns // row.occurrences) / 1000, 3),
        "min_us": us(row.min_ps),
        "max_us": us(row.max_ps),
        "occupancy_pct": pct(row.occupancy_pct),
        "achieved_occupancy_pct": pct(row.achieved_occupancy_pct),
        "registers_per_thread": row.registers_per_thread if resources else None,
        "shared_memory_bytes": row.shared_memory_bytes if resources else None,
        "grid": list(row.grid) if recorded else None,
        "block": None if row.block is None or not recorded else list(row.block),
        "uses_tensor_cores": row.uses_tensor_cores,
        "tensor_core_eligible": row.tensor_core_eligible,
        "op_name": row.op_name,
        "flops": None if roof.flops is None else round(roof.flops),
        "bytes": None if roof.bytes is None else round(roof.bytes),
        "achieved_tflops": sig(roof.achieved_tflops),
        "achieved_gbps": sig(roof.achieved_gbps),
        "arithmetic_intensity": sig(roof.arithmetic_intensity),
        "bound": roof.bound,
        "roof_tflops": sig(roof.roof_tflops),
        "peak_pct": pct(roof.peak_pct),
        "roofline_implausible": roof.implausible,
        "cost_shared": row.cost_shared,
        "cost_shared_by": row.cost_shared_by,
        "compute_roof": row.compute,
        "dtype": row.dtype,
        "precision": kernel_precision(row.name, row.dtype),
        "matrix_dims": dict(zip(("batch", "m", "n", "k"), row.matrix_dims)) if row.matrix_dims else None,
    }
