"""Runs of back-to-back element-wise kernels on one stream: the chains a compiler (XLA, torch.compile) would fuse."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.model.trace import ActivityKind

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.model.trace import DeviceActivity


def elementwise_runs(activity: DeviceActivity, mask: np.ndarray) -> list[tuple[int, int]]:
    """[(kernels, total ps)] of the runs of consecutive `mask` kernels on each stream of `activity` (a DeviceActivity;
    `mask` a boolean array over its events): a kernel not in `mask` on the same stream ends a run. Pure."""
    kernels = np.flatnonzero(activity.kind == ActivityKind.KERNEL)
    if not len(kernels):
        return []
    order = np.lexsort((activity.start_ps[kernels], activity.stream_id[kernels]))
    events = kernels[order]
    chosen = mask[events]
    streams = activity.stream_id[events]
    durations = activity.duration_ps[events]
    runs = []
    count = total = 0
    for index in range(len(events)):
        if chosen[index] and count and streams[index] == streams[index - 1]:
            count, total = count + 1, total + int(durations[index])
            continue
        if count:
            runs.append((count, total))
        count, total = (1, int(durations[index])) if chosen[index] else (0, 0)
    if count:
        runs.append((count, total))
    return runs
