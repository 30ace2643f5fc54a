"""Communication findings: exposed all-reduce and unevenly busy GPUs."""

from __future__ import annotations

import numpy as np

from tb_gpu_advisor.analysis.breakdown import COMPUTE_CATEGORIES
from tb_gpu_advisor.analysis.collective_bandwidth import LARGE_COLLECTIVE_BYTES
from tb_gpu_advisor.analysis.collective_calls import collective_kinds, exposed_communication, kernel_calls_in_windows
from tb_gpu_advisor.analysis.kernel_names import collective_dtype, is_nccl, is_runtime_copy
from tb_gpu_advisor.analysis.rounding import pct
from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Entry, Idiom, register
from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import Evidence, Finding, estimated, grade, ladder, limit
from tb_gpu_advisor.findings.thresholds import (
    BACKWARD_SHARE_OF_COMPUTE,
    COLLECTIVE_LOW_BUSBW_FRACTION,
    COLLECTIVE_MIN_LARGE_CALLS,
    COLLECTIVE_REACHABLE_FRACTION,
    COLLECTIVES_HIGH_PCT,
    COLLECTIVES_MEDIUM_PCT,
    IMBALANCE_SPREAD_PCT,
    MODELED_HIGH_PCT,
    MODELED_LOW_PCT,
    MODELED_MEDIUM_PCT,
    STRAGGLER_SLOWDOWN_MIN,
)
from tb_gpu_advisor.whatif.communication import overlap_collectives, straggler
from tb_gpu_advisor.vocabulary import TIMES

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.analysis.collective_calls import CollectiveKind
    from tb_gpu_advisor.analysis.collective_calls import ExposedCommunication
    from tb_gpu_advisor.findings.context import Context


# Collective time that is mostly send/recv or all-to-all (pipeline or model parallelism, sharded embeddings)
# is not gradient all-reduce: bucket and gradient-compression advice does not apply to it.
NOT_ALLREDUCE_IDIOM = Idiom(
    fix_summary="Overlap the send/recv or all-to-all exchanges with compute; capture all ranks to find waits.",
    fix="""\
The collectives that run with no compute beside them are point-to-point or all-to-all exchanges (pipeline
or model parallelism, sharded embedding tables), not a data-parallel gradient all-reduce, so all-reduce
settings (DDP buckets, gradient compression, packing) do not change them. What helps:

- overlap the exchange of the next batch with this batch's compute: TorchRec's TrainPipelineSparseDist
  overlaps the embedding all-to-all with the dense forward/backward; in JAX/XLA, the latency-hiding
  scheduler (XLA_FLAGS=--xla_gpu_enable_latency_hiding_scheduler=true) overlaps collective-permutes;
- for pipeline parallelism, more micro-batches per step (or an interleaved schedule such as
  torch.distributed.pipelining.ScheduleInterleaved1F1B) shrink the idle bubble;
- profile every rank for the same steps: a rank waiting in send/recv is often waiting for a slower peer.""",
    docs=(L.NCCL_GUIDE,),
)

ENTRIES = register(
    "communication",
    {
        "communication.collective_below_link": Entry(
            category="communication",
            title="Collectives move data far below the GPUs' link bandwidth",
            fix_summary="Check NCCL's transport (NCCL_DEBUG=INFO) and nccl-tests; then NCCL_ALGO/NCCL_PROTO, larger "
            "packs.",
            fix="""\
Even the fastest large collective reaches a small share of the bus bandwidth the GPUs' link gives (bus
bandwidth as NCCL-tests defines it: algorithm bandwidth x 2(n-1)/n for all-reduce). Look at what NCCL did:

    NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH,TUNING python train.py
    # "via P2P/IPC" or "NVLS" = NVLink; "via SHM" or "NET/Socket" = through host memory or TCP: NVLink or
    # InfiniBand unused (NCCL_P2P_DISABLE / NCCL_IB_DISABLE set, containers without IPC, wrong NCCL_SOCKET_IFNAME)
    nvidia-smi topo -m                      # NV# between the GPUs = NVLink; PHB/SYS = PCIe through the CPU
    all_reduce_perf -b 8M -e 1G -f 2 -g 8   # nccl-tests: the bus bandwidth this machine can reach

Then, if the transport is right: NCCL_ALGO=Ring (large messages) or Tree (many nodes), NCCL_PROTO=Simple
for large buckets, and fewer, larger all-reduces:

    options = tf.distribute.experimental.CommunicationOptions(
        implementation=tf.distribute.experimental.CommunicationImplementation.NCCL,
        bytes_per_pack=64 * 1024 * 1024)""",
            docs=(L.NCCL_ENV, L.NCCL_TESTS_PERFORMANCE, L.TF_DISTRIBUTED),
            jax=Idiom(
                fix_summary="Check NCCL's transport (NCCL_DEBUG=INFO) and nccl-tests; then NCCL_ALGO/NCCL_PROTO, "
                "combine size.",
                fix="""\
Even the fastest large collective reaches a small share of the bus bandwidth the GPUs' link gives (bus
bandwidth as NCCL-tests defines it: algorithm bandwidth x 2(n-1)/n for all-reduce). Look at what NCCL did:

    NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH,TUNING python train.py
    # "via P2P/IPC" or "NVLS" = NVLink; "via SHM" or "NET/Socket" = NVLink or InfiniBand unused
    nvidia-smi topo -m
    all_reduce_perf -b 8M -e 1G -f 2 -g 8   # nccl-tests: the bus bandwidth this machine can reach

Then NCCL_ALGO=Ring / NCCL_PROTO=Simple for large messages, and larger combined collectives:

    XLA_FLAGS="--xla_gpu_all_reduce_combine_threshold_bytes=134217728" python train.py""",
                docs=(L.NCCL_ENV, L.NCCL_TESTS_PERFORMANCE, L.JAX_GPU_TIPS),
            ),
            pytorch=Idiom(
                fix_summary="Check NCCL's transport (NCCL_DEBUG=INFO) and nccl-tests; then NCCL_ALGO/NCCL_PROTO, "
                "bucket_cap_mb.",
                fix="""\
Even the fastest large collective reaches a small share of the bus bandwidth the GPUs' link gives (bus
bandwidth as NCCL-tests defines it: algorithm bandwidth x 2(n-1)/n for all-reduce). Look at what NCCL did:

    NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH,TUNING torchrun ... train.py
    # "via P2P/IPC" or "NVLS" = NVLink; "via SHM" or "NET/Socket" = NVLink or InfiniBand unused
    nvidia-smi topo -m
    all_reduce_perf -b 8M -e 1G -f 2 -g 8   # nccl-tests: the bus bandwidth this machine can reach

Then NCCL_ALGO=Ring / NCCL_PROTO=Simple for large messages, and larger buckets:

    model = DDP(model, device_ids=[rank], bucket_cap_mb=100)""",
                docs=(L.NCCL_ENV, L.NCCL_TESTS_PERFORMANCE, L.TORCH_DDP),
            ),
        ),
        "communication.allreduce_exposed": Entry(
            category="communication",
            title="Gradient all-reduce is not hidden behind compute",
            fix_summary="Use NCCL all-reduce with packing, overlap it with backprop, or sync less often.",
            fix="""\
Collective (NCCL) kernels run while no GPU computes, so every step waits for communication. In order:

    # single host
    strategy = tf.distribute.MirroredStrategy(cross_device_ops=tf.distribute.NcclAllReduce(num_packs=2))
    # several hosts
    options = tf.distribute.experimental.CommunicationOptions(
        implementation=tf.distribute.experimental.CommunicationImplementation.NCCL,
        bytes_per_pack=32 * 1024 * 1024)   # fewer, larger all-reduces that overlap backprop
    strategy = tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)

A larger per-GPU batch or gradient accumulation syncs less often per example:

    if (step + 1) % accum_steps == 0:
        optimizer.apply_gradients(zip(accumulated, model.trainable_variables))  # all-reduce once per N

Keras mixed precision keeps variables and gradients in float32, so it does not shrink the all-reduce by
itself; the evidence gives the dtype the NCCL kernels reduce in.""",
            docs=(L.TF_DISTRIBUTED, L.NCCL_GUIDE),
            jax=Idiom(
                fix_summary="Let XLA overlap the all-reduce with backprop (latency-hiding scheduler), or sync less "
                "often.",
                fix="""\
Collective (NCCL) kernels run while no GPU computes, so every step waits for communication. Jit the whole
step with sharded inputs so XLA schedules the all-reduce itself, and let it overlap with the backward pass:

    XLA_FLAGS="--xla_gpu_enable_latency_hiding_scheduler=true" python train.py

A larger per-device batch or gradient accumulation (jax.lax.scan over micro-batches, reduce once) syncs
less often per example. The evidence gives the dtype the NCCL kernels reduce in.""",
                docs=(L.JAX_SHARDING, L.JAX_GPU_TIPS, L.NCCL_GUIDE),
            ),
            pytorch=Idiom(
                fix_summary="Overlap the DDP all-reduce with backward (bucket size), or sync less often.",
                fix="""\
Collective (NCCL) kernels run while no GPU computes, so every step waits for communication. DDP overlaps
the all-reduce of each gradient bucket with the rest of the backward pass; tune it and sync less often:

    model = DDP(model, device_ids=[rank], bucket_cap_mb=50, gradient_as_bucket_view=True)
    with model.no_sync():                     # gradient accumulation: all-reduce once per N micro-batches
        loss_fn(model(x), y).backward()

The evidence gives the dtype the NCCL kernels reduce in.""",
                docs=(L.TORCH_DDP, L.NCCL_GUIDE),
            ),
            variants=(
                (
                    "any:overlapped_already",
                    Idiom(
                        fix_summary="Split and overlapped already: a faster interconnect, or more accumulation per "
                        "all-reduce.",
                        fix="""\
The gradient all-reduce is already split into several collectives per step and part of it already runs
beside the backward pass (see the summary): packing and overlap are applied, and what is left does not fit
behind the compute over this interconnect. What still shortens it:

    - a faster link between the GPUs (NVLink/NVSwitch instead of PCIe; InfiniBand/RoCE between hosts)
    - more gradient accumulation per all-reduce (fewer all-reduces per example), or a larger per-GPU batch
    - 16-bit gradients in the all-reduce if the evidence's allreduce_dtype is float32""",
                        docs=(L.NCCL_GUIDE,),
                    ),
                ),
                (
                    "pytorch:fp32_allreduce",
                    Idiom(
                        fix_summary="Gradients are all-reduced in float32 while compute is 16-bit: a bf16 DDP comm hook.",
                        fix="""\
The step computes in 16 bits (autocast) but the NCCL kernels reduce float32 gradients: autocast keeps the
parameters and gradients in float32. Compress them for the all-reduce with a DDP communication hook:

    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    model.register_comm_hook(state=None, hook=default_hooks.bf16_compress_hook)   # cc 8.0+
    # float16: default_hooks.fp16_compress_hook (mind overflow with many ranks)

bfloat16 keeps float32's range (no overflow) with fewer mantissa bits. Then tune overlap: bucket_cap_mb.""",
                        docs=(L.TORCH_DDP_HOOKS,),
                    ),
                ),
                (
                    "fp32_allreduce",
                    Idiom(
                        fix_summary="Gradients are all-reduced in float32 while compute is 16-bit: reduce them in bf16/fp16.",
                        fix="""\
The step computes in 16 bits but the NCCL kernels reduce float32 gradients: Keras mixed precision keeps
variables and gradients in float32, so the all-reduce moves twice the bytes it could. In a custom training
loop, reduce 16-bit gradients. Keras 3 (TF 2.16+) always all-reduces inside apply_gradients, and its
built-in optimizers cast each gradient to its variable's dtype after that; tf.keras 2.11-2.15 needs the
reduction done by hand:

    grads = tape.gradient(loss, model.trainable_variables)   # loss averaged over the global batch
    low = [tf.cast(g, tf.bfloat16) for g in grads]     # cc 8.0+; float16 on 7.x, see below
    if int(tf.keras.__version__.split(".")[0]) >= 3:   # Keras 3: reduces what it is given
        optimizer.apply_gradients(zip(low, model.trainable_variables))
    else:                                              # tf.keras 2.11-2.15 (or TF_USE_LEGACY_KERAS=1)
        ctx = tf.distribute.get_replica_context()
        low = ctx.all_reduce(tf.distribute.ReduceOp.SUM, low)    # SUM, as apply_gradients would
        grads = [tf.cast(g, tf.float32) for g in low]
        optimizer.apply_gradients(zip(grads, model.trainable_variables), skip_gradients_aggregation=True)
        # legacy optimizers: apply_gradients(..., experimental_aggregate_gradients=False)

bfloat16 keeps float32's range (no overflow) with fewer mantissa bits. float16 sums can overflow across
many replicas, loss-scaled gradients especially: with a LossScaleOptimizer unscale first
(optimizer.get_unscaled_gradients) and keep loss scaling dynamic so overflowing steps are skipped. Then
overlap what remains: CommunicationOptions(bytes_per_pack=32 * 1024 * 1024).""",
                        docs=(L.TF_DISTRIBUTED, L.TF_MIXED_PRECISION, L.NCCL_GUIDE),
                    ),
                ),
                (
                    "jax:fp32_allreduce",
                    Idiom(
                        fix_summary="Gradients are all-reduced in float32 while compute is 16-bit: reduce them in bfloat16.",
                        fix="""\
The step computes in 16 bits but the NCCL kernels reduce float32 gradients, twice the bytes they could
move. Reduce in bfloat16 (float32's range, so no overflow) and cast back for the update:

    # inside shard_map / pmap over the data axis
    grads = jax.tree.map(lambda g: jax.lax.pmean(g.astype(jnp.bfloat16), "data").astype(jnp.float32), grads)

Under jit with sharded arrays, cast the per-device gradients to bfloat16 where they are combined. float16
can overflow when many replicas sum large values: reduce with a mean, and keep loss scaling dynamic. Then
let XLA overlap what remains: XLA_FLAGS=--xla_gpu_enable_latency_hiding_scheduler=true.""",
                        docs=(L.JAX_SHARDING, L.NCCL_GUIDE),
                    ),
                ),
                ("any:not_allreduce", NOT_ALLREDUCE_IDIOM),
            ),
        ),
        "communication.gpu_imbalance": Entry(
            category="communication",
            title="GPUs are unevenly loaded (stragglers)",
            fix_summary="Balance work per GPU: equal per-replica batches, same input path, no GPU doing extras.",
            fix="""\
Some GPUs are busy much longer than others in the same step; with synchronous training every step waits
for the slowest one (the others wait inside NCCL kernels). Check:
- equal per-replica batches: use strategy.experimental_distribute_dataset(ds) with
  ds.batch(global_batch, drop_remainder=True);
- work done on one GPU only (metrics, summaries, checkpoint or evaluation on replica 0);
- the same input path for every GPU (one GPU's tf.data placed differently, or a shared PCIe switch).""",
            docs=(L.TF_DISTRIBUTED, L.NCCL_GUIDE),
            jax=Idiom(
                fix_summary="Balance work per device: shard the batch evenly, no device doing extras; check its "
                "clocks.",
                fix="""\
Some GPUs are busy much longer than others in the same step; with synchronous training every step waits
for the slowest one (the others wait inside NCCL kernels). Check:
- the batch is sharded evenly (jax.sharding.NamedSharding over a Mesh of all devices, a global batch
  divisible by the device count);
- no device does extra work (metrics, host callbacks, evaluation placed on device 0).""",
                docs=(L.JAX_SHARDING, L.NCCL_GUIDE),
            ),
            pytorch=Idiom(
                fix_summary="Balance work per rank: equal batches (DistributedSampler), no rank doing extras.",
                fix="""\
Some GPUs are busy much longer than others in the same step; with synchronous training every step waits
for the slowest one (the others wait inside NCCL kernels). Check: equal per-rank batches
(DistributedSampler, drop_last=True), and no work on rank 0 only (metrics, evaluation, checkpoints inside
the step).""",
                docs=(L.TORCH_DDP, L.NCCL_GUIDE),
            ),
            variants=(
                (
                    "any:hardware",
                    Idiom(
                        fix_summary="Fix the slow GPU: check its clocks, power cap, temperature and PCIe/NVLink placement.",
                        fix="""\
The same kernels run slower on one GPU than on the others, so every synchronous step waits for it (the
others wait inside NCCL kernels). Balancing the batch does not help; the GPU itself is slower:

    nvidia-smi -q -d CLOCK,PERFORMANCE,TEMPERATURE,POWER   # "Clocks Event Reasons": power cap, thermal, HW slowdown
    nvidia-smi -q -d POWER                                  # a lower power limit than its peers (nvidia-smi -pl)
    nvidia-smi topo -m                                      # a GPU behind another PCIe switch/socket than its peers

Fix cooling or the power limit, reset application clocks (nvidia-smi -rac), or move the job off that GPU;
if it sits on a slower link, place the replicas so the ring does not cross it.""",
                        docs=(L.NCCL_GUIDE, L.NVIDIA_SMI),
                    ),
                ),
                (
                    "any:hardware_rocm",
                    Idiom(
                        fix_summary="Fix the slow GPU: check its clocks, power cap, temperature and xGMI/PCIe placement "
                        "(rocm-smi).",
                        fix="""\
The same kernels run slower on one GPU than on the others, so every synchronous step waits for it (the
others wait inside RCCL kernels). Balancing the batch does not help; the GPU itself is slower:

    rocm-smi --showclocks --showperflevel --showtemp --showpower   # clocks, performance level, thermals, power
    rocm-smi --showmaxpower                                        # a lower power cap than its peers
    rocm-smi --showtopo                                            # xGMI vs PCIe links between the GPUs

Fix cooling or the power cap, reset the performance level (rocm-smi --resetclocks), or move the job off that
GPU; if it sits on a slower link, place the replicas so the ring does not cross it.""",
                        docs=(L.NCCL_GUIDE, L.ROCM_SMI),
                    ),
                ),
            ),
        ),
    },
)


def exposed_collectives_ms(ctx: Context) -> tuple[float, ExposedCommunication]:
    """(exposed ms, ExposedCommunication): each GPU's collectives outside its own compute, on the GPU with the
    least of it (what the others spend beyond it is waiting for that GPU: gpu_imbalance's time), never less than
    the breakdown's `collectives`, which counts only time no GPU computes: with several GPUs in one profile,
    another GPU's compute does not hide this GPU's communication."""
    exposure = _exposure(ctx)
    return max(ctx.category_ms("collectives"), ms(exposure.least_exposed_ps)), exposure


def _exposure(ctx):
    """ExposedCommunication of the active GPUs: each GPU's collective kernels against its own compute."""
    return exposed_communication(
        ctx.active_gpus,
        lambda gpu: ctx.kernel_mask(gpu, is_nccl),
        lambda gpu: ctx.kernel_mask(gpu, lambda name: not is_nccl(name)),
        ctx.gpu_windows,
    )


def kinds_of(ctx: Context) -> tuple[CollectiveKind, ...]:
    """CollectiveKind rows of the active GPUs' collective kernels inside their windows."""
    active = {gpu.ordinal: gpu for gpu in ctx.active_gpus}
    calls = kernel_calls_in_windows(
        ctx.analysis.collectives, lambda ordinal: ctx.gpu_windows(active[ordinal]) if ordinal in active else None
    )
    return collective_kinds(calls, ctx.step_count)


def allreduce_exposed(ctx: Context) -> Finding | None:
    """Collective kernels running while no GPU computes (XProf's "Device Collective Communication")."""
    if not ctx.has_gpu:
        return None
    exposed_ms, exposure = exposed_collectives_ms(ctx)
    share = ctx.share_pct(exposed_ms)
    severity = grade(share, COLLECTIVES_HIGH_PCT, COLLECTIVES_MEDIUM_PCT)
    if severity is None:
        return None
    nccl_ps = sum(exposure.collective_ps.values())
    overlap_pct = exposure.overlap_pct
    names = sorted({name for gpu in ctx.active_gpus for name in gpu.activity.names if is_nccl(name)})
    rows = kinds_of(ctx)
    dtype = _allreduce_dtype(ctx, rows)
    compute_16bit_pct = _compute_16bit_share(ctx)
    condition, note = _fp32_allreduce(ctx, dtype, compute_16bit_pct)
    kinds = _collective_time_by_kind(ctx, rows)
    allreduce_pct = round(100.0 * kinds.get("allreduce", 0) / sum(kinds.values()), 2) if sum(kinds.values()) else None
    title = ""
    if allreduce_pct is not None and allreduce_pct < ALLREDUCE_DOMINANT_PCT:
        top = max(kinds, key=kinds.get)
        condition = "not_allreduce"
        title = f"{_KIND_TITLES.get(top, 'Collectives are')} not hidden behind compute"
        note = (
            f"Most collective time here is {_KIND_WORDS.get(top, top)} ({100.0 * kinds[top] / sum(kinds.values()):.0f}%), "
            f"not gradient all-reduce ({allreduce_pct:.0f}%): advice for data-parallel all-reduce does not "
            "apply."
        )
    allreduce = next((row for row in rows if row.collective == "allreduce"), None)
    if (
        condition is None
        and allreduce is not None
        and (allreduce.calls_per_step or 0) >= 2
        and (overlap_pct or 0) >= ALREADY_OVERLAPPED_PCT
    ):
        condition = "overlapped_already"
        note = (
            f"{allreduce.calls_per_step:g} all-reduces per step (packed or bucketed gradients) and "
            f"{overlap_pct:.0f}% of NCCL time beside compute: overlap is in use already."
        )
    finding = Finding(
        id="communication.allreduce_exposed",
        severity=severity,
        summary=f"Collectives run with no compute beside them {share:.1f}% of the step time; "
        f"{overlap_pct if overlap_pct is not None else 0:.0f}% of NCCL time overlaps compute.",
        evidence=Evidence(
            {
                "collectives_exposed_pct": share,
                "collectives_exposed_ms": round(exposed_ms, 3),
                "collectives_exposed_ms_per_step": ctx.per_step_ms(exposed_ms),
                "nccl_ms": ms(nccl_ps),
                "nccl_overlap_with_compute_pct": overlap_pct,
                "nccl_share_of_kernel_time_pct": pct(ctx.analysis.balance.nccl_share_pct),
                "active_gpus": len(ctx.active_gpus),
                "allreduce_dtype": dtype,
                "allreduce_share_of_collective_pct": allreduce_pct,
                "collective_ms_by_kind": {kind: ms(ps) for kind, ps in sorted(kinds.items())},
                "compute_16bit_share_pct": compute_16bit_pct,
                "collective_kinds_named_from": sorted({src for row in rows for src in row.named_from}),
                "issued_by": {row.collective: list(row.issued_by) for row in rows if row.issued_by},
            },
            ladder("collectives_exposed_pct", share, COLLECTIVES_HIGH_PCT, COLLECTIVES_MEDIUM_PCT),
            {"kernels": names[:5]},
        ),
        recoverable_ms=exposed_ms,
        window_ms=ctx.window_ms,
        speedup_basis="upper bound: collectives fully overlapped with compute",
        condition=condition,
        fix_note=note,
        title=title,
    )
    compute_ms = ms(max(ctx.kernel_ps_by_gpu(lambda name: not is_nccl(name)).values(), default=0))
    return estimated(
        finding,
        overlap_collectives(
            ctx.window_ms, exposed_ms, compute_ms, ms(exposure.mean_overlapped_ps), BACKWARD_SHARE_OF_COMPUTE
        ),
    )


ALLREDUCE_DOMINANT_PCT = 50.0  # below this share of collective time, all-reduce advice does not fit the job
# From this share of NCCL time beside compute, collectives are being overlapped (a schedule, not chance).
ALREADY_OVERLAPPED_PCT = 25.0
_KIND_WORDS = {
    "sendrecv": "point-to-point send/recv",
    "alltoall": "all-to-all",
    "allgather": "all-gather",
    "reducescatter": "reduce-scatter",
    "broadcast": "broadcast",
    "reduce": "reduce",
}

# The finding's title when one collective kind other than all-reduce takes most of the collective time.
_KIND_TITLES = {
    "sendrecv": "Point-to-point send/recv is",
    "alltoall": "All-to-all exchanges are",
    "allgather": "All-gather is",
    "reducescatter": "Reduce-scatter is",
    "broadcast": "Broadcast is",
    "reduce": "Reduce is",
}


def _collective_time_by_kind(ctx, rows):
    """{collective kind: ps} of the active GPUs' collective kernels, named from the host op (or HLO/TF op) that
    issued them, the kernel's name only where nothing else tells; kernels whose kind nothing tells left out."""
    found = {}
    for row in rows:
        if row.named_from:
            found[row.collective] = found.get(row.collective, 0) + int(round(row.total_ms * 1e9))
    return found


def _allreduce_dtype(ctx, rows):
    """The element type the busiest collectives reduce in: recorded with the call (PyTorch's args, the HLO, the
    TF op's shapes), else from the kernel name or op/HLO name; None when nothing says."""
    for row in rows:
        if row.collective in ("allreduce", "reducescatter") and len(row.dtypes) == 1:
            return row.dtypes[0]
    by_dtype = {}
    for gpu in ctx.active_gpus:
        activity = gpu.activity
        mask = ctx.kernel_mask(gpu, is_nccl)
        for index in np.flatnonzero(mask):
            op = activity.op_names[activity.op_id[index]] if activity.op_id[index] >= 0 else None
            dtype = collective_dtype(activity.names[activity.name_id[index]], op)
            if dtype is not None:
                by_dtype[dtype] = by_dtype.get(dtype, 0) + int(activity.duration_ps[index])
    return max(by_dtype, key=by_dtype.get) if by_dtype else None


def _compute_16bit_share(ctx):
    breakdown = ctx.analysis.breakdown_pct
    compute = sum(breakdown.get(key) or 0.0 for key in COMPUTE_CATEGORIES)
    return round(100.0 * (breakdown["compute_16bit"] or 0.0) / compute, 2) if compute else None


def _fp32_allreduce(ctx, dtype, compute_16bit_pct):
    """Mixed precision computes in 16 bits but keeps float32 gradients: the all-reduce moves 4 bytes a value."""
    if dtype != "f32" or compute_16bit_pct is None or compute_16bit_pct < 50.0:
        return None, ""
    return "fp32_allreduce", ""  # the catalog's variants say it, in each idiom


def gpu_imbalance(ctx):
    """Compute share (NCCL excluded: a GPU waiting for a straggler spins inside NCCL) differs across GPUs."""
    if len(ctx.active_gpus) < 2:
        return None
    compute = ctx.kernel_ps_by_gpu(_is_compute)
    nccl = ctx.kernel_ps_by_gpu(is_nccl)
    rows, gpus = [], []
    for gpu in ctx.active_gpus:
        window_ps = ctx.gpu_windows(gpu).total_ps
        # Only GPUs that compute can straggle: one that only copies (or only communicates) takes no part in
        # the step's compute, so its low compute share is not imbalance.
        if window_ps > 0 and compute[gpu.ordinal] > 0:
            gpus.append(gpu)
            rows.append(
                {
                    "device": gpu.name,
                    "compute_pct": round(100.0 * compute[gpu.ordinal] / window_ps, 2),
                    "compute_ms": ms(compute[gpu.ordinal]),
                    "nccl_ms": ms(nccl[gpu.ordinal]),
                }
            )
    if len(rows) < 2:
        return None
    values = [row["compute_pct"] for row in rows]
    spread = round(max(values) - min(values), 2)
    if spread < IMBALANCE_SPREAD_PCT:
        return None
    mean = sum(values) / len(values)
    slowest = max(range(len(rows)), key=lambda i: (rows[i]["compute_ms"], -i))
    others = [i for i in range(len(rows)) if i != slowest]
    # Synchronous steps wait for the slowest GPU; without its excess they wait for the next slowest.
    recoverable = rows[slowest]["compute_ms"] - max(rows[i]["compute_ms"] for i in others)
    cause, cause_metrics, note = _straggler_cause(ctx, gpus[slowest], [gpus[i] for i in others])
    condition = f"{cause}_rocm" if cause == "hardware" and ctx.on_amd else cause
    share = ctx.share_pct(recoverable)
    severity = grade(share, MODELED_HIGH_PCT, MODELED_MEDIUM_PCT, MODELED_LOW_PCT) or "low"
    least = min(rows, key=lambda row: row["compute_pct"])
    most = rows[slowest]
    finding = Finding(
        id="communication.gpu_imbalance",
        severity=severity,
        summary=f"{most['device']} is the straggler: it computes {most['compute_pct']:.1f}% of the step, the "
        f"least busy GPU {least['compute_pct']:.1f}% ({least['device']}); cause: {cause}.",
        evidence=Evidence(
            {
                "cause": cause,
                "compute_pct_spread": spread,
                "compute_pct_mean": round(mean, 2),
                "slowest_excess_ms": round(recoverable, 3),
                **cause_metrics,
                "per_gpu": rows,
                "recoverable_pct": share,
            },
            limit("compute_pct_spread", spread, IMBALANCE_SPREAD_PCT),
            {"devices": [least["device"], most["device"]], "straggler": most["device"]},
        ),
        recoverable_ms=recoverable,
        window_ms=ctx.window_ms,
        speedup_basis="upper bound: the slowest GPU computing no longer than the next slowest, so the step "
        "waits that much less",
        fix_note=note,
        condition=condition,
    )
    return estimated(finding, straggler(ctx.window_ms, recoverable))


def _is_compute(name):
    """A compute kernel: neither a collective nor the runtime's own copy/fill kernel."""
    return not is_nccl(name) and not is_runtime_copy(name)


def _kernel_stats(ctx, gpu):
    """{kernel name: (count, total ps)} of a GPU's non-collective kernels starting inside its windows."""
    activity = gpu.activity
    mask = ctx.kernel_mask(gpu, _is_compute)
    windows = ctx.gpu_windows(gpu)
    index = np.flatnonzero(mask)
    if len(windows):
        starts = activity.start_ps[index]
        slot = np.searchsorted(windows.end_ps, starts, side="right")
        inside = slot < len(windows)
        inside[inside] = starts[inside] >= windows.start_ps[slot[inside]]
        index = index[inside]
    stats = {}
    for name_id, duration in zip(activity.name_id[index], activity.duration_ps[index]):
        count, total = stats.get(int(name_id), (0, 0))
        stats[int(name_id)] = (count + 1, total + int(duration))
    return {activity.names[key]: value for key, value in stats.items()}


def _straggler_cause(ctx, slow, others):
    """("hardware" | "workload", metrics, fix note): the same kernels slower on the straggler, or more work on it."""
    mine = _kernel_stats(ctx, slow)
    theirs = [_kernel_stats(ctx, gpu) for gpu in others]
    common = [name for name in mine if all(name in stats for stats in theirs)]
    slow_ps = sum(mine[name][1] for name in common)
    expected_ps = sum(mine[name][0] * np.mean([stats[name][1] / stats[name][0] for stats in theirs]) for name in common)
    slowdown = round(slow_ps / expected_ps, 3) if expected_ps > 0 else None
    extra_kernels = sum(count for count, _ in mine.values()) - round(
        np.mean([sum(count for count, _ in stats.values()) for stats in theirs])
    )
    metrics = {"same_kernels_slowdown": slowdown, "extra_kernels_on_slowest": int(extra_kernels)}
    if slowdown is not None and slowdown >= STRAGGLER_SLOWDOWN_MIN:
        note = (
            f"Cause: hardware. {slow.name} runs the same kernels {slowdown:.2f}{TIMES} slower than the other GPUs "
            f"({len(common)} kernel names in common)."
        )
        return "hardware", metrics, note
    note = (
        f"Cause: workload. {slow.name} runs the same kernels at the same speed"
        + (f" ({slowdown:.2f}{TIMES})" if slowdown is not None else "")
        + f" but more of them ({extra_kernels:+d} kernels per profile than the others' mean): it is given more "
        "work. Give every replica the same work (see below)."
    )
    return "workload", metrics, note


def collective_below_link(ctx):
    """The fastest large call of a collective kind reaches < COLLECTIVE_LOW_BUSBW_FRACTION of the link's practical
    bus bandwidth, and that kind takes >= COLLECTIVES_MEDIUM_PCT of the step. Needs sized calls (PyTorch 2.1+;
    XPlane through the HLO instruction or the TensorFlow op's shapes)."""
    link = ctx.analysis.link
    if not ctx.has_gpu or link is None:
        return None
    slow = [
        row
        for row in ctx.analysis.collective_bandwidth
        if row.best_busbw_link_ratio is not None
        and row.large_calls >= COLLECTIVE_MIN_LARGE_CALLS
        and row.best_busbw_link_ratio < COLLECTIVE_LOW_BUSBW_FRACTION
        and min(100.0, ctx.share_pct(row.total_ms)) >= COLLECTIVES_MEDIUM_PCT
    ]
    if not slow:
        return None
    row = slow[0]
    reachable = COLLECTIVE_REACHABLE_FRACTION * link.gbps
    saved_ms = round(row.total_ms * max(0.0, 1.0 - row.busbw_gbps / reachable), 3)
    exposed_ms = ctx.category_ms("collectives")
    recoverable = min(saved_ms, exposed_ms)
    share = min(100.0, ctx.share_pct(row.total_ms))
    return Finding(
        id="communication.collective_below_link",
        severity="medium" if link.known else "low",
        summary=f"{row.collective} moves data at {row.busbw_gbps:.1f} GB/s bus bandwidth (median of "
        f"{row.large_calls} calls of {row.median_bytes / 2**20:.0f} MiB median; best {row.best_busbw_gbps:.1f}"
        f" GB/s), {100 * row.best_busbw_link_ratio:.0f}% of the {link.gbps:.0f} GB/s "
        f"{'NVLink' if link.kind == 'nvlink' else 'PCIe'} gives at best; it takes {share:.1f}% of the step.",
        evidence=Evidence(
            {
                "collective": row.collective,
                "ranks": row.group_size,
                "calls": row.calls,
                "large_calls": row.large_calls,
                "median_bytes": row.median_bytes,
                "algbw_gbps": row.algbw_gbps,
                "busbw_gbps": row.busbw_gbps,
                "best_busbw_gbps": row.best_busbw_gbps,
                "link": link.kind,
                "link_known": link.known,
                "link_gbps": link.gbps,
                "best_busbw_link_ratio": row.best_busbw_link_ratio,
                "collective_ms": row.total_ms,
                "collective_pct": share,
                "collectives_exposed_ms": round(exposed_ms, 3),
            },
            limit(
                "best_busbw_link_ratio",
                row.best_busbw_link_ratio,
                COLLECTIVE_LOW_BUSBW_FRACTION,
                direction="below",
                large_call_bytes_at_least=LARGE_COLLECTIVE_BYTES,
                collective_pct_above=COLLECTIVES_MEDIUM_PCT,
            ),
            {"devices": [gpu.name for gpu in ctx.active_gpus][:4]},
        ),
        recoverable_ms=recoverable,
        window_ms=ctx.window_ms,
        speedup_basis=f"upper bound: the {row.collective} calls at {100 * COLLECTIVE_REACHABLE_FRACTION:.0f}% of "
        "the link's bus bandwidth, counted only where no compute hides them",
        fix_note=f"Link: {link.basis}. Kernel times include waiting for the slowest rank, so the median is a "
        "lower bound of the bandwidth; the best call shows what the link and NCCL's settings allowed.",
    )


RULES = (allreduce_exposed, collective_below_link, gpu_imbalance)
