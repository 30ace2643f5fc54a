"""Catalog entries of the host/device copy findings."""

from tb_gpu_advisor.findings.catalog import Entry
from tb_gpu_advisor.findings.catalog import links as L

ENTRIES = {
    "transfer.pageable_memory": Entry(
        category="transfer",
        title="Copies use pageable host memory",
        fix_summary="Copy from pinned memory and overlap it: prefetch_to_device / jax.device_put ahead.",
        fix="""\
These copies read or write pageable host memory: the driver stages them through a pinned bounce buffer,
which halves bandwidth and makes them synchronous, so they cannot overlap compute. In TensorFlow let
tf.data place the batch on the GPU ahead of the step (it uses pinned staging memory):

    ds = ds.prefetch(tf.data.AUTOTUNE)
    ds = ds.apply(tf.data.experimental.prefetch_to_device("/gpu:0"))  # last stage, single GPU
    # tf.distribute: strategy.experimental_distribute_dataset(ds) prefetches to each replica

Avoid feeding NumPy arrays into model calls each step (that copies from pageable memory).
JAX: transfer the next batch before it is needed (double-buffering):

    next_batch = jax.device_put(host_batch, device)  # issued one step ahead; returns immediately
    # e.g. flax.jax_utils.prefetch_to_device(iterator, 2)

CUDA: allocate host buffers with cudaMallocHost / cudaHostRegister and use cudaMemcpyAsync on a stream.""",
        docs=(L.CUDA_PINNED, L.TF_DATA_PERFORMANCE, L.JAX_DEVICE_PUT),
    ),
    "transfer.sync_copies": Entry(
        category="sync",
        title="Synchronous copies block the host",
        fix_summary="Make copies asynchronous and ahead of use (prefetch_to_device, jax.device_put early).",
        fix="""\
These copies were issued synchronously (cudaMemcpy, not cudaMemcpyAsync): the host thread stops until the
copy ends and cannot launch more work meanwhile. Let the framework stage data asynchronously:

    ds = ds.apply(tf.data.experimental.prefetch_to_device("/gpu:0"))   # TF, single GPU
    next_batch = jax.device_put(host_batch, device)                    # JAX, one step ahead

Avoid tf.constant(numpy_array) / jnp.asarray(numpy_array) inside the step; create device arrays once.""",
        docs=(L.CUDA_BEST_PRACTICES, L.JAX_DEVICE_PUT),
    ),
    "transfer.small_copies": Entry(
        category="transfer",
        title="Many small copies per step",
        fix_summary="Batch small copies into one: stack tensors on the host, copy once per step.",
        fix="""\
Each step issues many copies below 64 KB; each one pays the fixed cost of a copy (microseconds) for little
data. Copy once per step instead: stack per-example or per-feature arrays on the host (tf.stack / np.stack
in the input pipeline, one batched tensor per input), keep constants and lookup tables on the GPU instead
of re-sending them, and read back scalars together (one tf.stack of metrics, or jax.device_get on a pytree
once per N steps).""",
        docs=(L.CUDA_BEST_PRACTICES, L.TF_DATA_PERFORMANCE),
    ),
    "transfer.low_bandwidth": Entry(
        category="transfer",
        title="Large host-to-device copies run far below the link's bandwidth",
        fix_summary="Use pinned memory and larger contiguous copies; check the GPU's PCIe link.",
        fix="""\
Large copies should reach most of the PCIe bandwidth; these do not. Usual causes: pageable source memory
(see transfer.pageable_memory), non-contiguous tensors copied piece by piece, several GPUs sharing one
PCIe switch, or a GPU in a slot with fewer lanes (check with `nvidia-smi -q | grep -A3 "Link Width"`).
Copy from pinned memory (prefetch_to_device in tf.data, jax.device_put ahead of time) and send one
contiguous batch per step.""",
        docs=(L.CUDA_PINNED, L.CUDA_BEST_PRACTICES),
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
    # metrics: update tf.keras.metrics objects inside tf.function; read .result() once per epoch

JAX: do not call float(), .item() or np.asarray() on results each step; jax.device_get the metrics every N
steps (JAX dispatches asynchronously until you read a value).""",
        docs=(L.TF_GPU_PERFORMANCE, L.JAX_PROFILING),
    ),
}
