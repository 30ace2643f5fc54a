"""Catalog entries of the host/device copy findings."""

from tb_gpu_advisor.findings.catalog import Entry, Idiom
from tb_gpu_advisor.findings.catalog import links as L

ENTRIES = {
    "transfer.pageable_memory": Entry(
        category="transfer",
        title="Copies use pageable host memory",
        fix_summary="Copy from pinned memory and overlap it: tf.data prefetch_to_device as the last stage.",
        fix="""\
These copies read or write pageable host memory: the driver stages them through a pinned bounce buffer,
which halves bandwidth and makes them synchronous, so they cannot overlap compute. In TensorFlow let
tf.data place the batch on the GPU ahead of the step (it uses pinned staging memory):

    ds = ds.prefetch(tf.data.AUTOTUNE)
    ds = ds.apply(tf.data.experimental.prefetch_to_device("/gpu:0"))  # last stage, single GPU
    # tf.distribute: strategy.experimental_distribute_dataset(ds) prefetches to each replica

Avoid feeding NumPy arrays into model calls each step (that copies from pageable memory).
Own CUDA code: allocate host buffers with cudaMallocHost / cudaHostRegister and use cudaMemcpyAsync.""",
        docs=(L.CUDA_PINNED, L.TF_DATA_PERFORMANCE),
        jax=Idiom(
            fix_summary="Transfer the next batch ahead of the step (jax.device_put one step early) so copies "
                        "overlap compute.",
            fix="""\
These copies read or write pageable host memory: the driver stages them through a pinned bounce buffer,
which halves bandwidth and makes them synchronous, so they cannot overlap compute. Issue the transfer of
the next batch before it is needed (double-buffering), so it overlaps the current step:

    next_batch = jax.device_put(host_batch, device)  # one step ahead; returns immediately
    # e.g. batches = flax.jax_utils.prefetch_to_device(iterator, 2)

Do not pass NumPy arrays straight into the jitted step each call (each one is a synchronous copy).""",
            docs=(L.JAX_DEVICE_PUT, L.CUDA_PINNED)),
    ),
    "transfer.sync_copies": Entry(
        category="sync",
        title="Synchronous copies block the host",
        fix_summary="Make copies asynchronous and ahead of use (tf.data prefetch_to_device).",
        fix="""\
These copies were issued synchronously (cudaMemcpy, not cudaMemcpyAsync): the host thread stops until the
copy ends and cannot launch more work meanwhile. Let tf.data stage data asynchronously:

    ds = ds.apply(tf.data.experimental.prefetch_to_device("/gpu:0"))   # single GPU, last stage

Avoid tf.constant(numpy_array) inside the step; create device tensors once.""",
        docs=(L.CUDA_BEST_PRACTICES, L.TF_DATA_PERFORMANCE),
        jax=Idiom(
            fix_summary="Transfer ahead of use with jax.device_put one step early; no jnp.asarray(numpy) in the "
                        "loop.",
            fix="""\
These copies were issued synchronously: the host thread stops until the copy ends and cannot dispatch more
work meanwhile. Transfer the next batch one step ahead (next_batch = jax.device_put(host_batch, device)),
and avoid jnp.asarray(numpy_array) inside the loop; create device arrays once.""",
            docs=(L.JAX_DEVICE_PUT, L.CUDA_BEST_PRACTICES)),
    ),
    "transfer.small_copies": Entry(
        category="transfer",
        title="Many small copies per step",
        fix_summary="Batch small copies into one: stack tensors on the host, copy once per step.",
        fix="""\
Each step issues many copies below 64 KB; each one pays the fixed cost of a copy (microseconds) for little
data. Copy once per step instead: stack per-example or per-feature arrays on the host (batch them in the
tf.data pipeline, one batched tensor per input), keep constants and lookup tables on the GPU instead of
re-sending them, and read back scalars together (one tf.stack of metrics, read every N steps).""",
        docs=(L.CUDA_BEST_PRACTICES, L.TF_DATA_PERFORMANCE),
        jax=Idiom(
            fix_summary="Batch small copies into one: stack arrays on the host, one jax.device_put per step.",
            fix="""\
Each step issues many copies below 64 KB; each one pays the fixed cost of a copy for little data. Stack
per-example or per-feature arrays with np.stack and transfer one pytree per step (jax.device_put), keep
constants on the device (closed over or passed once), and read metrics back together with one
jax.device_get every N steps.""",
            docs=(L.CUDA_BEST_PRACTICES, L.JAX_DEVICE_PUT)),
    ),
    "transfer.low_bandwidth": Entry(
        category="transfer",
        title="Large host-to-device copies run far below the link's bandwidth",
        fix_summary="Use pinned memory and larger contiguous copies; check the GPU's PCIe link.",
        fix="""\
Large copies should reach most of the PCIe bandwidth; these do not. Usual causes: pageable source memory
(see transfer.pageable_memory), non-contiguous tensors copied piece by piece, several GPUs sharing one
PCIe switch, or a GPU in a slot with fewer lanes (check with `nvidia-smi -q | grep -A3 "Link Width"`).
Copy from pinned memory ahead of time (tf.data's prefetch_to_device as the last stage) and send one
contiguous batch per step.""",
        docs=(L.CUDA_PINNED, L.CUDA_BEST_PRACTICES),
        jax=Idiom(
            fix_summary="Use larger contiguous copies issued ahead (jax.device_put one step early); check the "
                        "PCIe link.",
            fix="""\
Large copies should reach most of the PCIe bandwidth; these do not. Usual causes: pageable source memory
(see transfer.pageable_memory), non-contiguous arrays copied piece by piece, several GPUs sharing one PCIe
switch, or a GPU in a slot with fewer lanes (check with `nvidia-smi -q | grep -A3 "Link Width"`). Send one
contiguous batch per step (np.ascontiguousarray, one pytree per jax.device_put) issued a step ahead.""",
            docs=(L.CUDA_PINNED, L.JAX_DEVICE_PUT)),
    ),
    "transfer.d2h_sync_in_step": Entry(
        category="sync",
        title="Device-to-host reads stall the GPU inside the step",
        fix_summary="Stop reading values back every step: no .numpy()/float() on tensors inside the loop.",
        fix="""\
Inside the step the host copies a value back from the GPU and the GPU then idles: the program waited for
that value (tensor.numpy(), float(loss), printing or logging metrics, Python `if` on a tensor). Keep values
on the device and read them rarely:

    if step % 100 == 0:
        print(float(loss))                # not every step
    # Keras: model.fit(..., steps_per_execution=N) and keep callbacks light
    # metrics: update tf.keras.metrics objects inside tf.function; read .result() once per epoch""",
        docs=(L.TF_GPU_PERFORMANCE,),
        jax=Idiom(
            fix_summary="Stop reading values back every step: no float()/.item()/np.asarray() on results in "
                        "the loop.",
            fix="""\
Inside the step the host copies a value back from the GPU and the GPU then idles: the loop waited for that
value (float(loss), .item(), np.asarray(x), printing, a Python `if` on an array). JAX dispatches
asynchronously until a value is read, so read rarely:

    if step % 100 == 0:
        print(jax.device_get(metrics))     # not every step""",
            docs=(L.JAX_PROFILING,)),
    ),
}
