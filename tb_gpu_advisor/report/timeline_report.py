"""The Timeline as a JSON-ready dict (served by the plugin's /timeline route, docs/http_api.md)."""

import numpy as np

from tb_gpu_advisor.analysis.rounding import ms
from tb_gpu_advisor.analysis.timeline import DEFAULT_BINS, bin_timeline, timeline_source


def _fractions(values):
    return [round(float(v), 4) for v in values]


def timeline_report(model, bins=DEFAULT_BINS):
    """source_timeline_report of a TraceModel."""
    return source_timeline_report(timeline_source(model), bins)


def source_timeline_report(source, bins=DEFAULT_BINS):
    """{start_ms, end_ms, bins, input_wait, steps_ms, devices[{ordinal, name, start_ms, end_ms, busy_pct, busy, compute}]}.

    Times are ms from the profile's origin, as `steps[].start_ms` of the HostReport; `busy` and `input_wait`
    are fractions 0..1 per equal bin of the row's own [start_ms, end_ms); `compute` is the part of `busy` with work
    other than collectives (`busy - compute`: only collectives ran). `source` is an
    analysis.timeline.TimelineSource: kept beside a cached report, any bin count costs no re-read of the file.
    """
    timeline = bin_timeline(source, bins)
    return {
        "start_ms": ms(timeline.start_ps),
        "end_ms": ms(timeline.end_ps),
        "bins": timeline.bin_count,
        "input_wait": _fractions(timeline.input_wait_fraction),
        "steps_ms": [[ms(start), ms(end)] for start, end in timeline.step_bounds_ps],
        "devices": [_device(device) for device in timeline.devices],
    }


def _device(device):
    edges = device.bin_edges_ps
    span_ps = int(edges[-1] - edges[0]) if len(edges) else 0
    busy_ps = float((device.busy_fraction * np.diff(edges)).sum()) if span_ps else 0.0
    return {
        "ordinal": device.ordinal,
        "name": device.name,
        "start_ms": ms(int(edges[0])) if span_ps else None,
        "end_ms": ms(int(edges[-1])) if span_ps else None,
        "busy_pct": round(100.0 * busy_ps / span_ps, 2) if span_ps else None,
        "busy": _fractions(device.busy_fraction),
        "compute": _fractions(device.compute_fraction),
    }
