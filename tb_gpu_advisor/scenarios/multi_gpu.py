"""Data parallel on 4 GPUs over PCIe: a large float32 all-reduce dominates and one throttled GPU holds the
others inside NCCL; and the fix (balanced GPUs, gradients accumulated over two micro-batches, then all-reduced
in float16 packs that overlap the backward pass)."""

from dataclasses import replace

from tb_gpu_advisor.scenarios.common import BETWEEN_STEPS_US, FIRST_STEP, START_US, new_run
from tb_gpu_advisor.scenarios.devices import A100_PCIE_40GB
from tb_gpu_advisor.scenarios.engine import COMPUTE_STREAM, H2D_STREAM, NCCL_STREAM, memcpy, launch_ops, run_kernel
from tb_gpu_advisor.scenarios.jitter import grid_us, scaled_ops
from tb_gpu_advisor.scenarios.kernels import nccl_all_reduce
from tb_gpu_advisor.scenarios.tf_host import TEXT_MAP_OPS, PrefetchedPipeline
from tb_gpu_advisor.scenarios.training import fetch_loss
from tb_gpu_advisor.scenarios.transformer import encoder_step

STEPS = 3
GPUS = 4
BATCH, SEQ, LAYERS, HIDDEN, HEADS, VOCAB = 16, 256, 2, 2048, 16, 8192
SPEC = A100_PCIE_40GB
RING_GBPS = 8.7  # NCCL ring all-reduce algorithm bandwidth across 4 GPUs on PCIe Gen4 without NVLink
STRAGGLER = 2
STRAGGLER_SLOWDOWN = 1.5  # GPU:2 is power-capped: its SM clock, and so every kernel, is 1.5x slower
ALL_REDUCE = "CollectiveReduceV2:CollectiveReduceV2"


def _phases(ops):
    forward = [op for op in ops if not op.tf_op.startswith(("gradient_tape/", "Adam/"))]
    backward = [op for op in ops if op.tf_op.startswith("gradient_tape/")]
    update = [op for op in ops if op.tf_op.startswith("Adam/")]
    return forward, backward, update


def _slowed(ops, factor):
    return [
        replace(
            op,
            kernels=tuple(
                replace(kernel, duration_us=round(kernel.duration_us * factor * 2) / 2) for kernel in op.kernels
            ),
        )
        for op in ops
    ]


def _build(name, straggler_slowdown, dtype, packs, micro_batches, steps, jitter):
    run = new_run(name, SPEC, hostname="pcie-4gpu-02", gpu_count=GPUS, executor_threads=GPUS)
    process, gpus, executors = run.process, run.gpus, run.executors
    base = encoder_step(SPEC, BATCH, SEQ, LAYERS, HIDDEN, HEADS, "fp16", vocab=VOCAB)
    params = LAYERS * 12 * HIDDEN * HIDDEN + VOCAB * HIDDEN
    grad_bytes = params * (4 if dtype == "f32" else 2)
    comm_us = grad_bytes / (RING_GBPS * 1e3) / packs
    element_us = 160.0
    pipeline = PrefetchedPipeline(process, BATCH * GPUS, element_us, SEQ * 8, workers=8, map_ops=TEXT_MAP_OPS)
    noise = jitter.steps(steps) if jitter is not None else [None] * steps
    t = START_US
    for index, step_noise in enumerate(noise):
        ops, step_comm_us = base, comm_us
        if step_noise is not None:
            ops, step_comm_us = scaled_ops(base, step_noise), comm_us * step_noise.gpu
            pipeline.element_us = grid_us(element_us * step_noise.host)
        replicas = [_phases(_slowed(ops, straggler_slowdown) if gpu == STRAGGLER else ops) for gpu in range(GPUS)]
        t = (
            _step(
                process,
                gpus,
                executors,
                replicas,
                pipeline,
                FIRST_STEP + index,
                t,
                step_comm_us,
                packs,
                dtype,
                micro_batches,
            )
            + BETWEEN_STEPS_US
        )
    return run.builder


def _step(process, gpus, executors, replicas, pipeline, step, start, comm_us, packs, dtype, micro_batches):
    """One data-parallel step: every replica's forward and backward, the all-reduce packs, the update."""
    link = process.new_link()
    call_start = start + 4.0
    element_id = process.new_id()
    got = pipeline.get_next(link, call_start + 32.0, element_id)
    pipeline.build_batch(got + 6.0, element_id)
    host_end, ready_at = [], []
    for gpu, executor, (forward, backward, update) in zip(gpus, executors, replicas):
        t = got + 4.0 + gpu.plane.ordinal * 1.5
        begin = t - 4.0
        t, data = memcpy(
            executor,
            gpu,
            "h2d",
            t,
            micro_batches * BATCH * SEQ * 8,
            3.0,
            src="pinned",
            dst="device",
            is_async=True,
            stream=H2D_STREAM,
        )
        for _ in range(micro_batches):
            t = launch_ops(executor, gpu, forward, t + 1.0, not_before_us=data)
            chunk = -(-len(backward) // packs)
            marks = []
            for first in range(0, len(backward), chunk):
                t = launch_ops(executor, gpu, backward[first : first + chunk], t)
                marks.append((t, gpu.ready(COMPUTE_STREAM)))
        host_end.append((begin, t, update))
        ready_at.append(marks)
    pack_end = 0.0
    for pack in range(packs):
        arrivals = [max(marks[pack][1], gpu.ready(NCCL_STREAM)) for gpu, marks in zip(gpus, ready_at)]
        pack_end = max(max(arrivals), pack_end) + comm_us
        for gpu, executor, marks, arrival in zip(gpus, executors, ready_at, arrivals):
            kernel = nccl_all_reduce(dtype, pack_end - arrival)
            launched = marks[pack][0]
            executor.event(ALL_REDUCE, launched, 9.0)
            run_kernel(
                gpu, kernel, arrival, stream=NCCL_STREAM, launch=(executor, launched + 2.0, 5.0), tf_op=ALL_REDUCE
            )
    last = max(g.ready(NCCL_STREAM) for g in gpus)
    for gpu, executor, (begin, t, update) in zip(gpus, executors, host_end):
        t = launch_ops(executor, gpu, update, t + 10.0, not_before_us=last)
        process.executor(executor, link, begin, t + 1.0)
    call_end = max(end for _, end, _ in host_end) + 12.0
    process.call_function("__inference_train_step_9127", call_start, call_end, link)
    return fetch_loss(process, gpus[0], call_end + 6.0, 4, step, start, gpus=gpus)


def build(steps=STEPS, jitter=None):
    """A 2-layer transformer (hidden 2048) with an 8k-token embedding, 117M parameters, trained with
    `MirroredStrategy` on 4x A100-PCIE-40GB without NVLink, mixed precision, batch 16 per GPU: after the
    backward pass every GPU all-reduces 470 MB of float32 gradients in one NCCL ring (about 54 ms over PCIe)
    while its compute is about 30 ms. GPU:2 is power-capped and computes 1.5x slower, so GPUs 0, 1 and 3 enter
    the all-reduce early and wait inside the NCCL kernel for it.

    Advice: find the straggler (GPU:2: clocks, power cap, thermal throttling, a noisy neighbour), all-reduce
    gradients in float16 and in packs that overlap the backward pass
    (`tf.distribute.experimental.CommunicationOptions(bytes_per_pack=...)`), use NVLink or fewer, larger
    all-reduces, and consider gradient accumulation to sync less often.
    """
    return _build("multi_gpu_straggler", STRAGGLER_SLOWDOWN, "f32", 1, 1, steps, jitter)


def build_fixed(steps=STEPS, jitter=None):
    """The same training with the power cap removed, gradients accumulated over 2 micro-batches of 16 and then
    all-reduced in float16, in 8 packs that start as soon as their part of the last backward pass is done, on
    NCCL's own stream alongside compute: each step does twice the work of the unfixed one in less time."""
    return _build("multi_gpu_straggler_fixed", 1.0, "f16", 8, 2, steps, jitter)
