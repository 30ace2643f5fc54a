"""TensorFlow compute ops that ran on the CPU in a GPU job: host op events that launched no device work."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.analysis.step_ops import STEP_OP_MAX_CALLS_PER_STEP
from tb_gpu_advisor.model.details import byte_total
from tb_gpu_advisor.model.trace import ActivityKind, CopyDirection


# An op is CPU-placed when at least this share of its runs launched nothing (a GPU op launches in every run;
# other threads' launches may fall inside a long CPU op's run by chance).
UNLAUNCHED_MIN_SHARE = 0.5
# Copies this close to a run (or within the run's own length, when shorter) are its inputs and result moving.
ADJACENT_COPY_PS = 200 * 1_000_000


@dataclass(frozen=True)
class CpuOp:
    """One compute op (`name:Type`) whose runs launched no GPU work, and the host<->device copies beside them."""

    name: str
    op_type: str
    runs: int
    unlaunched_runs: int
    total_ps: int
    d2h_before: int  # device-to-host copies ending just before a run (its inputs read back)
    h2d_after: int  # host-to-device copies starting just after a run (its result sent out)
    copy_bytes: int

    @property
    def copies(self) -> int:
        return self.d2h_before + self.h2d_after


def _copies(gpus, direction):
    """(start_ps, end_ps, bytes) arrays of every GPU's copies in `direction`, by start."""
    starts, ends, sizes = [], [], []
    for gpu in gpus:
        activity = gpu.activity
        mask = (activity.kind == ActivityKind.MEMCPY) & (activity.copy_direction == int(direction))
        starts.append(activity.start_ps[mask])
        ends.append(activity.end_ps[mask])
        size_of = np.array([copy.size_bytes for copy in activity.copies], dtype=np.int64)
        sizes.append(size_of[activity.copy_id[mask]])
    start, end, size = (np.concatenate(a) if a else np.zeros(0, np.int64) for a in (starts, ends, sizes))
    order = np.argsort(start, kind="stable")
    return start[order], end[order], size[order]


def _copies_near(copies, lo, hi, by_end):
    """(count, bytes) of copies whose start (or end, `by_end`) lies in any [lo, hi)."""
    start, end, size = copies
    key = end if by_end else start
    order = np.argsort(key, kind="stable")
    key, size = key[order], size[order]
    left, right = np.searchsorted(key, lo, "left"), np.searchsorted(key, hi, "left")
    nonempty = left < right
    # How many of the ranges [left, right) hold each copy: +1 where a range opens, -1 where it closes.
    depth = np.cumsum(
        np.bincount(left[nonempty], minlength=len(key) + 1) - np.bincount(right[nonempty], minlength=len(key) + 1)
    )[: len(key)]
    chosen = depth > 0
    return int(chosen.sum()), byte_total(size[chosen])


def cpu_placed_ops(model, step_count):
    """CpuOp per compute op of the step (at most STEP_OP_MAX_CALLS_PER_STEP runs per step: tf.data map functions
    run on the CPU by design) that launched nothing in most of its runs, in a trace with GPU activity; most time
    first."""
    if not any(len(gpu.activity) for gpu in model.gpus):
        return ()
    host = model.host_activity
    launches = d2h = h2d = None  # built at the first cpu_op tag that needs them: most traces have none
    found = []
    for tag, spans in host.tagged.items():
        if not tag.startswith("cpu_op:") or not len(spans):
            continue
        name = tag[len("cpu_op:") :]
        count, total = host.op_totals.get(name, (len(spans), spans.total_ps))
        if step_count and count / step_count > STEP_OP_MAX_CALLS_PER_STEP:
            continue
        if launches is None:
            launches = np.sort(host.launch_start_ps)
        launched = np.searchsorted(launches, spans.end_ps, "left") > np.searchsorted(launches, spans.start_ps, "left")
        unlaunched = int((~launched).sum())
        if unlaunched < UNLAUNCHED_MIN_SHARE * len(spans):
            continue
        if d2h is None:
            d2h, h2d = _copies(model.gpus, CopyDirection.D2H), _copies(model.gpus, CopyDirection.H2D)
        length = np.minimum(spans.end_ps - spans.start_ps, ADJACENT_COPY_PS)
        before = _copies_near(d2h, spans.start_ps - length, spans.start_ps + 1, by_end=True)
        after = _copies_near(h2d, spans.end_ps, spans.end_ps + length, by_end=False)
        found.append(
            CpuOp(
                name=name,
                op_type=name.rpartition(":")[2],
                runs=len(spans),
                unlaunched_runs=unlaunched,
                total_ps=int(total),
                d2h_before=before[0],
                h2d_after=after[0],
                copy_bytes=before[1] + after[1],
            )
        )
    found.sort(key=lambda op: (-op.total_ps, op.name))
    return tuple(found)
