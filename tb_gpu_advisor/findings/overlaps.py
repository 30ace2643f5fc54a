"""Which findings claim the same recoverable time: their speedups overlap and must not be added up.

Each rule's recoverable time comes out of one or more pools of the step's time: the input wait, host work,
launch calls, GPU idle, kernel time, exposed collectives, exposed copies, or the excess of slow steps. Two
findings overlap when they draw from a common pool. The idle after a read back or a sync lasts until the host
launches again, so it holds host work and launch calls: those findings draw on both.
"""

from __future__ import annotations

from dataclasses import replace

POOLS = {
    "input.gpu_waits_for_input": {"input_wait"},
    "input.main_process_loader": {"input_wait"},
    "input.no_prefetch": {"input_wait"},
    "input.host_batch_prep": {"input_wait", "host"},
    "input.sequential_map": {"input_wait"},
    "input.map_pool_saturated": {"input_wait"},
    "input.python_generator": {"input_wait"},
    "input.demanded_file_reads": {"input_wait"},
    "input.no_cache": {"input_wait"},
    "input.tf_data_service": {"input_wait"},
    "batch.gpu_underused": {"input_wait", "host", "launch", "idle"},
    "precision.fp32_matmul": {"kernel"},
    "fusion.elementwise_kernels": {"kernel"},
    "fusion.unfused_attention": {"kernel"},
    "occupancy.low_occupancy": {"kernel"},
    "occupancy.tiny_grid": {"kernel"},
    "kernel.gemm_below_roof": {"kernel"},
    "environment.bf16_without_hardware": {"kernel"},
    "environment.versions_misaligned": set(),
    "environment.gpu_not_used": set(),
    "environment.idle_gpus": {"kernel"},
    "communication.gpu_imbalance": {"kernel"},
    "launch.gpu_starved_by_launches": {"launch"},
    "launch.tiny_kernels": {"launch", "host", "idle"},
    "launch.per_tensor_optimizer": {"launch", "host"},
    "threading.tf_data_contention": {"launch"},
    "threading.host_cpu_saturated": {"input_wait", "host", "launch"},
    "host.gpu_idle_host_busy": {"host"},
    "host.op_stall": {"idle"},
    "host.eager_execution": {"host", "launch"},
    "host.retracing": {"host"},
    "host.python_function": {"input_wait", "host", "launch"},
    "host.gc_pauses": {"host"},
    "host.feeder_blocked": {"input_wait"},
    "placement.ops_on_host": {"host", "launch"},
    "transfer.pageable_memory": {"copies"},
    "transfer.sync_copies": {"copies"},
    "transfer.small_copies": {"copies"},
    "transfer.wide_input_copies": {"copies"},
    "transfer.input_copy_in_step": {"copies"},
    "transfer.low_bandwidth": {"copies"},
    "transfer.d2h_sync_in_step": {"host", "launch", "idle"},
    "sync.host_syncs_in_step": {"host", "launch", "idle"},
    "memory.zero_grad_fills": {"kernel"},
    "memory.near_limit": set(),
    "memory.allocator_churn": {"host", "idle"},
    "communication.allreduce_exposed": {"collectives"},
    "communication.collective_below_link": {"collectives"},
    "collectives.comm_bound": {"collectives"},
    "collectives.per_parameter_allreduce": {"collectives"},
    "steps.checkpoint_stall": {"host", "slow_steps"},
    "steps.summary_stall": {"host", "slow_steps"},
    "steps.uneven_step_time": {"slow_steps"},
}

# Findings whose fix removes a wait, not work: the GPU's idle after a read back or a sync is the host's work
# before its next launch (Python, launch calls), which stays and then overlaps the device's work.
WAIT_FIXES = frozenset({"transfer.d2h_sync_in_step", "sync.host_syncs_in_step"})


def with_overlaps(findings: tuple) -> tuple:
    """The findings, each with `overlaps_with` = the ids of the others (in the given order) sharing a pool."""
    pools = {f.id: POOLS.get(f.id, set()) if f.recoverable_ms > 0 else set() for f in findings}
    return tuple(
        replace(
            f, overlaps_with=tuple(other.id for other in findings if other.id != f.id and pools[f.id] & pools[other.id])
        )
        for f in findings
    )
