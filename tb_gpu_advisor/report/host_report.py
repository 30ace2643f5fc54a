"""Renders a host's analyses and diagnosis as the HostReport dict (schema_version 1, docs/report.md)."""

from __future__ import annotations

from tb_gpu_advisor.analysis.launch import LATENCY_BIN_EDGES_US
from tb_gpu_advisor.analysis.rounding import ms, pct, us
from tb_gpu_advisor.report.idle_report import idle_attribution_dict
from tb_gpu_advisor.report.host_notes import (
    capture_notes,
    clock_notes,
    graph_notes,
    implausible_notes,
    trace_notes,
    roofline_notes,
)
from tb_gpu_advisor.report.device_dicts import (
    device_dict,
    gpu_memory_dict,
    kernel_dict,
    stream_idle_dict,
    work_by_type_dict,
)
from tb_gpu_advisor.report.collective_dicts import collective_bandwidth_dict, collectives_list
from tb_gpu_advisor.report.configuration_dict import host_cpu_dict, configuration_dict


HOST_OPS_LISTED = 25


def render_host_report(model, analysis, unprofiled=None):
    """The HostReport dict of a model and its HostAnalysis, without findings (with_diagnosis adds them);
    `unprofiled`: the step without the profiler's own host time that the findings use (Diagnosis.unprofiled)."""
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
        "notes": trace_notes(model, step_set, analysis.usages)
        + implausible_notes(analysis.kernels)
        + roofline_notes(analysis)
        + list(confidence.notes)
        + graph_notes(analysis)
        + capture_notes(model, analysis, unprofiled)
        + clock_notes(model, analysis),
        "devices": [
            {**device_dict(gpu, usage, peaks), **work_by_type_dict(times), "stream_idle_us": stream_idle_dict(idle)}
            for gpu, usage, peaks, times, idle in zip(
                model.gpus, analysis.usages, analysis.device_peaks, analysis.work_by_type, analysis.stream_idle
            )
        ],
        "kernels": [kernel_dict(row, roof) for row, roof in zip(analysis.kernels, analysis.roofline)],
        "launch": _launch(analysis.launch),
        "transfers": {key: _transfer(stats) for key, stats in analysis.transfers.items()},
        "steps": [_step(step, analysis, index) for index, step in enumerate(step_set.timed_steps)],
        "balance": _balance(analysis.balance),
        "host_ops": _host_ops(model),
        "collectives": collectives_list(analysis.collectives, len(step_set.steps)),
        "environment": dict(sorted(model.environment.items())),
        "host_cpu": host_cpu_dict(analysis.cpu_load),
        "configuration": configuration_dict(analysis.configuration),
        "gpu_memory": [gpu_memory_dict(row) for row in analysis.gpu_memory],
        "collective_bandwidth": collective_bandwidth_dict(analysis.link, analysis.collective_bandwidth),
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
    report["summary"]["confidence"] = _with_inferred_cause(report["summary"]["confidence"], diagnosis.inferred)
    report["notes"].extend(diagnosis.errors)
    return report


def _with_inferred_cause(confidence: dict, reason: str | None) -> dict:
    """The summary's confidence, at most medium with `reason` first where the first finding's cause is inferred
    from a wait the trace does not record (the Diagnosis's `inferred`)."""
    if reason is None:
        return confidence
    level = confidence["level"] if confidence["level"] == "low" else "medium"
    return {**confidence, "level": level, "reasons": [reason, *confidence["reasons"]]}


def run_vendor(devices: list[dict]) -> str | None:
    """ "NVIDIA" or "AMD" when every GPU with kernels of a report's `devices` is that vendor's, else None."""
    vendors = {(d.get("vendor") or "").upper() for d in devices if d.get("kernel_count")}
    return next(iter(vendors)) if len(vendors) == 1 and vendors <= {"NVIDIA", "AMD"} else None


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
        "paired_call_count": stats.paired_call_count,
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
