"""Communication findings from the collective calls (category communication): a step bound by communication that
compute cannot hide, and gradients all-reduced one tensor at a time."""

from __future__ import annotations

import math

from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Entry, Idiom, register
from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import Evidence, Finding, estimated, grade, ladder, limit
from tb_gpu_advisor.findings.rules.communication import (
    collective_waits_of,
    exposed_collectives_ms,
    kinds_of,
    late_gpu_waited_for,
    overlap_compute_ms,
)
from tb_gpu_advisor.findings.thresholds import (
    BACKWARD_SHARE_OF_COMPUTE,
    COLLECTIVES_HIGH_PCT,
    COLLECTIVES_MEDIUM_PCT,
    MODELED_HIGH_PCT,
    MODELED_MEDIUM_PCT,
    PER_PARAMETER_MAX_BYTES,
    PER_PARAMETER_MAX_MS,
    PER_PARAMETER_MIN_CALLS,
    PER_PARAMETER_BUCKET_BYTES,
)
from tb_gpu_advisor.whatif.communication import beyond_overlap, overlap_collectives
from tb_gpu_advisor.whatif.estimate import bound, model

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.findings.context import Context


ENTRIES = register(
    "collectives",
    {
        "collectives.comm_bound": Entry(
            category="communication",
            title="Communication takes longer than the compute that could hide it",
            fix_summary="Communicate less per example: sync less often (accumulate gradients), 16-bit gradients, "
            "the link.",
            fix="""\
The collectives left exposed are more than the backward pass's compute can hide, so overlapping them better
cannot make the step much shorter: move fewer bytes, less often. In order:

- sync less often: a larger per-replica batch, or gradient accumulation that all-reduces once per N
  micro-batches (custom loop: sum the gradients of N micro-batches, then one apply_gradients);
- reduce 16-bit gradients (half the bytes of float32), and fewer, larger packs:
      options = tf.distribute.experimental.CommunicationOptions(
          implementation=tf.distribute.experimental.CommunicationImplementation.NCCL,
          bytes_per_pack=64 * 1024 * 1024)
- check that the collectives use the fast link: NCCL_DEBUG=INFO shows the transport ("P2P/IPC", "NVLS" or
  InfiniBand; "SHM" or "NET/Socket" means host memory or TCP).""",
            docs=(L.TF_DISTRIBUTED, L.NCCL_GUIDE),
            jax=Idiom(
                fix_summary="Communicate less per example: accumulate micro-batches, reduce in bfloat16, check the "
                "link.",
                fix="""\
The collectives left exposed are more than the backward pass's compute can hide, so overlapping them better
cannot make the step much shorter: move fewer bytes, less often. In order:

- sync less often: a larger per-device batch, or accumulate gradients over micro-batches
  (jax.lax.scan over them) and reduce once per step;
- reduce in bfloat16: jax.lax.pmean(g.astype(jnp.bfloat16), "data").astype(jnp.float32);
- check the transport: NCCL_DEBUG=INFO (NVLink/InfiniBand vs "NET/Socket").""",
                docs=(L.JAX_SHARDING, L.NCCL_GUIDE),
            ),
            pytorch=Idiom(
                fix_summary="Communicate less per example: no_sync() gradient accumulation, a bf16 comm hook, check the "
                "link.",
                fix="""\
The collectives left exposed are more than the backward pass's compute can hide, so overlapping them better
cannot make the step much shorter: move fewer bytes, less often. In order:

    # sync once per N micro-batches
    for i, (x, y) in enumerate(micro_batches):
        ctx = model.no_sync() if i < N - 1 else contextlib.nullcontext()
        with ctx:
            loss_fn(model(x), y).backward()
    # half the bytes: reduce bf16 gradients
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    model.register_comm_hook(state=None, hook=default_hooks.bf16_compress_hook)

Then check the transport: NCCL_DEBUG=INFO (RCCL reads the same variable) shows whether NVLink/xGMI or
InfiniBand is used ("NET/Socket" or "SHM" means TCP or host memory).""",
                docs=(L.TORCH_DDP, L.TORCH_DDP_HOOKS, L.NCCL_GUIDE),
            ),
            variants=(
                (
                    "any:not_allreduce",
                    Idiom(
                        fix_summary="Move fewer bytes in the exchanges: shard to keep lookups local, 16-bit comms, the link.",
                        fix="""\
Most exposed collective time is point-to-point or all-to-all exchange (pipeline or model parallelism,
sharded embedding tables), and it takes longer than the compute that could hide it, so better overlap
cannot remove it: exchange fewer bytes. Sharded embeddings: let the sharding planner keep small tables
data-parallel or table-wise on fewer ranks, and send 16-bit values through the all-to-all (TorchRec's
quantized comms: QCommsConfig with forward/backward precision FP16 or BF16). Pipelines: fewer, larger
stage boundaries. Then check the transport (NCCL_DEBUG=INFO; "NET/Socket" or "SHM" means TCP or host memory)
and capture every rank for the same steps: a rank that waits in the exchange may be waiting for a slower peer.""",
                        docs=(L.NCCL_GUIDE,),
                    ),
                ),
            ),
        ),
        "collectives.per_parameter_allreduce": Entry(
            category="communication",
            title="Gradients are all-reduced one small tensor at a time",
            fix_summary="Pack gradients into few large all-reduces: CommunicationOptions(bytes_per_pack), num_packs.",
            fix="""\
Each step runs many small all-reduces, about one per gradient tensor: each pays NCCL's fixed latency
(launch, handshake, ring setup) for a few bytes. Pack them:

    options = tf.distribute.experimental.CommunicationOptions(
        implementation=tf.distribute.experimental.CommunicationImplementation.NCCL,
        bytes_per_pack=32 * 1024 * 1024)
    strategy = tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
    # one host: tf.distribute.MirroredStrategy(cross_device_ops=tf.distribute.NcclAllReduce(num_packs=1))

In a custom loop, reduce all gradients in one call (ctx.all_reduce(SUM, grads) over the list, then
optimizer.apply_gradients(..., skip_gradients_aggregation=True); legacy optimizers:
experimental_aggregate_gradients=False), not one tensor at a time.""",
            docs=(L.TF_DISTRIBUTED, L.NCCL_GUIDE),
            jax=Idiom(
                fix_summary="Reduce the whole gradient pytree in one collective (or let XLA combine them).",
                fix="""\
Each step runs many small all-reduces, about one per gradient tensor: each pays NCCL's fixed latency for a
few bytes. Reduce the gradient pytree at once, and let XLA combine what is left:

    grads = jax.lax.pmean(grads, axis_name="data")      # the whole pytree, inside shard_map / pmap
    # jit with sharded inputs (NamedSharding) lets XLA schedule and combine the all-reduces itself
    XLA_FLAGS="--xla_gpu_all_reduce_combine_threshold_bytes=134217728" python train.py""",
                docs=(L.JAX_SHARDING, L.JAX_GPU_TIPS),
            ),
            pytorch=Idiom(
                fix_summary="Use DDP's gradient buckets (bucket_cap_mb), not one all-reduce per parameter.",
                fix="""\
Each step runs many small all-reduces, about one per gradient tensor: each pays NCCL's fixed latency for a
few bytes. DistributedDataParallel packs gradients into buckets that overlap the backward pass:

    model = DDP(model, device_ids=[rank], bucket_cap_mb=25, gradient_as_bucket_view=True)
    # gradient accumulation: all-reduce once per N micro-batches
    with model.no_sync():
        loss_fn(model(x), y).backward()

A hand-written loop of dist.all_reduce(p.grad) per parameter (or a tiny bucket_cap_mb) causes this pattern;
if you must reduce by hand, flatten first (torch._utils._flatten_dense_tensors) and reduce one buffer.""",
                docs=(L.TORCH_DDP, L.NCCL_GUIDE),
            ),
        ),
    },
)


def comm_bound(ctx: Context) -> Finding | None:
    """The step's exposed collectives (each GPU's collectives outside its own compute) take at least
    COLLECTIVES_HIGH_PCT of it, and overlapping them with the backward pass hides less than they take: the
    rest (at least COLLECTIVES_MEDIUM_PCT of the step) is communication no overlap can remove."""
    if not ctx.has_gpu:
        return None
    exposed_ms, exposure = exposed_collectives_ms(ctx)
    share = ctx.share_pct(exposed_ms)
    if share < COLLECTIVES_HIGH_PCT:
        return None
    waits = collective_waits_of(ctx)
    compute_ms, whose = overlap_compute_ms(ctx, waits)
    overlapped_ms = ms(exposure.mean_overlapped_ps)
    hidden = overlap_collectives(
        ctx.window_ms, exposed_ms, compute_ms, overlapped_ms, BACKWARD_SHARE_OF_COMPUTE, whose
    ).recoverable_of(ctx.window_ms)
    rest = exposed_ms - hidden
    rest_share = ctx.share_pct(rest)
    severity = grade(rest_share, COLLECTIVES_HIGH_PCT, COLLECTIVES_MEDIUM_PCT)
    if severity is None:
        return None
    rows = kinds_of(ctx)
    total = sum(row.total_ms for row in rows if row.named_from)
    allreduce = sum(row.total_ms for row in rows if row.collective in ("allreduce", "reducescatter"))
    condition = "not_allreduce" if total and allreduce < total / 2 else None
    busy = ctx.analysis.gpu_busy_pct
    finding = Finding(
        id="collectives.comm_bound",
        severity=severity,
        summary=f"Collectives with no compute beside them take {share:.1f}% of the step "
        f"({ctx.time_text(exposed_ms)}); overlapping them with the backward pass could hide about "
        f"{ctx.time_text(hidden)}, leaving {rest_share:.1f}% of the step to communication. "
        + _busy_text(ctx, busy, waits),
        evidence=Evidence(
            {
                "collectives_exposed_pct": share,
                "collectives_exposed_ms": round(exposed_ms, 3),
                "overlap_hides_ms": round(hidden, 3),
                "beyond_overlap_ms": round(rest, 3),
                "beyond_overlap_pct": rest_share,
                "compute_ms_busiest_gpu": compute_ms,
                "collectives_overlapped_ms_per_gpu": round(overlapped_ms, 3),
                "collective_overlap_with_compute_pct": exposure.overlap_pct,
                "gpu_busy_pct": busy,
                "collective_wait_ms_by_gpu": {
                    ctx.device_text(gpu.name): ms(waits.wait_ps.get(gpu.ordinal, 0)) for gpu in ctx.active_gpus
                },
                "collective_ms_by_kind": {row.collective: row.total_ms for row in rows},
            },
            ladder("beyond_overlap_pct", rest_share, COLLECTIVES_HIGH_PCT, COLLECTIVES_MEDIUM_PCT),
            {"devices": [gpu.name for gpu in ctx.active_gpus][:4]},
        ),
        recoverable_ms=rest,
        window_ms=ctx.window_ms,
        condition=condition,
        speedup_basis="upper bound: the exposed collectives that overlap cannot hide removed",
    )
    return estimated(finding, beyond_overlap(ctx.window_ms, exposed_ms, hidden))


def _busy_text(ctx, busy, waits):
    """What the GPUs' collective time is: communication, and where GPUs wait in the collectives for a late one,
    that wait (a wait is no evidence that the waiter's communication is slow)."""
    waiting = late_gpu_waited_for(waits)
    if not waiting:
        return f"The GPU counts as busy {busy or 0:.0f}% with collectives: that time is spent communicating, not computing."
    names = {gpu.ordinal: ctx.device_text(gpu.name) for gpu in ctx.active_gpus}
    wait_ms = ms(sum(waits.wait_ps[o] for o in waiting) / len(waiting))
    return (
        f"The GPUs count as busy {busy or 0:.0f}% with collectives, but not all of it is communication: "
        f"{_devices(names[o] for o in waiting)} spend {ctx.time_text(wait_ms)} in the collectives waiting for "
        f"{names[waits.last_ordinal]} to arrive (the straggler finding's time, counted there), not moving data."
    )


def _devices(names):
    """`/device:GPU:0, /device:GPU:1 and /device:GPU:3`."""
    names = list(names)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def per_parameter_allreduce(ctx):
    """At least PER_PARAMETER_MIN_CALLS all-reduces per step and per GPU, small ones (median at most
    PER_PARAMETER_MAX_BYTES, or PER_PARAMETER_MAX_MS where unsized), taking COLLECTIVES_MEDIUM_PCT of the step
    or more: gradients reduced one tensor at a time, each call paying the collective's fixed latency."""
    if not ctx.has_gpu or not ctx.step_count:
        return None
    row = next((row for row in kinds_of(ctx) if row.collective == "allreduce" and row.named_from), None)
    if row is None or row.calls_per_step is None or row.calls_per_step < PER_PARAMETER_MIN_CALLS:
        return None
    sized = row.median_bytes is not None and row.sized_calls == row.calls
    small = row.median_bytes <= PER_PARAMETER_MAX_BYTES if sized else row.median_ms <= PER_PARAMETER_MAX_MS
    share = ctx.share_pct(row.total_ms)
    if not small or share < COLLECTIVES_MEDIUM_PCT:
        return None
    # Each call costs a fixed latency (the fastest tenth of the calls: a small all-reduce is mostly latency)
    # plus its bytes over the bandwidth; packed into buckets the bytes stay, the latencies of all but one call
    # per bucket go, and only where the all-reduces are exposed does that shorten the step.
    latency_ms = _fastest_tenth_ms(ctx, row)
    buckets_per_step = max(1, math.ceil(row.total_bytes / ctx.step_count / PER_PARAMETER_BUCKET_BYTES)) if sized else 1
    saved_ms = max(0.0, (row.calls - buckets_per_step * ctx.step_count) * latency_ms)
    exposed_ms, _ = exposed_collectives_ms(ctx)
    recoverable = min(saved_ms, exposed_ms)
    severity = grade(ctx.share_pct(recoverable), MODELED_HIGH_PCT, MODELED_MEDIUM_PCT) or "low"
    size_text = (
        f"median {row.median_bytes / 1024:.0f} KiB"
        if sized
        else f"median {row.median_ms * 1000:.0f} µs each, sizes not in the trace"
    )
    finding = Finding(
        id="collectives.per_parameter_allreduce",
        severity=severity,
        summary=f"{row.calls_per_step:.0f} all-reduces per step ({size_text}) take {share:.1f}% of the step: "
        "gradients are reduced one tensor at a time, each call paying the collective's fixed latency.",
        evidence=Evidence(
            {
                "allreduce_calls_per_step": row.calls_per_step,
                "allreduce_ms": row.total_ms,
                "allreduce_pct": share,
                "median_bytes": row.median_bytes,
                "median_ms": row.median_ms,
                "bytes_per_step": round(row.total_bytes / ctx.step_count) if sized else None,
                "latency_per_call_ms": round(latency_ms, 6),
                "buckets_per_step": buckets_per_step,
                "dtypes": list(row.dtypes),
                "group_sizes": list(row.group_sizes),
                "named_from": list(row.named_from),
                "issued_by": list(row.issued_by),
                "collectives_exposed_ms": round(exposed_ms, 3),
            },
            limit(
                "allreduce_calls_per_step",
                row.calls_per_step,
                PER_PARAMETER_MIN_CALLS,
                median_bytes_at_most=PER_PARAMETER_MAX_BYTES,
            ),
            {"devices": [gpu.name for gpu in ctx.active_gpus][:4]},
        ),
        recoverable_ms=recoverable,
        window_ms=ctx.window_ms,
        speedup_basis="the calls' fixed latencies saved by packing them",
    )
    bucket_mib = PER_PARAMETER_BUCKET_BYTES // 2**20
    if sized:
        estimate = model(
            ctx.window_ms,
            ctx.window_ms - recoverable,
            f"model: {row.calls_per_step:.0f} calls per step packed into {buckets_per_step} bucket(s) of "
            f"{bucket_mib} MiB, each call's fixed latency taken as the fastest tenth of the calls "
            f"({latency_ms * 1000:.0f} µs), saved only where the all-reduces are exposed",
        )
    else:
        estimate = bound(
            ctx.window_ms,
            ctx.window_ms - recoverable,
            f"upper bound: all {row.calls_per_step:.0f} calls per step packed into one (sizes not in "
            f"the trace), each call's fixed latency taken as the fastest tenth of the calls "
            f"({latency_ms * 1000:.0f} µs), saved only where the all-reduces are exposed",
        )
    return estimated(finding, estimate)


def _fastest_tenth_ms(ctx, row):
    """The 10th percentile duration of the all-reduce calls of the active GPUs (ms)."""
    durations = sorted(
        call.duration_ps
        for call in ctx.analysis.collectives
        if call.source == "kernel" and call.collective == row.collective
    )
    return durations[len(durations) // 10] / 1e9 if durations else 0.0


RULES = (comm_bound, per_parameter_allreduce)
