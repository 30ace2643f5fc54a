"""The communication family's catalog words: titles, explanations and fixes of its findings."""

from __future__ import annotations

from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Entry, Idiom, register


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
