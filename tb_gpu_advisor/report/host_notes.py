"""The notes of a HostReport: what the trace cannot tell, implausible costs, roofline basis, graphs and capture options."""

from __future__ import annotations

from tb_gpu_advisor.analysis.capture_overhead import overhead_of
from tb_gpu_advisor.analysis.clock_drift import clock_drift

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.analysis.host_analysis import HostAnalysis
    from tb_gpu_advisor.analysis.kernels import KernelRow
    from tb_gpu_advisor.analysis.steps import StepSet
    from tb_gpu_advisor.model.trace import TraceModel


RANGE_PROFILER_NOTE = (
    "A GPU profile without kernel times: a CUPTI range-profiler capture ({ranges:,} "
    "cuda_profiler_range events: hardware counters per kernel or range). That mode replays each "
    "kernel to read its counters and records no kernel or copy times, so how busy the GPU was, "
    "why it idled and what overlaps cannot be measured from it."
)


def capture_notes(model, analysis, unprofiled=None):
    """What the profiler's recording options cost the host (analysis.capture_overhead), when any is on;
    `unprofiled`: the step the findings' estimates are set against (capture_overhead.UnprofiledStep), if any."""
    note = overhead_of(model, analysis, unprofiled).note()
    return [note] if note else []


def clock_notes(model, analysis):
    """The same kernels slowing step after step (analysis.clock_drift: a clock lowered during the capture)."""
    drift = clock_drift(tuple(model.gpus), [(s.start_ps, s.end_ps) for s in analysis.step_set.timed_steps])
    return [drift.note()] if drift is not None else []


def graph_notes(analysis):
    """What graph replays (CUDA graphs, XLA command buffers) hide from the launch analysis, when they hide it."""
    note = analysis.compilation.graph_note(analysis.framework.name) if analysis.compilation is not None else None
    return [note] if note else []


def trace_notes(model: TraceModel, step_set: StepSet, usages: tuple) -> list[str]:
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


def implausible_notes(table: tuple[KernelRow, ...]) -> list:
    """One note per kernel row carrying a launch value no GPU allows (shown as unknown, never advice)."""
    notes = []
    for row in table:
        for item in row.implausible:
            notes.append(
                f"Kernel {row.name}: {item.field.replace('_', ' ')} {item.value} is {item.limit}; "
                "the trace's value is corrupt, so it is shown as unknown and no advice uses it."
            )
    return notes


def roofline_notes(analysis: HostAnalysis) -> list:
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
