"""The configuration and host_cpu entries of a HostReport: how the job ran, as the trace shows it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.analysis.cpu_load import CpuLoad


def configuration_dict(config):
    """The `configuration` section (analysis.configuration.Configuration); None without one."""
    if config is None:
        return None
    return {
        "framework": config.framework,
        "versions": dict(config.versions),
        "gpu": {
            "model": config.gpu_model,
            "count": config.gpu_count,
            "active": config.active_gpu_count,
            "compute_capability": config.compute_capability,
            "memory_bytes": config.gpu_memory_bytes,
            "arch": config.gpu_arch,
        },
        "tpu_count": config.tpu_count,
        "xla": config.xla,
        "graph_replay_pct": config.graph_replay_pct,
        "precision": config.precision,
        "matmul_dtype_pct": dict(config.matmul_dtype_pct),
        "tf32_by_default_pct": config.tf32_by_default_pct,
        "distribution": config.distribution,
        "global_batch": config.global_batch,
        "examples_per_step": {
            "value": config.examples.examples,
            "scope": config.examples.scope,
            "source": config.examples.source,
            "reason": config.examples.reason,
        },
        "thread_pools": dict(config.thread_pools),
        "gpu_thread_mode": config.gpu_thread_mode,
        "tf_data_options": list(config.tf_data),
        "host_cores": config.host_cores,
        "host_cores_seen": None
        if config.cores_seen is None
        else {
            "count": config.cores_seen.count,
            "source": config.cores_seen.source,
            "text": config.cores_seen.short_text(),
        },
    }


def host_cpu_dict(load: CpuLoad) -> dict | None:
    """Host threads' busy cores against the machine's (analysis.cpu_load); None without host threads."""
    if load is None or load.busy_cores is None:
        return None
    return {
        "machine_cores": load.machine_cores,
        "busy_cores": load.busy_cores,
        "load_ratio": load.load_ratio,
        "waiting_cores": load.waiting_cores,
        "span_ms": load.span_ms,
        "threads": [{"kind": kind, "count": count, "busy_cores": cores} for kind, count, cores in load.by_kind],
    }
