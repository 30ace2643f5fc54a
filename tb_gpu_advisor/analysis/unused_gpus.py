"""GPUs this process's profile lists that ran no kernel while others worked: named, with what says the job meant
several GPUs, what says the capture missed their work or other processes own them, and how sure that is."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tb_gpu_advisor.analysis.capture_facts import dropped_events
from tb_gpu_advisor.analysis.confidence import MIN_STEPS
from tb_gpu_advisor.model.trace import ActivityKind
from tb_gpu_advisor.vocabulary import listed

from typing import TYPE_CHECKING
from tb_gpu_advisor.analysis.rounding import ms

if TYPE_CHECKING:
    from tb_gpu_advisor.analysis.framework import Framework
    from tb_gpu_advisor.analysis.steps import StepSet
    from tb_gpu_advisor.model.trace import CollectiveCall
    from tb_gpu_advisor.model.trace import TraceModel


# TensorFlow names the ops of replica k > 0 of a tf.distribute strategy `replica_k/...` (replica 0 has no
# prefix): the largest k + 1 is a lower bound of the replicas this process runs.
_REPLICA = re.compile(r"replica_(\d{1,4})/")
# Device names of a cluster (`/job:worker/replica:0/task:1/device:GPU:0`) rather than one process
# (`/job:localhost/...`): other worker processes, on this host or others, take part in the job.
CLUSTER_DEVICE = re.compile(r"/job:(?!localhost\b)[A-Za-z_]\w*/")


@dataclass(frozen=True)
class GpuWork:
    """What one GPU plane shows: its kernels (collectives included), copies and the complete steps it computed in."""

    ordinal: int
    name: str
    model: str | None
    kernels: int
    kernel_ms: float
    copies: int
    steps_with_kernels: int

    @property
    def label(self):
        return f"GPU {self.ordinal}" + (f" ({self.model})" if self.model else "")


@dataclass(frozen=True)
class UnusedGpus:
    """GPUs without a kernel beside GPUs with kernels; `certainty` is how sure it is that the job itself leaves
    `idle` unused: high or medium when `intent` says the process meant several GPUs and nothing doubts it, low when
    `doubts` name another reading (the capture missed their work, other processes own them, too thin a capture)."""

    idle: tuple  # GpuWork
    working: tuple  # GpuWork
    certainty: str
    intent: tuple  # texts: what says this process meant to use several GPUs
    doubts: tuple  # texts: what says the idle GPUs are not the job's own unused GPUs
    replicas: int | None  # the replicas the host events name (TensorFlow `replica_k`), a lower bound
    complete_steps: int
    missed_by_capture: bool  # the job's replicas outnumber the working GPUs: the capture missed GPU work

    @property
    def claim(self) -> bool:
        """The finding may say the job leaves these GPUs unused."""
        return self.certainty in ("high", "medium")


def unused_gpus(
    model: TraceModel, step_set: StepSet, framework: Framework, calls: tuple[CollectiveCall, ...] = ()
) -> UnusedGpus | None:
    """UnusedGpus of a trace with both idle and working GPU planes and a multi-GPU intent; None otherwise (a
    single GPU at work with nothing that says the job meant more, no GPU worked, or every GPU worked)."""
    steps = windows = list(step_set.steps)  # complete: the capture's cut stubs are left out (analysis.steady_steps)
    complete = len(windows)
    works = [_work(gpu, windows) for gpu in model.gpus]
    working = tuple(work for work in works if work.kernels)
    idle = tuple(work for work in works if not work.kernels)
    if not working or not idle:
        return None
    replicas = replica_count(model)
    groups = sorted({call.group_size for call in calls if call.source == "kernel" and call.group_size})
    intent, doubts = [], []
    if len(working) >= 2:
        intent.append(f"{len(working)} GPUs ran kernels in this process")
    if framework.strategy:
        intent.append(f"a tf.distribute strategy ({framework.strategy})")
    if replicas:
        intent.append(f"the host events name at least {replicas} replicas")
    if groups and groups[-1] <= len(working):
        intent.append(f"collectives over {_and(groups)} devices")
    if not intent:
        return None
    missed = bool(replicas and replicas > len(working))
    if missed:
        doubts.append(
            f"the host ran ops of at least {replicas} replicas (TensorFlow's replica_k names), more than the "
            f"{len(working)} GPUs with kernels: the job uses GPUs whose work the capture missed"
        )
    if groups and groups[-1] > len(working):
        doubts.append(
            f"its collectives span {groups[-1]} devices, {len(working)} of them in this profile: other "
            "processes run the rest, and the idle GPUs may be theirs"
        )
    world = model.environment.get("world_size")
    if isinstance(world, int) and not isinstance(world, bool) and world > 1:
        doubts.append(f"this file is one of {world} ranks: the idle GPUs may be other ranks'")
    cluster = next(
        (name for name in model.host_activity.op_totals if "/job:" in name and CLUSTER_DEVICE.search(name)), None
    )
    if cluster:
        doubts.append(
            f"host events name a cluster's devices ({cluster[:80]}): with a worker process per GPU or "
            "per group of GPUs, each profile lists every GPU of the host but shows only its own GPUs' work"
        )
    if len(working) == 1:
        doubts.append(
            "one GPU at work: a job with a process per GPU (MultiWorkerMirroredStrategy, Horovod, "
            "jax.distributed) lists every GPU of the host in each process's profile but shows only its "
            "own"
        )
    if steps and complete < MIN_STEPS:
        doubts.append(
            f"only {complete} complete step in the capture: too short to tell GPUs the job never uses "
            "from GPUs whose work fell outside it"
        )
    if dropped_events(model):
        doubts.append("the profiler reports dropped events")
    certainty = "low" if doubts else ("high" if steps else "medium")
    return UnusedGpus(
        idle=idle,
        working=working,
        certainty=certainty,
        intent=tuple(intent),
        doubts=tuple(doubts),
        replicas=replicas,
        complete_steps=complete,
        missed_by_capture=missed,
    )


def _work(gpu, windows):
    activity = gpu.activity
    kernels = activity.kind == ActivityKind.KERNEL
    copies = int((activity.kind == ActivityKind.MEMCPY).sum())
    if not kernels.any():
        return GpuWork(gpu.ordinal, gpu.name, gpu.capabilities.model_name, 0, 0.0, copies, 0)
    starts, ends = activity.start_ps[kernels], activity.end_ps[kernels]
    in_steps = sum(1 for step in windows if bool(((starts < step.end_ps) & (ends > step.start_ps)).any()))
    return GpuWork(
        gpu.ordinal,
        gpu.name,
        gpu.capabilities.model_name,
        int(kernels.sum()),
        ms(activity.duration_ps[kernels].sum(), 3),
        copies,
        in_steps,
    )


def replica_count(model: TraceModel) -> int | None:
    """The replicas a tf.distribute strategy runs in this process as its host op names show (largest k of
    `replica_k` + 1), or None when no op names one."""
    text = "\n".join(model.host_activity.op_totals)
    found = [
        int(match.group(1))
        for match in _REPLICA.finditer(text)
        if match.start() == 0 or not text[match.start() - 1].isalnum()
    ]
    return max(found) + 1 if found else None


def _and(values):
    return listed(values, last=" and ")
