"""Why each GPU stream sits idle between its events, by Holistic Trace Analysis' definitions.

On one stream, the gap before an event is `host_wait` when the host launched that event only after the
previous one had finished (the host was late), `kernel_wait` when it was launched in time and the gap is
shorter than `kernel_wait_ps` (launch latency between back-to-back work), and `other` otherwise.
"""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.analysis.launch import pair_launches

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.model.trace import DeviceActivity
    from tb_gpu_advisor.model.trace import HostActivity


IDLE_CAUSES = ("host_wait", "kernel_wait", "other")
KERNEL_WAIT_US = 30.0  # HTA's default consecutive_kernel_delay


def stream_idle(
    activity: DeviceActivity,
    host: HostActivity,
    keep: np.ndarray | None = None,
    kernel_wait_ps: int = int(KERNEL_WAIT_US * 1e6),
) -> dict[int, dict[str, int]]:
    """{stream: {cause: idle ps}} over the events `keep` selects (all by default), streams in id order."""
    keep = np.ones(len(activity), dtype=bool) if keep is None else keep
    launch = pair_launches(host, activity)
    launch_start = np.full(len(activity), -1, dtype=np.int64)  # -1: no host launch found
    paired = launch >= 0
    launch_start[paired] = host.launch_start_ps[launch[paired]]
    result = {}
    for stream in np.unique(activity.stream_id[keep]):
        mine = np.flatnonzero(keep & (activity.stream_id == stream))
        mine = mine[np.argsort(activity.start_ps[mine], kind="stable")]
        start, end = activity.start_ps[mine], activity.end_ps[mine]
        gap = start[1:] - end[:-1]
        launched = launch_start[mine][1:]
        host_wait = (launched >= 0) & (launched > end[:-1])
        kernel_wait = ~host_wait & (gap < kernel_wait_ps)
        result[int(stream)] = {
            "host_wait": int(gap[host_wait].sum()),
            "kernel_wait": int(gap[kernel_wait].sum()),
            "other": int(gap[~host_wait & ~kernel_wait].sum()),
        }
    return result
