"""Runs Holistic Trace Analysis on one Kineto trace and returns its figures for one rank, as plain numbers."""

import copy
import functools
import logging
import os
import shutil
import tempfile


def _memo(analyze):
    """`analyze(trace_path, rank)` run once per process for each trace, rank and HTA_DISABLE_NS_ROUNDING (HTA reads it
    when it parses): several test modules compare against the same trace, and HTA takes seconds to parse one. Each
    caller gets its own copy of the plain result."""
    cached = functools.cache(lambda path, rank, rounding: analyze(path, rank))

    @functools.wraps(analyze)
    def figures(trace_path, rank):
        return copy.deepcopy(cached(str(trace_path), rank, os.environ.get("HTA_DISABLE_NS_ROUNDING")))

    return figures


@_memo
def hta_figures(trace_path, rank):
    """{temporal: {idle, computation, non_computation} %, kernel_types: {type: %}, overlap_pct}."""
    from hta.trace_analysis import TraceAnalysis

    logging.getLogger("hta").setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory() as folder:
        shutil.copy(trace_path, os.path.join(folder, os.path.basename(trace_path)))
        analysis = TraceAnalysis(trace_dir=folder)
        temporal = analysis.get_temporal_breakdown(visualize=False).set_index("rank").loc[rank]
        overlap = analysis.get_comm_comp_overlap(visualize=False).set_index("rank").loc[rank]
        kernel_types = analysis.get_gpu_kernel_breakdown(visualize=False)[0]
    return {
        "temporal": {
            "idle": float(temporal["idle_time_pctg"]),
            "computation": float(temporal["compute_time_pctg"]),
            "non_computation": float(temporal["non_compute_time_pctg"]),
        },
        "kernel_types": {row["kernel_type"].lower(): float(row["percentage"]) for _, row in kernel_types.iterrows()},
        "overlap_pct": float(overlap["comp_comm_overlap_pctg"]),
    }


@_memo
def hta_idle_breakdown(trace_path, rank):
    """{stream: {host_wait|kernel_wait|other: idle µs}} of HTA's get_idle_time_breakdown for one rank."""
    from hta.trace_analysis import TraceAnalysis

    logging.getLogger("hta").setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory() as folder:
        shutil.copy(trace_path, os.path.join(folder, os.path.basename(trace_path)))
        frame = TraceAnalysis(trace_dir=folder).get_idle_time_breakdown(ranks=[rank], visualize=False)[0]
    result = {}
    for _, row in frame.iterrows():
        result.setdefault(int(row["stream"]), {})[row["idle_category"]] = float(row["idle_time"])
    return result
