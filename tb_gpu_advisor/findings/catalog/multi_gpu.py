"""Catalog entries of the multi-GPU findings: exposed collectives and imbalance."""

from tb_gpu_advisor.findings.catalog import Entry
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
}
