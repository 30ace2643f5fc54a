"""Transfer findings: pageable, synchronous, small or slow copies between host and GPU."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from tb_gpu_advisor.analysis.input_dtypes import eight_bit_source_events
from tb_gpu_advisor.analysis.idle_attribution import HOST_CAUSES
from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Entry, Idiom, register
from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import Evidence, Finding, estimated, grade, ladder, limit
from tb_gpu_advisor.findings.thresholds import (
    INPUT_HIGH_PCT,
    INPUT_MEDIUM_PCT,
    LARGE_COPY_BYTES,
    LOW_BANDWIDTH_FRACTION,
    MANY_INPUT_COPIES_PER_STEP,
    MODELED_HIGH_PCT,
    MODELED_LOW_PCT,
    MODELED_MEDIUM_PCT,
    PCIE_GBPS_BY_CC,
    SMALL_COPIES_MIN_PER_STEP,
    SMALL_COPY_BYTES,
    SYNC_GAP_MIN_US,
)
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.host import HOST_STAGING_TAG
from tb_gpu_advisor.model.trace import ActivityKind, CopyDirection
from tb_gpu_advisor.whatif import transfer as whatif_transfer
from tb_gpu_advisor.whatif.estimate import model as whatif_model
from tb_gpu_advisor.report.units import size_bytes

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.findings.context import Context
    from tb_gpu_advisor.model.intervals import Intervals


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
            pytorch=Idiom(
                fix_summary="Pin host memory (DataLoader pin_memory=True) and copy with non_blocking=True.",
                fix="""\
These copies read or write pageable host memory: the driver stages them through a pinned bounce buffer,
which halves bandwidth and makes them synchronous, so they cannot overlap compute:

    loader = DataLoader(dataset, ..., pin_memory=True)
    x = x.cuda(non_blocking=True)             # asynchronous from pinned memory""",
                docs=(L.TORCH_PINNED,),
            ),
            variants=(
                (
                    "jax:host_staging",
                    Idiom(
                        fix_summary="device_put arrays that do not change once, before the loop; prefetch the others "
                        "one step ahead.",
                        fix="""\
Each call of the jitted step is given a host (NumPy) array: PJRT copies and lays it out on the host, from
pageable memory, before the transfer, every call, while the GPU waits. An array that is the same every step
(a table, a constant, parameters) belongs on the device, put there once:

    table = jax.device_put(table_np, device)          # once, before the loop; pass `table` to the step

For batches that do change, transfer the next one while the current step runs, from pinned host memory
where the JAX version supports it:

    next_batch = jax.device_put(host_batch, device)   # one step ahead; returns immediately
    # pinned staging: jax.device_put(x, jax.sharding.SingleDeviceSharding(device, memory_kind="pinned_host"))""",
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
            pytorch=Idiom(
                fix_summary="Copy asynchronously from pinned memory: tensor.to('cuda', non_blocking=True).",
                fix="""\
These copies were issued synchronously: the host thread stops until the copy ends and cannot launch more
work meanwhile. Use pinned memory (DataLoader pin_memory=True) and x.to("cuda", non_blocking=True), and do
not create tensors from NumPy inside the step (torch.tensor(array).cuda()); create device tensors once.""",
                docs=(L.TORCH_PINNED,),
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
            pytorch=Idiom(
                fix_summary="Batch small copies into one: collate on the host, one .cuda(non_blocking=True) per step.",
                fix="""\
Each step issues many copies below 64 KB; each pays the fixed cost of a copy for little data. Collate the
inputs into a few batched tensors in the DataLoader, keep constants on the GPU instead of re-sending them,
and read metrics back together (torch.stack(...).cpu() every N steps).""",
                docs=(L.TORCH_PINNED,),
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
            pytorch=Idiom(
                fix_summary="Stop reading values back every step: no .item()/.cpu()/print(tensor) inside the loop.",
                fix="""\
Inside the step the host copies a value back from the GPU and the GPU then idles: the loop waited for that
value (loss.item(), tensor.cpu(), printing, a Python `if` on a CUDA tensor). Read rarely:

    if step % 100 == 0:
        print(loss.item())                   # not every step
    # torch.cuda.set_sync_debug_mode("warn") reports every synchronizing call""",
                docs=(L.TORCH_PERFORMANCE,),
            ),
        ),
    },
)


HOST_SIDE = (CopyDirection.H2D, CopyDirection.D2H)


def _copies(ctx, predicate, directions=HOST_SIDE):
    """[(gpu, mask)] of copies in `directions` whose CopyDetails satisfy `predicate`."""
    found = []
    for gpu in ctx.active_gpus:
        activity = gpu.activity
        chosen = np.array([bool(predicate(c)) for c in activity.copies] + [False], dtype=bool)
        mask = (
            (activity.kind == ActivityKind.MEMCPY)
            & chosen[activity.copy_id]
            & np.isin(activity.copy_direction, [int(d) for d in directions])
        )
        found.append((gpu, mask))
    return found


def _summarize(ctx, selected):
    """count, bytes, busy ps, exposed ps (inside the window, while no GPU computes) of selected copies."""
    count = size = busy = 0
    spans = []
    for gpu, mask in selected:
        activity = gpu.activity
        count += int(mask.sum())
        size += sum(activity.copies[i].size_bytes for i in activity.copy_id[mask])
        busy += int(activity.duration_ps[mask].sum())
        spans.append(intervals.union(activity.start_ps[mask], activity.end_ps[mask]))
    exposed = ctx.exposed(intervals.union_all(*spans))
    return count, size, busy, ctx.in_window_ps(exposed), exposed


def _copy_finding(ctx, finding_id, summary, exposed_ps, exposed, metrics, crossed, basis):
    exposed_ms = ms(exposed_ps)
    share = ctx.share_pct(exposed_ms)
    severity = grade(share, MODELED_HIGH_PCT, MODELED_MEDIUM_PCT, MODELED_LOW_PCT)
    if severity is None:
        return None
    return Finding(
        id=finding_id,
        severity=severity,
        summary=summary,
        evidence=Evidence(
            {**metrics, "exposed_ms": exposed_ms, "exposed_pct": share},
            crossed,
            {"time_ranges_ms": ctx.longest_ranges_ms(exposed), "steps": ctx.steps_overlapping(exposed)},
        ),
        recoverable_ms=exposed_ms,
        window_ms=ctx.window_ms,
        speedup_basis=basis,
    )


def _pinned_rate_gbps(ctx):
    """The best rate of large host-side copies with no pageable side in this trace (None without such copies)."""
    sizes, durations = [], []
    for gpu, mask in _copies(ctx, lambda c: c.has_pageable_side is False and c.size_bytes >= LARGE_COPY_BYTES):
        activity = gpu.activity
        sizes.extend(activity.copies[i].size_bytes for i in activity.copy_id[mask])
        durations.extend(int(d) for d in activity.duration_ps[mask])
    return whatif_transfer.best_rate_gbps(sizes, durations)


def pageable_memory(ctx: Context) -> Finding | None:
    """Host-side copies from or to pageable memory (only traces that record memory kinds). The estimate is the
    ceiling of pinning and overlapping them (whatif.transfer.overlapped); in PyTorch, whose fix pins them, the
    model of pinning with that ceiling in its basis (whatif.transfer.pinned_then_overlapped)."""
    count, size, busy, exposed_ps, exposed = _summarize(ctx, _copies(ctx, lambda c: c.has_pageable_side))
    if not count:
        return _host_staging(ctx)
    finding = _copy_finding(
        ctx,
        "transfer.pageable_memory",
        f"{count:,} copies ({size_bytes(size)}) use pageable host memory; they run while no GPU computes "
        f"for {ctx.time_text(ms(exposed_ps))}.",
        exposed_ps,
        exposed,
        {"pageable_copies": count, "pageable_bytes": size, "pageable_copy_ms": ms(busy)},
        limit("pageable_copies", count, 0),
        "upper bound: pinned, asynchronous copies fully overlapped with compute",
    )
    if finding is None:
        return None
    # TensorFlow's and JAX's fixes prefetch to the device, overlapping the copies with compute: their ceiling is
    # all exposed copy time removed, with the faster-copy model in the basis. PyTorch's pins the memory
    # (pin_memory, non_blocking): the copy that feeds a step still waits in its stream's order, so the model of
    # pinning is the estimate and the overlap ceiling (a copy stream of its own) goes in the basis.
    cc = ctx.compute_capability
    copies = whatif_transfer.Copies(size, busy / 1e9, exposed_ps / 1e9)
    faster = whatif_transfer.pinned(ctx.window_ms, copies, _pinned_rate_gbps(ctx), _link_gbps(cc) if cc else None)
    if ctx.framework.name == "pytorch":
        if not ctx.has_dataloader:
            finding = replace(finding, condition="no_dataloader")
        return estimated(finding, whatif_transfer.pinned_then_overlapped(ctx.window_ms, copies, faster))
    return estimated(finding, whatif_transfer.overlapped(ctx.window_ms, copies, faster))


def _host_staging(ctx):
    """JAX given a NumPy batch each step: PJRT stages it on the host (`H2D Dispatch`: a copy and relayout of
    pageable memory) before the copy, while the GPU idles. Bound: that idle removed by putting the batch on the
    device ahead of the step."""
    if not ctx.framework.is_jax or not ctx.has_gpu:
        return None
    staging = intervals.intersect(ctx.host.tagged.get(HOST_STAGING_TAG, intervals.EMPTY), ctx.window)
    idle = intervals.subtract(staging, ctx.gpu_busy)
    idle_ps = ctx.in_window_ps(idle)
    if not len(staging) or idle_ps <= 0:
        return None
    count, size, _, _, _ = _summarize(ctx, _copies(ctx, lambda c: True, directions=(CopyDirection.H2D,)))
    finding = _copy_finding(
        ctx,
        "transfer.pageable_memory",
        f"The host stages each batch for the device from host memory (PJRT's H2D Dispatch, "
        f"{ctx.time_text(ms(staging.total_ps))}) while the GPU idles {ctx.time_text(ms(idle_ps))}; "
        f"{count:,} host-to-device copies ({size_bytes(size)}) follow.",
        idle_ps,
        idle,
        {
            "host_staging_ms": ms(staging.total_ps),
            "host_staging_events": len(staging),
            "h2d_copies": count,
            "h2d_bytes": size,
        },
        limit("host_staging_idle_ms", ms(idle_ps), 0),
        "upper bound: the GPU idle while the host stages batches removed, the batch put on the device ahead of the "
        "step",
    )
    return None if finding is None else replace(finding, condition="host_staging")


def sync_copies(ctx: Context) -> None:
    """Synchronous copies that are not pageable (pageable ones are covered by pageable_memory)."""
    selected = _copies(ctx, lambda c: c.is_async is False and not c.has_pageable_side)
    count, size, busy, exposed_ps, exposed = _summarize(ctx, selected)
    if not count:
        return None
    return _copy_finding(
        ctx,
        "transfer.sync_copies",
        f"{count:,} synchronous copies ({size_bytes(size)}) block the host; they run while no GPU "
        f"computes for {ctx.time_text(ms(exposed_ps))}.",
        exposed_ps,
        exposed,
        {"sync_copies": count, "sync_bytes": size, "sync_copy_ms": ms(busy)},
        limit("sync_copies", count, 0),
        "upper bound: asynchronous copies fully overlapped with compute",
    )


def small_copies(ctx: Context) -> None:
    """Many copies below SMALL_COPY_BYTES per step."""
    count, size, busy, exposed_ps, exposed = _summarize(ctx, _copies(ctx, lambda c: c.size_bytes < SMALL_COPY_BYTES))
    per_step = count / ctx.step_count if ctx.step_count else float(count)
    if per_step < SMALL_COPIES_MIN_PER_STEP:
        return None
    return _copy_finding(
        ctx,
        "transfer.small_copies",
        f"{ctx.count_text(count, 'copy', 'copies')} under {SMALL_COPY_BYTES // 1024} KB "
        f"(mean {size / count:,.0f} bytes).",
        exposed_ps,
        exposed,
        {
            "small_copies": count,
            "small_copies_per_step": round(per_step, 1),
            "small_copy_bytes": size,
            "small_copy_ms": ms(busy),
        },
        limit("small_copies_per_step", round(per_step, 1), SMALL_COPIES_MIN_PER_STEP),
        "upper bound: the exposed time of the small copies removed (batched into one)",
    )


def _link_gbps(cc):
    for minimum, gbps in PCIE_GBPS_BY_CC:
        if cc >= minimum:
            return gbps
    return PCIE_GBPS_BY_CC[-1][1]


def low_bandwidth(ctx: Context) -> Finding | None:
    """Large host-to-device copies well below the practical PCIe bandwidth of the GPU's generation; pageable ones
    are left to transfer.pageable_memory, whose staging explains their rate (the link is then not in question)."""
    cc = ctx.compute_capability
    if cc is None:
        return None
    selected = _copies(
        ctx, lambda c: c.size_bytes >= LARGE_COPY_BYTES and not c.has_pageable_side, directions=(CopyDirection.H2D,)
    )
    count, size, busy, exposed_ps, exposed = _summarize(ctx, selected)
    if not count or busy <= 0:
        return None
    achieved = round(size / (busy / 1e12) / 1e9, 3)
    expected = _link_gbps(cc)
    if achieved >= LOW_BANDWIDTH_FRACTION * expected:
        return None
    recoverable_ps = exposed_ps * (1.0 - achieved / expected)
    finding = _copy_finding(
        ctx,
        "transfer.low_bandwidth",
        f"{count:,} large host-to-device copies reach {achieved:.2f} GB/s, under "
        f"{LOW_BANDWIDTH_FRACTION:.0%} of the ~{expected:g} GB/s the link should give.",
        recoverable_ps,
        exposed,
        {"large_copies": count, "large_copy_bytes": size, "achieved_gbps": achieved, "expected_link_gbps": expected},
        limit("achieved_gbps", achieved, round(LOW_BANDWIDTH_FRACTION * expected, 3), "below"),
        "upper bound: the exposed copy time at the link's practical bandwidth",
    )
    return finding


def _count_within(ends_ps: np.ndarray, windows: Intervals) -> int:
    """How many of the instants `ends_ps` fall inside `windows` (all of them without windows)."""
    if not len(windows):
        return len(ends_ps)
    inside = np.searchsorted(windows.start_ps, ends_ps, side="right") - 1
    valid = inside >= 0
    return int(np.sum(valid & (ends_ps <= windows.end_ps[np.maximum(inside, 0)])))


def _gaps_after(gpu, busy, mask, windows):
    """Intervals from the end of each selected copy that left the GPU idle (it ended the GPU's busy block: no
    other stream still ran) to the GPU's next activity (`busy`), clipped to `windows`."""
    ends = gpu.activity.end_ps[mask]
    block = np.minimum(np.searchsorted(busy.end_ps, ends, side="left"), max(len(busy) - 1, 0))
    last = (busy.end_ps[block] == ends) if len(busy) else np.zeros(len(ends), dtype=bool)
    following = block + 1
    has_next = last & (following < len(busy))
    gaps = intervals.union(ends[has_next], busy.start_ps[following[has_next]])
    return intervals.intersect(gaps, windows) if len(windows) else gaps


def _host_late(ctx, gpu):
    """The instants `gpu` idled waiting for the host (analysis.idle_attribution HOST_CAUSES); all of its time when
    the attribution does not cover it."""
    idle = ctx.analysis.idle.by_ordinal(gpu.ordinal) if ctx.analysis.idle is not None else None
    if idle is None:
        return intervals.union([-(2**62)], [2**62])
    return intervals.union_all(*(idle.spans[cause] for cause in HOST_CAUSES))


def d2h_sync_in_step(ctx: Context) -> Finding | None:
    """Device-to-host copies inside steps after which the GPU idles (the host waited for the value)."""
    if not ctx.step_count:
        return None
    worst = (0, 0, None, intervals.EMPTY)
    for gpu, mask in _copies(ctx, lambda c: True, directions=(CopyDirection.D2H,)):
        windows = ctx.gpu_windows(gpu)
        gaps = _gaps_after(gpu, ctx.busy_by_gpu[gpu.ordinal], mask, windows)
        gaps = intervals.subtract(intervals.subtract(gaps, ctx.host.input_waits), ctx.explained_host_time)
        # Only the host's lateness (analysis.idle_attribution): where the next work was queued before the gap,
        # the GPU waited on the device side, not for the host that read the value.
        gaps = intervals.intersect(gaps, _host_late(ctx, gpu))
        long = (gaps.end_ps - gaps.start_ps) > SYNC_GAP_MIN_US * 1e6
        gaps = intervals.union(gaps.start_ps[long], gaps.end_ps[long])
        if gaps.total_ps > worst[0]:
            worst = (gaps.total_ps, _count_within(gpu.activity.end_ps[mask], windows), gpu.name, gaps)
    gap_ps, d2h_count, device, gaps = worst
    if gap_ps <= 0:
        return None
    syncs = ctx.host.op_totals.get("cuStreamSynchronize", (0, 0))
    reads = ctx.count_text(d2h_count, "device-to-host copy", "device-to-host copies")
    return _copy_finding(
        ctx,
        "transfer.d2h_sync_in_step",
        f"After its device-to-host copies ({reads}) the GPU idles {ms(gap_ps):.2f} ms in total "
        f"({ctx.time_text(ms(gap_ps))}) until the host sends more work.",
        gap_ps,
        gaps,
        {
            "d2h_copies": d2h_count,
            "d2h_copies_per_step": round(d2h_count / ctx.step_count, 1),
            "stalls_after_d2h": len(gaps),
            "stall_ms": ms(gap_ps),
            "host_stream_synchronize_calls": syncs[0],
            "host_stream_synchronize_ms": ms(syncs[1]),
        },
        limit("stalls_after_d2h", len(gaps), 0, gap_min_us=SYNC_GAP_MIN_US),
        "upper bound: the step time without the GPU idle that follows device-to-host reads",
    )


def _spans_exposed_ps(ctx, spans):
    exposed = ctx.exposed(intervals.union([a for a, _ in spans], [b for _, b in spans]))
    return ctx.in_window_ps(exposed), exposed


def wide_input_copies(ctx: Context) -> Finding | None:
    """Host-to-device copies whose size is an image-shaped 32-bit input of a compiled program (XLA HLO):
    8-bit pixels widened on the host (analysis.input_dtypes). Model: copy time scales with bytes, so the exposed
    copy time shrinks by 3/4."""
    inputs = ctx.analysis.wide_inputs
    if not ctx.has_gpu or not inputs:
        return None
    spans = [span for item in inputs for span in item.spans]
    exposed_ps, exposed = _spans_exposed_ps(ctx, spans)
    saved_ps = exposed_ps * inputs[0].saved_fraction
    sources = eight_bit_source_events(ctx.host.op_totals)
    certainty = "high" if sources else "medium"
    top = inputs[0]
    shape = "x".join(str(d) for d in top.shape)
    note = (
        f"{top.parameter} of {top.module} is {top.dtype}[{shape}] ({size_bytes(top.bytes)}), and "
        f"{top.copies} host-to-device copies have exactly that size. "
    )
    note += (
        f"The host shows 8-bit image work ({sources[0][:60]}), so the data is narrower at the source."
        if sources
        else "Image pixels are 8-bit at the source in almost every dataset; check what your "
        "loader reads before acting on this."
    )
    finding = _copy_finding(
        ctx,
        "transfer.wide_input_copies",
        f"{sum(i.copies for i in inputs):,} image batches cross to the GPU as {top.dtype} ({top.dtype}[{shape}], "
        f"{size_bytes(top.bytes)} each); uint8 would be a quarter of the bytes.",
        saved_ps,
        exposed,
        {
            "wide_copies": sum(i.copies for i in inputs),
            "wide_copy_bytes": sum(i.bytes * i.copies for i in inputs),
            "wide_copy_ms": ms(sum(i.copy_ps for i in inputs)),
            "wide_copy_exposed_ms": ms(exposed_ps),
            "certainty": certainty,
        },
        limit("input_dtype_bits", 32, 8),
        "model: the exposed copy time scales with the bytes, a quarter of them in uint8",
    )
    if finding is None:
        return None
    metrics = dict(finding.evidence.metrics)
    metrics["saved_ms"], metrics["saved_pct"] = metrics.pop("exposed_ms"), metrics.pop("exposed_pct")
    finding = replace(
        finding,
        fix_note=note,
        evidence=replace(
            finding.evidence,
            metrics=metrics,
            pointers={
                **finding.evidence.pointers,
                "inputs": [
                    {
                        "parameter": i.parameter,
                        "program": i.module,
                        "dtype": i.dtype,
                        "shape": list(i.shape),
                        "bytes": i.bytes,
                        "copies": i.copies,
                    }
                    for i in inputs[:5]
                ],
                "host_ops": sources[:5],
            },
        ),
    )
    return estimated(finding, whatif_model(ctx.window_ms, ctx.window_ms - ms(saved_ps), finding.speedup_basis))


def input_copy_in_step(ctx: Context) -> Finding | None:
    """Host-to-device copies of 64 KiB or more, asynchronous and not pageable (those rules cover the rest),
    running inside the steps while no GPU computes: nothing copied the batch ahead. The GPU waits for its input,
    so the input ladder grades it (no low level: restructuring the feed for under 5% is not advised)."""
    if not ctx.step_count:
        return None
    selected = _copies(
        ctx,
        lambda c: c.size_bytes >= SMALL_COPY_BYTES and c.is_async is not False and not c.has_pageable_side,
        directions=(CopyDirection.H2D,),
    )
    count, size, busy, exposed_ps, exposed = _summarize(ctx, selected)
    share = ctx.share_pct(ms(exposed_ps))
    severity = grade(share, INPUT_HIGH_PCT, INPUT_MEDIUM_PCT)
    if not count or severity is None:
        return None
    per_step = round(count / ctx.step_count, 1)
    # From pinned memory already (PyTorch's pin_memory): the fix left is when the copy is issued, not the memory.
    pinned = all(
        gpu.activity.copies[i].src_kind == "pinned" for gpu, mask in selected for i in gpu.activity.copy_id[mask]
    )
    note = (
        f"Each step sends {per_step:g} separate copies: stacked into one batched copy per input they would "
        "also pay the per-copy cost once."
        if per_step >= MANY_INPUT_COPIES_PER_STEP
        else ""
    )
    return Finding(
        id="transfer.input_copy_in_step",
        severity=severity,
        summary=f"The GPU waits {ctx.time_text(ms(exposed_ps))} ({share:.1f}% {ctx.of_the_step}) for "
        f"{ctx.count_text(count, 'host-to-device copy', 'host-to-device copies')} "
        f"({size_bytes(size / count)} on average).",
        evidence=Evidence(
            {
                "input_copies": count,
                "input_copies_per_step": per_step,
                "input_copy_bytes": size,
                "input_copy_ms": ms(busy),
                "exposed_ms": ms(exposed_ps),
                "exposed_pct": share,
            },
            ladder("exposed_pct", share, INPUT_HIGH_PCT, INPUT_MEDIUM_PCT),
            {"time_ranges_ms": ctx.longest_ranges_ms(exposed), "steps": ctx.steps_overlapping(exposed)},
        ),
        recoverable_ms=ms(exposed_ps),
        window_ms=ctx.window_ms,
        fix_note=note,
        condition="pinned" if pinned else None,
        speedup_basis="upper bound: the copies overlapped with the previous step's compute, none of them exposed",
    )


RULES = (
    pageable_memory,
    input_copy_in_step,
    wide_input_copies,
    sync_copies,
    small_copies,
    low_bandwidth,
    d2h_sync_in_step,
)
