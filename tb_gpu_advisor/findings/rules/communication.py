"""Communication findings: exposed all-reduce and unevenly busy GPUs."""

from tb_gpu_advisor.analysis.kernel_names import is_nccl
from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Entry, register
from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import Evidence, Finding, grade, ladder, limit
from tb_gpu_advisor.findings.thresholds import (COLLECTIVES_HIGH_PCT, COLLECTIVES_MEDIUM_PCT, IMBALANCE_SPREAD_PCT,
                                                MODELED_HIGH_PCT, MODELED_LOW_PCT, MODELED_MEDIUM_PCT)
from tb_gpu_advisor.model import intervals

ENTRIES = register("communication", {
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

Also: mixed precision halves the bytes of float16 gradients; a larger per-GPU batch or gradient
accumulation syncs less often per example:

    if (step + 1) % accum_steps == 0:
        optimizer.apply_gradients(zip(accumulated, model.trainable_variables))  # all-reduce once per N

JAX: jit the step with sharded inputs so XLA schedules the all-reduce; enable overlap with
XLA_FLAGS=--xla_gpu_enable_latency_hiding_scheduler=true.""",
        docs=(L.TF_DISTRIBUTED, L.NCCL_GUIDE, L.JAX_SHARDING, L.JAX_GPU_TIPS),
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
- the same input path for every GPU (one GPU's tf.data placed differently, or a shared PCIe switch);
- hardware: clocks/thermals (nvidia-smi -q -d CLOCK,PERFORMANCE) and the NVLink/PCIe topology
  (nvidia-smi topo -m).
JAX: shard the batch evenly with jax.sharding.NamedSharding and keep host-side work off one device.""",
        docs=(L.TF_DISTRIBUTED, L.NCCL_GUIDE),
    ),
})


def _nccl_overlap(ctx):
    """(NCCL ps, NCCL ps during compute on the same GPU) summed over active GPUs, inside their windows."""
    total = overlapped = 0
    for gpu in ctx.active_gpus:
        activity = gpu.activity
        nccl = ctx.kernel_mask(gpu, is_nccl)
        compute = ctx.kernel_mask(gpu, lambda name: not is_nccl(name))
        nccl_spans = intervals.union(activity.start_ps[nccl], activity.end_ps[nccl])
        compute_spans = intervals.union(activity.start_ps[compute], activity.end_ps[compute])
        total += ctx.covered_ps(gpu, nccl_spans)
        overlapped += ctx.covered_ps(gpu, intervals.intersect(nccl_spans, compute_spans))
    return total, overlapped


def allreduce_exposed(ctx):
    """Collective kernels running while no GPU computes (XProf's "Device Collective Communication")."""
    if not ctx.has_gpu:
        return None
    exposed_ms = ctx.category_ms("collectives")
    share = ctx.share_pct(exposed_ms)
    severity = grade(share, COLLECTIVES_HIGH_PCT, COLLECTIVES_MEDIUM_PCT)
    if severity is None:
        return None
    nccl_ps, overlapped_ps = _nccl_overlap(ctx)
    overlap_pct = round(100.0 * overlapped_ps / nccl_ps, 2) if nccl_ps else None
    names = sorted({name for gpu in ctx.active_gpus for name in gpu.activity.names if is_nccl(name)})
    return Finding(
        id="communication.allreduce_exposed", severity=severity,
        summary=f"Collectives run with no compute beside them {share:.1f}% of the step time; "
                f"{overlap_pct if overlap_pct is not None else 0:.0f}% of NCCL time overlaps compute.",
        evidence=Evidence({"collectives_exposed_pct": share, "collectives_exposed_ms": round(exposed_ms, 3),
                           "collectives_exposed_ms_per_step": ctx.per_step_ms(exposed_ms), "nccl_ms": ms(nccl_ps),
                           "nccl_overlap_with_compute_pct": overlap_pct,
                           "nccl_share_of_kernel_time_pct": ctx.report["balance"]["nccl_share_pct"],
                           "active_gpus": len(ctx.active_gpus)},
                          ladder("collectives_exposed_pct", share, COLLECTIVES_HIGH_PCT, COLLECTIVES_MEDIUM_PCT),
                          {"kernels": names[:5]}),
        recoverable_ms=exposed_ms, window_ms=ctx.window_ms,
        speedup_basis="upper bound: collectives fully overlapped with compute")


def gpu_imbalance(ctx):
    """Compute share (NCCL excluded: a GPU waiting for a straggler spins inside NCCL) differs across GPUs."""
    if len(ctx.active_gpus) < 2:
        return None
    compute = ctx.kernel_ps_by_gpu(lambda name: not is_nccl(name))
    nccl = ctx.kernel_ps_by_gpu(is_nccl)
    rows = []
    for gpu in ctx.active_gpus:
        window_ps = ctx.gpu_windows(gpu).total_ps
        if window_ps > 0:
            rows.append({"device": gpu.name, "compute_pct": round(100.0 * compute[gpu.ordinal] / window_ps, 2),
                         "compute_ms": ms(compute[gpu.ordinal]), "nccl_ms": ms(nccl[gpu.ordinal])})
    if len(rows) < 2:
        return None
    values = [row["compute_pct"] for row in rows]
    spread = round(max(values) - min(values), 2)
    if spread < IMBALANCE_SPREAD_PCT:
        return None
    mean = sum(values) / len(values)
    recoverable = (max(values) - mean) / 100.0 * ctx.window_ms
    share = ctx.share_pct(recoverable)
    severity = grade(share, MODELED_HIGH_PCT, MODELED_MEDIUM_PCT, MODELED_LOW_PCT) or "low"
    least = min(rows, key=lambda row: row["compute_pct"])
    most = max(rows, key=lambda row: row["compute_pct"])
    return Finding(
        id="communication.gpu_imbalance", severity=severity,
        summary=f"GPU compute ranges from {least['compute_pct']:.1f}% ({least['device']}) to "
                f"{most['compute_pct']:.1f}% ({most['device']}) of the step.",
        evidence=Evidence({"compute_pct_spread": spread, "compute_pct_mean": round(mean, 2), "per_gpu": rows,
                           "recoverable_pct": share},
                          limit("compute_pct_spread", spread, IMBALANCE_SPREAD_PCT),
                          {"devices": [least["device"], most["device"]]}),
        recoverable_ms=recoverable, window_ms=ctx.window_ms,
        speedup_basis="estimate: every GPU computing as long as the mean, so steps wait less for the busiest")


RULES = (allreduce_exposed, gpu_imbalance)
