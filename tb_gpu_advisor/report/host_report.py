"""Renders a host's analyses and diagnosis as the HostReport dict (schema_version 1, docs/report.md)."""

from __future__ import annotations

from tb_gpu_advisor.analysis.capture_overhead import capture_overhead
from tb_gpu_advisor.analysis.kernel_names import kernel_precision
from tb_gpu_advisor.analysis.launch import LATENCY_BIN_EDGES_US
from tb_gpu_advisor.analysis.rounding import ms, pct, sig, us
from tb_gpu_advisor.report.idle_report import idle_attribution_dict


HOST_OPS_LISTED = 25
RANGE_PROFILER_NOTE = (
    "A GPU profile without kernel times: a CUPTI range-profiler capture ({ranges:,} "
    "cuda_profiler_range events: hardware counters per kernel or range). That mode replays each "
    "kernel to read its counters and records no kernel or copy times, so how busy the GPU was, "
    "why it idled and what overlaps cannot be measured from it."
)


def render_host_report(model, analysis):
    """The HostReport dict of a model and its HostAnalysis, without findings (with_diagnosis adds them)."""
    step_set = analysis.step_set
    confidence, framework = analysis.confidence, analysis.framework
    # A TPU profile's host time alone is no step breakdown: the TPUs' own time is not read.
    tpu_only = bool(model.tpu_count) and not model.gpus
    return {
        "host": model.host,
        "file": model.path,
        "trace_format": model.format,
        "summary": {
            "confidence": confidence.to_dict(),
            "framework": framework.name,
            "framework_evidence": list(framework.evidence),
            "gpu_busy_pct": analysis.gpu_busy_pct,
            "gpu_compute_busy_pct": analysis.gpu_compute_busy_pct,
            "gpu_kernel_busy_pct": analysis.gpu_kernel_busy_pct,
            "input_wait_pct": None if tpu_only else analysis.input_wait_pct,
            "step_time_ms": analysis.step_time_ms,
            "step_source": step_set.source,
            "step_timing": step_set.timing,
            "steps_left_out": [
                {"name": left.step.name, "time_ms": ms(left.step.duration_ps), "reason": left.reason}
                for left in step_set.left_out
            ],
            "gpu_count": len(model.gpus),
            "tpu_count": model.tpu_count,
            "active_gpu_count": len(analysis.active_busy_pct),
            "analysis_window_ms": ms(analysis.window_ps),
            "breakdown_pct": {} if tpu_only else analysis.breakdown_pct,
            "flops_utilization_pct": pct(analysis.flop_utilization.pct),
            "costed_kernel_time_pct": pct(analysis.flop_utilization.costed_kernel_time_pct),
        },
        "notes": _notes(model, step_set, analysis.usages)
        + _implausible_notes(analysis.kernels)
        + _roofline_notes(analysis)
        + list(confidence.notes)
        + _graph_notes(analysis)
        + _capture_notes(model, analysis),
        "devices": [
            {**_device(gpu, usage, peaks), **_work_by_type(times), "stream_idle_us": _stream_idle(idle)}
            for gpu, usage, peaks, times, idle in zip(
                model.gpus, analysis.usages, analysis.device_peaks, analysis.work_by_type, analysis.stream_idle
            )
        ],
        "kernels": [_kernel(row, roof) for row, roof in zip(analysis.kernels, analysis.roofline)],
        "launch": _launch(analysis.launch),
        "transfers": {key: _transfer(stats) for key, stats in analysis.transfers.items()},
        "steps": [_step(step, analysis, index) for index, step in enumerate(step_set.timed_steps)],
        "balance": _balance(analysis.balance),
        "host_ops": _host_ops(model),
        "collectives": _collectives(analysis.collectives, len(step_set.steps)),
        "environment": dict(sorted(model.environment.items())),
        "host_cpu": _host_cpu(analysis.cpu_load),
        "configuration": configuration_dict(analysis.configuration),
        "gpu_memory": [_gpu_memory(row) for row in analysis.gpu_memory],
        "collective_bandwidth": _collective_bandwidth(analysis.link, analysis.collective_bandwidth),
        "idle_attribution": idle_attribution_dict(analysis),
        "findings": [],
    }


def with_diagnosis(report, diagnosis):
    """The report with the verdict first in its summary and the findings filled in (docs/findings.md)."""
    report["summary"] = {**diagnosis.verdict.summary_fields(), **report["summary"]}
    combined = diagnosis.combined
    report["summary"]["combined_estimate"] = (
        None
        if combined is None
        else {
            "estimated_speedup": combined.speedup,
            "speedup_kind": combined.kind,
            "finding_ids": list(combined.counted),
            "shared_ids": list(combined.shared),
            "capped_by_gpu_work": combined.capped_by == "gpu_work",
            "capped_by": combined.capped_by,
        }
    )
    # Host batch preparation on the step thread is input time that no IteratorGetNext wait shows: the header
    # gives it beside the input wait.
    prep = next((f for f in diagnosis.findings if f.id == "input.host_batch_prep"), None)
    report["summary"]["batch_prep_pct"] = None if prep is None else prep.evidence.metrics.get("batch_prep_pct")
    framework = report["summary"].get("framework")
    vendor = run_vendor(report["devices"])
    report["findings"] = [finding.to_dict(framework, vendor) for finding in diagnosis.findings]
    report["notes"].extend(diagnosis.errors)
    return report


def run_vendor(devices: list[dict]) -> str | None:
    """ "NVIDIA" or "AMD" when every GPU with kernels of a report's `devices` is that vendor's, else None."""
    vendors = {(d.get("vendor") or "").upper() for d in devices if d.get("kernel_count")}
    return next(iter(vendors)) if len(vendors) == 1 and vendors <= {"NVIDIA", "AMD"} else None


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


def _gpu_memory(row):
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


def _host_cpu(load):
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


def _collective_bandwidth(link, rows):
    """Per collective kind: sizes and NCCL-tests bandwidths against the link (analysis.collective_bandwidth)."""
    return {
        "link": None
        if link is None
        else {"kind": link.kind, "gbps": link.gbps, "known": link.known, "basis": link.basis},
        "collectives": [
            {
                "collective": row.collective,
                "calls": row.calls,
                "sized_calls": row.sized_calls,
                "group_size": row.group_size,
                "median_bytes": row.median_bytes,
                "time_ms": row.total_ms,
                "large_calls": row.large_calls,
                "algbw_gbps": row.algbw_gbps,
                "busbw_gbps": row.busbw_gbps,
                "best_busbw_gbps": row.best_busbw_gbps,
                "best_busbw_link_ratio": row.best_busbw_link_ratio,
                "size_source": row.size_source,
                "group_size_source": row.group_size_source,
            }
            for row in rows
        ],
    }


def _capture_notes(model, analysis):
    """What the profiler's recording options cost the host (analysis.capture_overhead), when any is on."""
    stats = analysis.step_time_ms
    overhead = capture_overhead(
        model, stats["count"], stats["mean"], int(analysis.per_step.gpu_busy_ps.sum()) if stats["count"] else 0
    )
    note = overhead.note()
    return [note] if note else []


def _graph_notes(analysis):
    """What graph replays (CUDA graphs, XLA command buffers) hide from the launch analysis, when they hide it."""
    note = analysis.compilation.graph_note(analysis.framework.name) if analysis.compilation is not None else None
    return [note] if note else []


def _notes(model, step_set, usages):
    notes = []
    if not model.gpus and model.gpu_metric_ranges:
        notes.append(RANGE_PROFILER_NOTE.format(ranges=model.gpu_metric_ranges))
    elif not model.gpus and model.format == "kineto":
        notes.append(
            "No GPU in this profile: the trace has no kernel, gpu_memcpy or gpu_memset events, so GPU "
            "metrics are not available (was it captured on a CPU-only machine, or without "
            "ProfilerActivity.CUDA?)."
        )
    elif not model.gpus and model.tpu_count:
        notes.append(
            f"This is a TPU profile ({model.tpu_count} /device:TPU planes, no GPU): this advisor measures "
            "GPUs; open it in TensorBoard's Profile tab, whose XProf tools analyze TPUs."
        )
    elif not model.gpus:
        notes.append(
            "No GPU in this profile: it has no /device:GPU:N plane, so GPU metrics are not available "
            "(was it captured on a CPU-only machine, or without the GPU tracer?)."
        )
    elif not any(u.busy_pct is not None for u in usages):
        notes.append("The GPU planes hold no kernels, copies or memsets: the GPUs did no traced work.")
    pytorch = model.format == "kineto"
    if not model.has_host_plane:
        notes.append(
            "No host events (cpu_op, cuda_runtime) in this trace: launch latency, input wait and host "
            "time are not available."
            if pytorch
            else "No /host:CPU plane: launch latency, input wait and host time are not available."
        )
    if step_set.source == "device":  # no step markers: summary.confidence says so, with how to add them
        notes.append(
            "Steps come from the pre-grouped device Steps lines of an older TensorFlow: a step's time "
            "is its longest GPU marker, as in XProf."
        )
    if model.gpus and model.format == "pre-grouped":
        notes.append("Older CUPTI format: kernel occupancy and memory kinds (pageable/pinned) are not recorded.")
    for warning in model.trace_warnings:
        notes.append(f"Profiler warning: {warning}")
    for error in model.trace_errors:
        notes.append(f"Profiler error: {error}")
    return notes


def _implausible_notes(table):
    """One note per kernel row carrying a launch value no GPU allows (shown as unknown, never advice)."""
    notes = []
    for row in table:
        for item in row.implausible:
            notes.append(
                f"Kernel {row.name}: {item.field.replace('_', ' ')} {item.value} is {item.limit}; "
                "the trace's value is corrupt, so it is shown as unknown and no advice uses it."
            )
    return notes


def _roofline_notes(analysis):
    """One note per HLO op whose cost was left out, and per kernel row whose share of its roof was."""
    notes = [
        f"HLO op {item.op_name} (program {item.program_id}): the FLOPs counted from its module would run at "
        f"{item.achieved_tflops:.4g} TFLOP/s on GPU {item.gpu}, faster than any unit of that GPU "
        f"({item.fastest_roof_tflops:g} TFLOP/s); the count cannot be right, so the op is left out of the "
        "roofline and of the FLOP utilization."
        for item in analysis.implausible_costs
    ]
    for row, roof in zip(analysis.kernels, analysis.roofline):
        if roof.implausible:
            notes.append(f"Kernel {row.name}: {roof.implausible}; its share of the roof is left out.")
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
        "arch": caps.arch,
    }


def _device(gpu, usage, peaks):
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


def _work_by_type(times):
    """HTA's per-GPU views (analysis.kernel_types) over the device events inside the analysis window."""
    temporal = times.temporal_pct()
    return {
        "work_by_type_pct": {key: pct(value) for key, value in times.exclusive_pct().items()},
        "collective_overlap_pct": pct(times.overlap_pct),
        "temporal_pct": {key: pct(value) for key, value in temporal.items()} if temporal else None,
    }


def _stream_idle(by_stream):
    """{stream id (text): {host_wait, kernel_wait, other}} idle µs between the events of each stream."""
    return {str(stream): {cause: us(ps) for cause, ps in causes.items()} for stream, causes in by_stream.items()}


def _collectives(calls, step_count=0):
    """Collective calls grouped by where they were recorded and which collective; sizes where recorded, calls
    per step (per GPU for kernels), where the kind was read and the ops that issued them."""
    groups = {}
    for call in calls:
        entry = groups.setdefault(
            (call.source, call.collective),
            {
                "source": call.source,
                "collective": call.collective,
                "calls": 0,
                "time_us": 0.0,
                "in_bytes": 0,
                "out_bytes": 0,
                "sized_calls": 0,
                "dtypes": set(),
                "group_sizes": set(),
                "size_sources": set(),
                "named_from": set(),
                "issued_by": {},
                "devices": set(),
            },
        )
        entry["calls"] += 1
        entry["devices"].add(call.device)
        if call.named_from:
            entry["named_from"].add(call.named_from)
        if call.issued_by:
            entry["issued_by"][call.issued_by] = entry["issued_by"].get(call.issued_by, 0) + 1
        entry["time_us"] += call.duration_ps / 1e6
        if call.in_bytes is not None:
            entry["sized_calls"] += 1
            entry["in_bytes"] += call.in_bytes
            entry["out_bytes"] += call.out_bytes or 0
            entry["size_sources"].add(call.size_source or "profiler")
        if call.dtype:
            entry["dtypes"].add(call.dtype)
        if call.group_size is not None:
            entry["group_sizes"].add(call.group_size)
    rows = []
    for entry in groups.values():
        sized = entry.pop("sized_calls")
        sources = sorted(entry.pop("size_sources"))
        issuers, devices = entry.pop("issued_by"), len(entry.pop("devices"))
        per_step = round(entry["calls"] / devices / step_count, 2) if step_count else None
        rows.append(
            {
                **entry,
                "time_us": round(entry["time_us"], 3),
                "size_source": ", ".join(sources) or None,
                "calls_per_step": per_step,
                "named_from": sorted(entry["named_from"]),
                "issued_by": sorted(issuers, key=lambda name: (-issuers[name], name))[:3],
                "in_bytes": entry["in_bytes"] if sized else None,
                "out_bytes": entry["out_bytes"] if sized else None,
                "dtypes": sorted(entry["dtypes"]),
                "group_sizes": sorted(entry["group_sizes"]),
            }
        )
    return sorted(rows, key=lambda row: (row["source"], -row["time_us"], row["collective"]))


def _kernel(row, roof):
    total_ns = row.total_ps // 1000
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
        "registers_per_thread": row.registers_per_thread,
        "shared_memory_bytes": row.shared_memory_bytes,
        "grid": list(row.grid),
        "block": None if row.block is None else list(row.block),
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
        "compute_roof": row.compute,
        "dtype": row.dtype,
        "precision": kernel_precision(row.name, row.dtype),
        "matrix_dims": dict(zip(("batch", "m", "n", "k"), row.matrix_dims)) if row.matrix_dims else None,
    }


def _launch(stats):
    return {
        "count": stats.paired_count,
        "kernel_count": stats.kernel_count,
        "unpaired_count": stats.kernel_count - stats.paired_count,
        "latency_us": {
            "p50": us(stats.latency_p50_ps),
            "p95": us(stats.latency_p95_ps),
            "max": us(stats.latency_max_ps),
        },
        "latency_histogram": {
            "edges_us": [e if e != float("inf") else None for e in LATENCY_BIN_EDGES_US],
            "counts": list(stats.latency_histogram),
        },
        "tiny_kernel_count": stats.tiny_kernel_count,
        "tiny_kernel_pct": pct(100.0 * stats.tiny_kernel_count / stats.kernel_count) if stats.kernel_count else None,
        "per_step": None if stats.launches_per_step is None else round(stats.launches_per_step, 3),
        "launch_call_time_us": us(stats.launch_call_ps),
        "launch_call_count": stats.launch_call_count,
        "queue_full": {"count": stats.queue_full_count, "time_us": us(stats.queue_full_ps)},
    }


def _transfer(stats):
    return {
        "count": stats.count,
        "bytes": stats.bytes,
        "time_us": us(stats.time_ps),
        "gbps": None if stats.gbps is None else round(stats.gbps, 3),
        "pageable_count": stats.pageable_count,
        "sync_count": stats.sync_count,
        "small_count": stats.small_count,
    }


def _step(step, analysis, index):
    per_step = analysis.per_step
    window = int(per_step.window_ps[index])
    return {
        "name": step.name,
        "step_num": step.step_num,
        "start_ms": ms(step.start_ps),
        "time_ms": ms(step.duration_ps),
        "gpu_busy_pct": pct(100.0 * int(per_step.gpu_busy_ps[index]) / window) if window else None,
        "breakdown_ms": analysis.step_breakdown_ms(index),
    }


def _balance(result):
    return {
        "active_gpu_count": result.active_gpu_count,
        "busy_pct_min": pct(result.busy_pct_min),
        "busy_pct_max": pct(result.busy_pct_max),
        "busy_pct_spread": pct(result.busy_pct_spread),
        "least_busy_device": result.least_busy_device,
        "most_busy_device": result.most_busy_device,
        "kernel_time_us_min": us(result.kernel_ps_min),
        "kernel_time_us_max": us(result.kernel_ps_max),
        "nccl_time_us": us(result.nccl_ps),
        "nccl_share_pct": pct(result.nccl_share_pct),
    }


def _host_ops(model):
    totals = sorted(model.host_activity.op_totals.items(), key=lambda item: (-item[1][1], item[0]))
    return [{"name": name, "count": count, "total_ms": ms(total)} for name, (count, total) in totals[:HOST_OPS_LISTED]]
