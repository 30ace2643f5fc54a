"""The transfer family's catalog words: titles, explanations and fixes of its findings."""

from __future__ import annotations

from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Entry, Idiom, register


ENTRIES = register(
    "transfer",
    {
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
                docs=(L.JAX_DEVICE_PUT, L.CUDA_PINNED),
            ),
            variants=(
                (
                    "jax:host_staging",
                    Idiom(
                        fix_summary="device_put unchanging arrays once, before the loop; prefetch the rest; pin host ones "
                        "(pinned_host).",
                        fix="""\
Each call of the jitted step is given a host (NumPy) array: PJRT copies and lays it out on the host, from
pageable memory, before the transfer, every call, while the GPU waits. An array that is the same every step
(a table, a constant, parameters) belongs on the device, put there once:

    table = jax.device_put(table_np, device)          # once, before the loop; pass `table` to the step

For batches that do change, transfer the next one while the current step runs:

    next_batch = jax.device_put(host_batch, device)   # one step ahead; returns immediately

An array that must stay on the host can live in pinned (page-locked) host memory, put there once: each
transfer from it is then a DMA, with no staging copy (JAX's memory kinds, on by default since JAX 0.4.32):

    pinned = jax.sharding.SingleDeviceSharding(device, memory_kind="pinned_host")
    table_host = jax.device_put(table_np, pinned)     # once, before the loop
    table = jax.device_put(table_host, device)        # each step: pinned -> device""",
                        docs=(L.JAX_DEVICE_PUT, L.CUDA_PINNED),
                    ),
                ),
                (
                    "pytorch:no_dataloader",
                    Idiom(
                        fix_summary="Keep unchanging tensors on the GPU; pin the rest once (.pin_memory()), copy non_blocking=True.",
                        fix="""\
These copies read or write pageable host memory: the driver stages them through a pinned bounce buffer,
at a fraction of the link's rate, and the copy blocks the host. No DataLoader runs in this trace: the copied
tensors are the program's own. A tensor that does not change between steps belongs on the GPU, copied once;
the others can live in pinned memory, allocated once and refilled, and copy asynchronously:

    table = table.to("cuda")                                  # once, before the loop, if it does not change
    host_buf = torch.empty(shape, dtype=dtype, pin_memory=True)   # once; or x = x.pin_memory()
    host_buf.copy_(next_batch)                                # each step, on the host
    x = host_buf.to("cuda", non_blocking=True)                # asynchronous from pinned memory""",
                        docs=(L.TORCH_PINNED,),
                    ),
                ),
            ),
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
                docs=(L.JAX_DEVICE_PUT, L.CUDA_BEST_PRACTICES),
            ),
        ),
        "transfer.wide_input_copies": Entry(
            category="transfer",
            title="Image batches cross to the GPU as 32-bit numbers",
            fix_summary="Send the images as uint8 and cast them on the GPU: 4× fewer bytes per copy.",
            fix="""\
The batch copied to the GPU is image-shaped and 32-bit, while image pixels are 8-bit at the source: the
host widens them before the copy, so every copy moves 4× the bytes it needs. Keep them uint8 through the
pipeline and convert on the GPU, inside the step:

    ds = ds.map(lambda image, label: (tf.io.decode_jpeg(image), label))   # uint8; no tf.cast here
    @tf.function
    def train_step(images, labels):
        images = tf.cast(images, tf.float32) / 255.0                     # on the GPU
        ...""",
            docs=(L.TF_DATA_PERFORMANCE, L.CUDA_BEST_PRACTICES),
            jax=Idiom(
                fix_summary="Send the images as uint8 and cast them inside the jitted step: 4× fewer bytes per copy.",
                fix="""\
The batch copied to the device is image-shaped and 32-bit, while image pixels are 8-bit at the source: the
host widens them (astype(np.float32)) before the copy, so every copy moves 4× the bytes it needs. Keep
them uint8 on the host and convert inside the compiled step:

    batch = {"image": images_uint8, "label": labels}        # no .astype(np.float32) in the loader
    @jax.jit
    def train_step(state, batch):
        images = batch["image"].astype(jnp.float32) / 255.0   # on the device, fused into the first layer
        ...""",
                docs=(L.JAX_DEVICE_PUT, L.CUDA_BEST_PRACTICES),
            ),
            pytorch=Idiom(
                fix_summary="Send the images as uint8 and convert on the GPU: 4× fewer bytes per copy.",
                fix="""\
The batch copied to the GPU is image-shaped and 32-bit, while pixels are 8-bit at the source: every copy
moves 4× the bytes it needs. Keep uint8 tensors in the DataLoader (no ToTensor()/float() there) and convert
after the copy:

    images = images.cuda(non_blocking=True).float().div_(255)""",
                docs=(L.TORCH_PINNED,),
            ),
        ),
        "transfer.input_copy_in_step": Entry(
            category="transfer",
            title="Input copies run inside the step while no GPU computes",
            fix_summary="Copy the next batch during the current step: tf.data prefetch_to_device.",
            fix="""\
The batch is copied to the GPU when the step starts and the GPU waits for it: nothing copies it ahead.
Let tf.data put the next batch on the GPU while the current step runs:

    ds = ds.prefetch(tf.data.AUTOTUNE)
    ds = ds.apply(tf.data.experimental.prefetch_to_device("/gpu:0"))   # last stage, single GPU
    # tf.distribute: dist_ds = strategy.experimental_distribute_dataset(ds) prefetches to every replica

Send one batched tensor per input rather than several pieces per step.""",
            docs=(L.TF_DATA_PERFORMANCE, L.TF_DISTRIBUTED),
            jax=Idiom(
                fix_summary="Put the next batch on the device during the current step (prefetch_to_device, "
                "device_put ahead).",
                fix="""\
The batch is transferred when the step starts and the device waits for it: nothing transfers it ahead.
Keep one or two batches in flight:

    batches = flax.jax_utils.prefetch_to_device(host_batches, size=2)    # or, by hand:
    next_batch = jax.device_put(next(host_batches), sharding)             # issued before step n runs
    state, metrics = train_step(state, batch)

Send one pytree per step (stack the pieces with np.stack first) rather than several transfers.""",
                docs=(L.JAX_DEVICE_PUT,),
            ),
            pytorch=Idiom(
                fix_summary="Copy the next batch on a side stream during the current step (pin_memory, "
                "non_blocking=True).",
                fix="""\
The batch is copied when the step starts and the GPU waits for it. Copy from pinned memory asynchronously
and ahead: DataLoader(..., pin_memory=True), x.cuda(non_blocking=True) for batch n+1 issued before step n
(a prefetcher on a torch.cuda.Stream), and one collated tensor per input.""",
                docs=(L.TORCH_PINNED,),
            ),
            variants=(
                (
                    "jax:pinned",
                    Idiom(
                        fix_summary="device_put unchanging arrays once, before the loop; changing batches one step "
                        "ahead.",
                        fix="""\
The copies come from pinned host memory already, so the memory is not the fix: the device waits for them
because each is issued when the step needs its data. What is left:

    # an array that is the same every step (a table, constants): put it on the device once, before the loop
    table = jax.device_put(table_host, device)          # pass `table` to the jitted step
    # a batch that changes: transfer batch n+1 while step n runs
    next_batch = jax.device_put(next(host_batches), device)   # returns at once; step n runs meanwhile
    state, metrics = train_step(state, batch)
    # or: batches = flax.jax_utils.prefetch_to_device(host_batches, size=2)""",
                        docs=(L.JAX_DEVICE_PUT,),
                    ),
                ),
                (
                    "pytorch:pinned",
                    Idiom(
                        fix_summary="Pinned already: copy the next batch ahead on a side stream, or keep unchanging data on the "
                        "GPU.",
                        fix="""\
The copies come from pinned memory already (Memcpy HtoD (Pinned -> Device)), so pin_memory is not the fix:
the GPU waits for them because each is issued when the step needs its data. What is left:

    # data that is the same every step (a table, constants): copy it once, before the loop
    table = table.to("cuda")
    # data that changes: issue batch n+1's copy before step n's compute, on a side stream
    copy_stream = torch.cuda.Stream()
    with torch.cuda.stream(copy_stream):
        next_x = next_cpu_x.to("cuda", non_blocking=True)
    ...                                                   # step n runs meanwhile
    torch.cuda.current_stream().wait_stream(copy_stream); next_x.record_stream(torch.cuda.current_stream())""",
                        docs=(L.TORCH_PINNED,),
                    ),
                ),
            ),
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
                docs=(L.CUDA_BEST_PRACTICES, L.JAX_DEVICE_PUT),
            ),
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
                docs=(L.CUDA_PINNED, L.JAX_DEVICE_PUT),
            ),
            pytorch=Idiom(
                fix_summary="Use pinned memory and larger contiguous copies; check the GPU's PCIe link.",
                fix="""\
Large copies should reach most of the PCIe bandwidth; these do not. Usual causes: pageable memory (see
transfer.pageable_memory), non-contiguous tensors (.contiguous() before .cuda()), several GPUs on one PCIe
switch, or a slot with fewer lanes (nvidia-smi -q | grep -A3 "Link Width"). Copy one contiguous, pinned
batch per step with non_blocking=True.""",
                docs=(L.TORCH_PINNED,),
            ),
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
                docs=(L.JAX_PROFILING,),
            ),
        ),
    },
)
