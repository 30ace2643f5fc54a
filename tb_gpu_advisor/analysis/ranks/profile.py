"""What the run-level analysis needs of one rank, cut from its TraceModel and HostAnalysis: small and picklable,
so a pool worker returns it and the rank's model is never held beside the others."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor.analysis.breakdown import COMPUTE_CATEGORIES
from tb_gpu_advisor.analysis.idle_attribution import IDLE_CAUSES
from tb_gpu_advisor.analysis.kernel_names import is_nccl
from tb_gpu_advisor.model import intervals


# Work kinds of the per-rank evidence: the ops or kernels with the most time, at most this many.
MAX_WORK_ROWS = 40
# CPU ops counted as the rank's compute on a CPU-only run (the ATen operators the model runs).
_CPU_OP_PREFIX = "aten::"
# The host spans in which a step waits for its batch: PyTorch's DataLoader iteration (Kineto) and TensorFlow's
# IteratorGetNext (XPlane, any case), the names the readers count as input waits.
_DATALOADER_PREFIX = "enumerate(DataLoader)"


@dataclass(frozen=True)
class RankCall:
    """One collective call of a rank, times in ps from the rank's model origin."""

    collective: str
    start_ps: int
    end_ps: int
    bytes: int | None
    group_size: int | None


@dataclass(frozen=True)
class RankStep:
    """One step of a rank: its window, what its time went to (ps), and its collective calls."""

    step_num: int | None
    start_ps: int
    end_ps: int
    compute_ps: int  # GPU kernels other than collectives; on a CPU-only run, the step thread's ops
    input_ps: int  # the step thread waiting for or building its input
    host_ps: int  # other host time that held the device (launch, host): 0 on a CPU-only run
    idle_ps: dict  # the device's idle time by cause (idle_attribution.IDLE_CAUSES), or the CPU step thread's
    calls: tuple  # RankCall, by start


@dataclass(frozen=True)
class WorkRow:
    """One op (CPU run, its self time where the trace nests ops), kernel (GPU run), input span or host op name: its
    calls and time over the rank's trace."""

    name: str
    count: int
    total_ps: int


@dataclass(frozen=True)
class RankProfile:
    """One rank's steps and work, with what the trace says of its place in the job."""

    host: str
    path: str
    rank: int | None
    world_size: int | None
    backend: str | None
    device: str  # "cpu" or the GPU model
    origin_ps: int | None  # the absolute time of the rank's time 0 (model.time_origin_ps)
    steps: tuple  # RankStep, in time order
    work: tuple  # WorkRow, most time first: its compute (kernels, or ATen ops' self time on a CPU run)
    link_kind: str | None = None  # collective_bandwidth.Link of the GPUs, when the trace shows one
    link_gbps: float | None = None
    link_known: bool = False
    shapes_recorded: bool = False
    machine: str | None = None  # the machine the trace names (Kineto's host_name), None when it names none
    input_work: tuple = ()  # WorkRow of its input spans (the DataLoader's or tf.data iterator's)
    host_work: tuple = ()  # WorkRow of its host ops by self time (a GPU run: the host work beside the kernels)


def rank_profile(model, analysis):
    """The RankProfile of one rank's TraceModel and HostAnalysis."""
    env = model.environment
    rank = env.get("rank") if isinstance(env.get("rank"), int) else None
    world = env.get("world_size") if isinstance(env.get("world_size"), int) else None
    active = [gpu for gpu in model.gpus if gpu.ordinal in set(analysis.active_ordinals)]
    on_gpu = bool(active)
    steps = analysis.step_set.timed_steps
    starts = np.array([s.start_ps for s in steps], dtype=np.int64)
    ends = np.array([s.end_ps for s in steps], dtype=np.int64)
    calls = _calls(model, analysis, active)
    if on_gpu:
        rows = _gpu_steps(analysis, active, starts, ends)
    else:
        rows = _cpu_steps(model, starts, ends)
    found = []
    for index, step in enumerate(steps):
        compute, inputs, host, idle = rows[index]
        inside = tuple(call for call in calls if step.start_ps <= call.start_ps < step.end_ps)
        found.append(
            RankStep(
                step_num=step.step_num,
                start_ps=int(step.start_ps),
                end_ps=int(step.end_ps),
                compute_ps=compute,
                input_ps=inputs,
                host_ps=host,
                idle_ps=idle,
                calls=inside,
            )
        )
    link = analysis.link
    return RankProfile(
        host=model.host,
        path=model.path,
        rank=rank,
        world_size=world,
        backend=env.get("distributed_backend") if isinstance(env.get("distributed_backend"), str) else None,
        device=(active[0].capabilities.model_name or active[0].name) if on_gpu else "cpu",
        origin_ps=model.time_origin_ps,
        steps=tuple(found),
        work=_work(model, analysis, on_gpu),
        input_work=_input_work(model),
        host_work=_host_work(model) if on_gpu else (),
        link_kind=link.kind if link is not None else None,
        link_gbps=link.gbps if link is not None else None,
        link_known=bool(link is not None and link.known),
        shapes_recorded="record_shapes" in model.profiler_options,
        machine=model.machine,
    )


def _calls(model, analysis, active):
    """RankCalls of the rank: its busiest GPU's collective kernels, or its host collectives on a CPU-only run."""
    if active:
        ordinals = {gpu.ordinal for gpu in active}
        kernel = [c for c in analysis.collectives if c.source == "kernel" and c.device in ordinals]
        by_device = {}
        for call in kernel:
            by_device[call.device] = by_device.get(call.device, 0) + call.duration_ps
        chosen = [c for c in kernel if by_device and c.device == max(by_device, key=by_device.get)]
    else:
        chosen = [c for c in analysis.collectives if c.source == "host"]
    return tuple(
        RankCall(
            collective=c.collective,
            start_ps=int(c.start_ps),
            end_ps=int(c.start_ps + c.duration_ps),
            bytes=c.out_bytes
            if c.collective in ("allgather", "alltoall") and c.out_bytes
            else (c.in_bytes if c.in_bytes is not None else c.out_bytes),
            group_size=c.group_size,
        )
        for c in sorted(chosen, key=lambda c: c.start_ps)
    )


def _gpu_steps(analysis, active, starts, ends):
    """(compute, input, host, idle by cause) per step of a GPU rank: the breakdown's categories, and the idle
    attribution of its active GPUs (summed over them)."""
    per_step = analysis.per_step.category_ps
    compute = sum(per_step[name] for name in COMPUTE_CATEGORIES)
    inputs = per_step["input_wait"] + per_step["input_prep"]
    host = per_step["launch"] + per_step["host"]
    idle = {cause: np.zeros(len(starts), dtype=np.int64) for cause in IDLE_CAUSES}
    ordinals = {gpu.ordinal for gpu in active}
    for gpu in analysis.idle.gpus if analysis.idle is not None else ():
        if gpu.ordinal in ordinals and len(starts):
            for cause, values in gpu.cause_ps(starts, ends).items():
                idle[cause] = idle[cause] + values
    return [
        (int(compute[i]), int(inputs[i]), int(host[i]), {c: int(v[i]) for c, v in idle.items() if v[i]})
        for i in range(len(starts))
    ]


def _cpu_steps(model, starts, ends):
    """(compute, input, 0, idle by cause) per step of a CPU-only rank: the step thread's busy time outside its input
    waits is its compute; the rest of the step it waited untraced (for a collective, most often)."""
    host = model.host_activity
    busy = host.step_thread_busy if host.step_thread_busy is not None else host.busy
    compute_spans = intervals.subtract(busy, host.input_waits)
    compute = intervals.covered_ps(compute_spans, starts, ends)
    inputs = intervals.covered_ps(host.input_waits, starts, ends)
    rows = []
    for i in range(len(starts)):
        untraced = int(ends[i] - starts[i] - compute[i] - inputs[i])
        idle = {"input": int(inputs[i])} if inputs[i] else {}
        if untraced > 0:
            idle["host_untraced"] = untraced
        rows.append((int(compute[i]), int(inputs[i]), 0, idle))
    return rows


def _work(model, analysis, on_gpu):
    """WorkRows: the non-collective kernels of a GPU rank, or the ATen ops of a CPU-only rank."""
    if on_gpu:
        rows = [WorkRow(row.name, row.occurrences, row.total_ps) for row in analysis.kernels if not is_nccl(row.name)]
    else:
        own = model.host_activity.op_self_ps
        rows = [
            WorkRow(name, int(count), int(own.get(name, total) if own else total))
            for name, (count, total) in model.host_activity.op_totals.items()
            if name.startswith(_CPU_OP_PREFIX)
        ]
    return _top(rows)


def _top(rows):
    rows = sorted(rows, key=lambda row: (-row.total_ps, row.name))
    return tuple(rows[:MAX_WORK_ROWS])


def _input_work(model):
    """WorkRows of the spans in which the step waits for its input, by name."""
    totals = model.host_activity.op_totals
    return _top(
        WorkRow(name, int(count), int(total))
        for name, (count, total) in totals.items()
        if name.startswith(_DATALOADER_PREFIX) or name[:15].lower() == "iteratorgetnext"
    )


def _host_work(model):
    """WorkRows of a GPU rank's host ops by self time (Kineto), its host events' totals elsewhere."""
    own = model.host_activity.op_self_ps
    totals = model.host_activity.op_totals
    if own:
        return _top(WorkRow(name, int(totals[name][0]), int(ps)) for name, ps in own.items() if name in totals)
    return _top(WorkRow(name, int(count), int(total)) for name, (count, total) in totals.items())
