"""A device trace that stopped before the host trace did: after the last GPU event the host went on making calls
that put work on a GPU (kernel launches, copies), and none of that work is in the trace. CUPTI stops collecting
when its activity buffers reach their limit (Kineto logs "CUPTI stopped early"), and a sampled capture keeps
only part of the device's events; either way the rest of the profile would read as GPU idle time.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.analysis.launch import pair_launches


# Host calls with a correlation id after the last GPU event: a finished capture has a few (the final syncs: at
# most 15 in the committed traces); a device trace that stopped has the rest of the run's.
STOPPED_MIN_CALLS = 100
STOPPED_MIN_SHARE = 0.1  # of the calls that did reach the GPU, and of the profile's time


@dataclass(frozen=True)
class DeviceTraceEnd:
    """The host calls made after the last GPU event whose work is not in the trace, and the time they span."""

    calls: int
    after_ps: int  # from the last GPU event's end to the end of the profile


def device_trace_stopped(model):
    """DeviceTraceEnd when the device trace stopped early (module docstring), else None."""
    host = model.host_activity
    active = [gpu.activity for gpu in model.gpus if len(gpu.activity)]
    if not active or not len(host.launch_correlation_id):
        return None
    device_end = max(int(activity.end_ps.max()) for activity in active)
    paired = np.zeros(len(host.launch_correlation_id), dtype=bool)
    for activity in active:
        index = pair_launches(host, activity)
        paired[index[index >= 0]] = True
    later = int((~paired & (host.launch_start_ps > device_end)).sum())
    start, end = model.profile_span_ps
    after = end - device_end
    if later < max(STOPPED_MIN_CALLS, STOPPED_MIN_SHARE * int(paired.sum())) or after < STOPPED_MIN_SHARE * (
        end - start
    ):
        return None
    return DeviceTraceEnd(calls=later, after_ps=int(after))
