"""Names the PyTorch op behind each launch: the innermost `cpu_op` on the launching thread that encloses it."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from tb_gpu_advisor.model.trace import HostActivity


def innermost_enclosing(op_start: np.ndarray, op_end: np.ndarray, times: np.ndarray) -> np.ndarray:
    """For each time (sorted), the index of the innermost op interval containing it, or -1.

    Ops on one thread nest, as the profiler records call scopes; they need not be sorted.
    """
    order = np.lexsort((-op_end, op_start))
    starts, ends = op_start[order].tolist(), op_end[order].tolist()
    found = np.full(len(times), -1, dtype=np.int64)
    stack: list[int] = []
    i, count = 0, len(starts)
    for k, t in enumerate(times.tolist()):
        while i < count and starts[i] <= t:
            while stack and ends[stack[-1]] <= starts[i]:
                stack.pop()
            stack.append(i)
            i += 1
        while stack and ends[stack[-1]] < t:
            stack.pop()
        if stack:
            found[k] = order[stack[-1]]
    return found


def launch_ops(
    host: HostActivity, launch_thread: np.ndarray, ops: Mapping[int, tuple[np.ndarray, ...]]
) -> tuple[np.ndarray, np.ndarray]:
    """(correlation ids sorted, op name index per id) for the launches that ran inside a `cpu_op`.

    `launch_thread` is the launching thread of each entry of host.launch_*; `ops` maps a thread to its
    (starts, ends, name indexes) of cpu_op events.
    """
    corr_out, name_out = [], []
    for thread, (starts, ends, names) in ops.items():
        mine = np.flatnonzero(launch_thread == thread)
        if not len(mine) or not len(starts):
            continue
        times = host.launch_start_ps[mine]
        order = np.argsort(times, kind="stable")
        inside = innermost_enclosing(starts, ends, times[order])
        hit = inside >= 0
        corr_out.append(host.launch_correlation_id[mine[order][hit]])
        name_out.append(names[inside[hit]])
    if not corr_out:
        return np.zeros(0, np.int64), np.zeros(0, np.int32)
    corr, name = np.concatenate(corr_out), np.concatenate(name_out)
    order = np.argsort(corr, kind="stable")
    return corr[order], name[order]
