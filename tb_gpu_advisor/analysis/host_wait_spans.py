"""When a host thread was blocked on the device: the intervals every analysis reads as host waits, never as host
work (the breakdown's `host_wait`, idle attribution's `host_wait`).

The waits are the calls model.host_waits names (synchronize calls, blocking copies by name, JAX, PjRt and
TensorFlow waits for a result; Kineto's `cuda_sync` events), copy calls that returned only after their copy had
ended (a `cudaMemcpyAsync` into pageable memory blocks), and launch calls blocked on a full launch queue
(analysis.launch_queue).
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.analysis.launch import pair_launches
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.trace import ActivityKind

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.analysis.launch_queue import QueueFull
    from tb_gpu_advisor.model.trace import Intervals
    from tb_gpu_advisor.model.trace import TraceModel


def host_wait_spans(model: TraceModel, queue_full: QueueFull | None = None) -> Intervals:
    """Intervals in which a host thread was blocked on the device (module docstring); `queue_full`: the
    analysis.launch_queue.QueueFull of the model, or None to leave queue-full launches out."""
    host = model.host_activity
    parts = [host.tagged.get("sync", intervals.EMPTY), host.tagged.get("device_wait", intervals.EMPTY)]
    if queue_full is not None:
        parts.append(queue_full.spans)
    for gpu in model.gpus:
        activity = gpu.activity
        copies = np.flatnonzero(np.isin(activity.kind, (ActivityKind.MEMCPY, ActivityKind.MEMSET)))
        if not len(copies):
            continue
        launch = pair_launches(host, activity)[copies]
        paired = launch >= 0
        copies, launch = copies[paired], launch[paired]
        start = host.launch_start_ps[launch]
        end = start + host.launch_duration_ps[launch]
        blocking = end >= activity.end_ps[copies]
        parts.append(intervals.union(start[blocking], end[blocking]))
    return intervals.union_all(*parts)
