"""Catalog entries of the multi-GPU findings: exposed collectives and imbalance."""

from tb_gpu_advisor.findings.catalog import Entry, Idiom
from tb_gpu_advisor.findings.catalog import links as L

ENTRIES = {
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
            docs=(L.JAX_SHARDING, L.JAX_GPU_TIPS, L.NCCL_GUIDE)),
        variants=(("fp32_allreduce", Idiom(
            fix_summary="Gradients are all-reduced in float32 while compute is 16-bit: reduce them in bf16/fp16.",
            fix="""\
The step computes in 16 bits but the NCCL kernels reduce float32 gradients: Keras mixed precision keeps
variables and gradients in float32, so the all-reduce moves twice the bytes it could. In a custom training
loop, cast before reducing and back after:

    grads = tape.gradient(loss, model.trainable_variables)   # loss averaged over the global batch
    ctx = tf.distribute.get_replica_context()
    low = [tf.cast(g, tf.bfloat16) for g in grads]     # cc 8.0+; float16 on 7.x, see below
    low = ctx.all_reduce(tf.distribute.ReduceOp.SUM, low)    # SUM, as apply_gradients would
    grads = [tf.cast(g, tf.float32) for g in low]
    optimizer.apply_gradients(zip(grads, model.trainable_variables), skip_gradients_aggregation=True)
    # legacy tf.keras optimizers: apply_gradients(..., experimental_aggregate_gradients=False)

bfloat16 keeps float32's range (no overflow) with fewer mantissa bits. float16 sums can overflow across
many replicas, loss-scaled gradients especially: with a LossScaleOptimizer unscale first
(optimizer.get_unscaled_gradients) and keep loss scaling dynamic so overflowing steps are skipped. Then
overlap what remains: CommunicationOptions(bytes_per_pack=32 * 1024 * 1024).""",
            docs=(L.TF_DISTRIBUTED, L.TF_MIXED_PRECISION, L.NCCL_GUIDE))),
                  ("jax:fp32_allreduce", Idiom(
            fix_summary="Gradients are all-reduced in float32 while compute is 16-bit: reduce them in bfloat16.",
            fix="""\
The step computes in 16 bits but the NCCL kernels reduce float32 gradients, twice the bytes they could
move. Reduce in bfloat16 (float32's range, so no overflow) and cast back for the update:

    # inside shard_map / pmap over the data axis
    grads = jax.tree.map(lambda g: jax.lax.pmean(g.astype(jnp.bfloat16), "data").astype(jnp.float32), grads)

Under jit with sharded arrays, cast the per-device gradients to bfloat16 where they are combined. float16
can overflow when many replicas sum large values: reduce with a mean, and keep loss scaling dynamic. Then
let XLA overlap what remains: XLA_FLAGS=--xla_gpu_enable_latency_hiding_scheduler=true.""",
            docs=(L.JAX_SHARDING, L.NCCL_GUIDE)))),
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
  (nvidia-smi topo -m).""",
        docs=(L.TF_DISTRIBUTED, L.NCCL_GUIDE),
        jax=Idiom(
            fix_summary="Balance work per device: shard the batch evenly, no device doing extras; check its "
                        "clocks.",
            fix="""\
Some GPUs are busy much longer than others in the same step; with synchronous training every step waits
for the slowest one (the others wait inside NCCL kernels). Check:
- the batch is sharded evenly (jax.sharding.NamedSharding over a Mesh of all devices, a global batch
  divisible by the device count);
- no device does extra work (metrics, host callbacks, evaluation placed on device 0);
- hardware: clocks/thermals (nvidia-smi -q -d CLOCK,PERFORMANCE) and the NVLink/PCIe topology
  (nvidia-smi topo -m).""",
            docs=(L.JAX_SHARDING, L.NCCL_GUIDE)),
        variants=(("any:hardware", Idiom(
            fix_summary="Fix the slow GPU: check its clocks, power cap, temperature and PCIe/NVLink placement.",
            fix="""\
The same kernels run slower on one GPU than on the others, so every synchronous step waits for it (the
others wait inside NCCL kernels). Balancing the batch does not help; the GPU itself is slower:

    nvidia-smi -q -d CLOCK,PERFORMANCE,TEMPERATURE,POWER   # "Clocks Event Reasons": power cap, thermal, HW slowdown
    nvidia-smi -q -d POWER                                  # a lower power limit than its peers (nvidia-smi -pl)
    nvidia-smi topo -m                                      # a GPU behind another PCIe switch/socket than its peers

Fix cooling or the power limit, reset application clocks (nvidia-smi -rac), or move the job off that GPU;
if it sits on a slower link, place the replicas so the ring does not cross it.""",
            docs=(L.NCCL_GUIDE, L.NVIDIA_SMI))),),
    ),
}
