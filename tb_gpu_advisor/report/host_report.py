"""Renders a host's analyses and diagnosis as the HostReport dict (schema_version 1, docs/report.md)."""

from tb_gpu_advisor.analysis.breakdown import BREAKDOWN_CATEGORIES
from tb_gpu_advisor.analysis.launch import LATENCY_BIN_EDGES_US
from tb_gpu_advisor.analysis.steps import step_time_stats_ms

_PS_PER_US = 1e6
_PS_PER_MS = 1e9
HOST_OPS_LISTED = 25


def _us(ps):
    return None if ps is None else round(ps / _PS_PER_US, 3)


def _ms(ps):
    return None if ps is None else round(ps / _PS_PER_MS, 6)


def _pct(value):
    return None if value is None else round(float(value), 2)


def render_host_report(model, analysis):
    """The HostReport dict of a model and its HostAnalysis, without findings (with_diagnosis adds them)."""
    step_set = analysis.step_set
    whole = analysis.whole
    window_ps = int(whole.window_ps.sum())
    active = analysis.active_busy_pct
    return {
        "host": model.host,
        "file": model.path,
        "trace_format": model.format,
        "summary": {
            "gpu_busy_pct": _pct(sum(active) / len(active)) if active else None,
            "input_wait_pct": _pct(analysis.input_wait.pct),
            "step_time_ms": _round_stats(step_time_stats_ms(step_set)),
            "step_source": step_set.source,
            "gpu_count": len(model.gpus),
            "active_gpu_count": len(active),
            "analysis_window_ms": _ms(window_ps),
            "breakdown_pct": {name: _pct(100.0 * int(whole.category_ps[name].sum()) / window_ps)
                              if window_ps else None for name in BREAKDOWN_CATEGORIES},
        },
        "notes": _notes(model, step_set, analysis.usages),
        "devices": [_device(gpu, usage) for gpu, usage in zip(model.gpus, analysis.usages)],
        "kernels": [_kernel(row) for row in analysis.kernels],
        "launch": _launch(analysis.launch),
        "transfers": {key: _transfer(stats) for key, stats in analysis.transfers.items()},
        "steps": [_step(step, analysis.per_step, index) for index, step in enumerate(step_set.steps)],
        "balance": _balance(analysis.balance),
        "host_ops": _host_ops(model),
        "environment": dict(sorted(model.environment.items())),
        "findings": [],
    }


def with_diagnosis(report, diagnosis):
    """The report with the verdict first in its summary and the findings filled in (docs/findings.md)."""
    report["summary"] = {**diagnosis.verdict.summary_fields(), **report["summary"]}
    report["findings"] = [finding.to_dict() for finding in diagnosis.findings]
    report["notes"].extend(diagnosis.errors)
    return report


def _round_stats(stats):
    return {key: (round(value, 6) if isinstance(value, float) else value) for key, value in stats.items()}


def _notes(model, step_set, usages):
    notes = []
    if not model.gpus:
        notes.append("No GPU in this profile: it has no /device:GPU:N plane, so GPU metrics are not available "
                      "(was it captured on a CPU-only machine, or without the GPU tracer?).")
    elif not any(u.busy_pct is not None for u in usages):
        notes.append("The GPU planes hold no kernels, copies or memsets: the GPUs did no traced work.")
    if not model.has_host_plane:
        notes.append("No /host:CPU plane: launch latency, input wait and host time are not available.")
    if step_set.source == "none":
        notes.append("No step markers found: percentages use the span of activity instead of step windows. "
                     "Mark steps with tf.profiler.experimental.Trace('train', step_num=i, _r=1) or "
                     "jax.profiler.StepTraceAnnotation('train', step_num=i).")
    elif step_set.source == "device":
        notes.append("Steps come from the pre-grouped device Steps lines of an older TensorFlow: a step's time "
                     "is its longest GPU marker, as in XProf.")
    if model.gpus and model.format == "pre-grouped":
        notes.append("Older CUPTI format: kernel occupancy and memory kinds (pageable/pinned) are not recorded.")
    for warning in model.trace_warnings:
        notes.append(f"Profiler warning: {warning}")
    for error in model.trace_errors:
        notes.append(f"Profiler error: {error}")
    return notes


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
    }


def _device(gpu, usage):
    return {
        "name": gpu.name,
        "ordinal": gpu.ordinal,
        "busy_pct": _pct(usage.busy_pct),
        "busy_time_us": _us(usage.busy_ps),
        "window_us": _us(usage.window_ps),
        "kernel_count": usage.kernel_count,
        "kernel_time_us": _us(usage.kernel_ps),
        "memcpy_count": usage.memcpy_count,
        "memcpy_time_us": _us(usage.memcpy_ps),
        "memset_count": usage.memset_count,
        "memset_time_us": _us(usage.memset_ps),
        "nccl_time_us": _us(usage.nccl_ps),
        "largest_gap_us": _us(usage.largest_gap_ps),
        "stream_count": usage.stream_count,
        **_capability_fields(gpu.capabilities),
    }


def _kernel(row):
    total_ns = row.total_ps // 1000
    return {
        "name": row.name,
        "occurrences": row.occurrences,
        "total_us": _us(row.total_ps),
        # XProf divides integer nanoseconds; we do the same so the tables agree to the nanosecond.
        "avg_us": round((total_ns // row.occurrences) / 1000, 3),
        "min_us": _us(row.min_ps),
        "max_us": _us(row.max_ps),
        "occupancy_pct": _pct(row.occupancy_pct),
        "registers_per_thread": row.registers_per_thread,
        "shared_memory_bytes": row.shared_memory_bytes,
        "grid": list(row.grid),
        "block": list(row.block),
        "uses_tensor_cores": row.uses_tensor_cores,
        "tensor_core_eligible": row.tensor_core_eligible,
        "op_name": row.op_name,
    }


def _launch(stats):
    return {
        "count": stats.paired_count,
        "kernel_count": stats.kernel_count,
        "unpaired_count": stats.kernel_count - stats.paired_count,
        "latency_us": {"p50": _us(stats.latency_p50_ps), "p95": _us(stats.latency_p95_ps),
                       "max": _us(stats.latency_max_ps)},
        "latency_histogram": {"edges_us": [e if e != float("inf") else None for e in LATENCY_BIN_EDGES_US],
                              "counts": list(stats.latency_histogram)},
        "tiny_kernel_count": stats.tiny_kernel_count,
        "tiny_kernel_pct": _pct(100.0 * stats.tiny_kernel_count / stats.kernel_count)
        if stats.kernel_count else None,
        "per_step": None if stats.launches_per_step is None else round(stats.launches_per_step, 3),
        "launch_call_time_us": _us(stats.launch_call_ps),
    }


def _transfer(stats):
    return {
        "count": stats.count,
        "bytes": stats.bytes,
        "time_us": _us(stats.time_ps),
        "gbps": None if stats.gbps is None else round(stats.gbps, 3),
        "pageable_count": stats.pageable_count,
        "sync_count": stats.sync_count,
        "small_count": stats.small_count,
    }


def _step(step, per_step, index):
    window = int(per_step.window_ps[index])
    return {
        "name": step.name,
        "step_num": step.step_num,
        "start_ms": _ms(step.start_ps),
        "time_ms": _ms(step.duration_ps),
        "gpu_busy_pct": _pct(100.0 * int(per_step.gpu_busy_ps[index]) / window) if window else None,
        "breakdown_ms": {name: _ms(int(per_step.category_ps[name][index])) for name in BREAKDOWN_CATEGORIES},
    }


def _balance(result):
    return {
        "active_gpu_count": result.active_gpu_count,
        "busy_pct_min": _pct(result.busy_pct_min),
        "busy_pct_max": _pct(result.busy_pct_max),
        "busy_pct_spread": _pct(result.busy_pct_spread),
        "least_busy_device": result.least_busy_device,
        "most_busy_device": result.most_busy_device,
        "kernel_time_us_min": _us(result.kernel_ps_min),
        "kernel_time_us_max": _us(result.kernel_ps_max),
        "nccl_time_us": _us(result.nccl_ps),
        "nccl_share_pct": _pct(result.nccl_share_pct),
    }


def _host_ops(model):
    totals = sorted(model.host_activity.op_totals.items(), key=lambda item: (-item[1][1], item[0]))
    return [{"name": name, "count": count, "total_ms": _ms(total)}
            for name, (count, total) in totals[:HOST_OPS_LISTED]]
