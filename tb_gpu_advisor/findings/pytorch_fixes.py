"""PyTorch's wording of shared findings: the title, fix and docs shown instead of the TensorFlow/JAX text when
the trace is PyTorch's (summary.framework "pytorch"); ids, numbers and severities are the rules' own."""

from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Idiom, Wording, register_variants
from tb_gpu_advisor.findings.pytorch_idioms import HOST_WARMUP, LAUNCH_WARMUP, NOT_ALLREDUCE, OPTIMIZER_KERNELS

VARIANTS = register_variants(
    "pytorch",
    {
        "transfer.d2h_sync_in_step": Wording(
            fix_summary="Stop reading tensor values every step: no .item()/.cpu()/.tolist() inside the loop.",
            fix="""\
Inside the step the host copies a value back from the GPU and the GPU then idles: the program waited for
that value (loss.item(), tensor.cpu(), .tolist(), .numpy(), print(tensor), Python `if` on a tensor).
Keep values on the GPU and read them rarely:

    running_loss += loss.detach()            # no copy, no wait
    if step % 100 == 0:
        print(running_loss.item() / 100)     # one read every 100 steps
        running_loss.zero_()

    torch.cuda.set_sync_debug_mode("warn")   # while debugging: warns where the step synchronizes""",
            docs=(L.TORCH_SYNC_DEBUG, L.TORCH_PIN_MEMORY),
        ),
        "input.gpu_waits_for_input": Wording(
            title="The GPU waits for the DataLoader",
            fix_summary="Load in worker processes: DataLoader(num_workers=N, pin_memory=True, persistent_workers=True).",
            fix="""\
The training step waits in the DataLoader's __next__ (enumerate(DataLoader)#...) while the GPU has nothing
to do: batches are made more slowly than the GPU consumes them. Make them in parallel and ahead of time:

    loader = torch.utils.data.DataLoader(
        dataset, batch_size=batch_size, shuffle=True,
        num_workers=8,               # start near the CPU cores per GPU; 0 loads in the training process
        pin_memory=True,             # page-locked batches copy to the GPU asynchronously
        persistent_workers=True,     # keep workers between epochs
        prefetch_factor=4)           # batches each worker keeps ready
    for x, y in loader:
        x, y = x.to("cuda", non_blocking=True), y.to("cuda", non_blocking=True)

Time the loader alone (iterate it without the model) to know its ceiling. If it is still slower than the
step, move decoding and augmentation to the GPU (torchvision.transforms.v2 on tensors, NVIDIA DALI) or do
them once offline.""",
            docs=(L.TORCH_DATA, L.TORCH_TUNING),
        ),
        "host.gpu_idle_host_busy": Wording(
            fix_summary="Take Python work out of the step, torch.compile the model, avoid host syncs in the step.",
            fix="""\
Between kernels the host runs Python, the autograd engine or runtime calls, and the GPU has nothing queued.
Shorten the host's part of each step:

    model = torch.compile(model)            # fuses ops, removes most per-op Python and dispatcher overhead
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, fused=True)   # one kernel for all parameters

Move logging, metric computation and data reshaping out of the step or onto the GPU, and avoid reading
tensor values on the host inside the step (.item(), .cpu(): each one drains the GPU's queue).""",
            docs=(L.TORCH_COMPILE, L.TORCH_TUNING),
            variants=(
                (
                    "pytorch:optimizer_fused",
                    Idiom(
                        fix_summary="Take Python work out of the step, torch.compile the model, avoid host syncs in the step.",
                        fix="""\
Between kernels the host runs Python, the autograd engine or runtime calls, and the GPU has nothing queued.
The optimizer is fused or foreach already (the trace shows its multi-tensor kernels). Shorten the rest of
the host's part of each step:

    model = torch.compile(model)            # fuses ops, removes most per-op Python and dispatcher overhead

Move logging, metric computation and data reshaping out of the step or onto the GPU, and avoid reading
tensor values on the host inside the step (.item(), .cpu(): each one drains the GPU's queue).""",
                        docs=(L.TORCH_COMPILE, L.TORCH_TUNING),
                    ),
                ),
                ("pytorch:warmup", HOST_WARMUP),
            ),
        ),
        "launch.gpu_starved_by_launches": Wording(
            fix_summary='torch.compile(model, mode="reduce-overhead") replays the step as CUDA graphs.',
            fix="""\
Kernels finish faster than the host can launch the next ones: the GPU waits on cudaLaunchKernel. Launch
fewer, larger kernels, or replay a recorded step with one launch:

    model = torch.compile(model, mode="reduce-overhead")   # fusion plus CUDA graphs (static shapes)

    # by hand: record once, replay every step (inputs copied into static tensors)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = model(static_in)
    static_in.copy_(batch); graph.replay()

A larger batch also does more work per launch. Fused optimizers (fused=True) remove hundreds of small
launches per step.""",
            docs=(L.TORCH_COMPILE, L.TORCH_CUDA_GRAPHS, L.CUDA_GRAPHS),
            variants=(
                (
                    "pytorch:optimizer_fused",
                    Idiom(
                        fix_summary='torch.compile(model, mode="reduce-overhead") replays the step as CUDA graphs.',
                        fix="""\
Kernels finish faster than the host can launch the next ones: the GPU waits on cudaLaunchKernel. The
optimizer is fused or foreach already; launch fewer, larger kernels in the rest of the step, or replay a
recorded step with one launch:

    model = torch.compile(model, mode="reduce-overhead")   # fusion plus CUDA graphs (static shapes)

    # by hand: record once, replay every step (inputs copied into static tensors)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = model(static_in)
    static_in.copy_(batch); graph.replay()

A larger batch also does more work per launch.""",
                        docs=(L.TORCH_COMPILE, L.TORCH_CUDA_GRAPHS, L.CUDA_GRAPHS),
                    ),
                ),
                (
                    "pytorch:rocm",
                    Idiom(
                        fix_summary='torch.compile(model, mode="reduce-overhead") replays the step as HIP graphs on ROCm.',
                        fix="""\
Kernels finish faster than the host can launch the next ones: the GPU waits on hipLaunchKernel. Launch
fewer, larger kernels, or replay a recorded step with one launch. On ROCm, PyTorch's torch.cuda graph API
records HIP graphs:

    model = torch.compile(model, mode="reduce-overhead")   # fusion plus HIP graphs (static shapes)

    graph = torch.cuda.CUDAGraph()          # a HIP graph on ROCm builds of PyTorch
    with torch.cuda.graph(graph):
        static_out = model(static_in)
    static_in.copy_(batch); graph.replay()

A larger batch also does more work per launch. Fused optimizers (fused=True) remove hundreds of small
launches per step.""",
                        docs=(L.TORCH_COMPILE, L.TORCH_CUDA_GRAPHS),
                    ),
                ),
                ("pytorch:warmup", LAUNCH_WARMUP),
            ),
        ),
        "launch.tiny_kernels": Wording(
            title="Most kernels are shorter than their launch",
            fix_summary="torch.compile the model to fuse small ops; use fused optimizers; raise the batch size.",
            fix="""\
Most kernels run for less time than their launch call takes, so launch overhead sets the pace. Fuse them:

    model = torch.compile(model)                    # element-wise chains become single Triton kernels
    optimizer = torch.optim.AdamW(params, fused=True)   # or foreach=True

or give each kernel more work with a larger batch.""",
            docs=(L.TORCH_COMPILE, L.TORCH_TUNING),
            variants=(
                (
                    "pytorch:optimizer_fused",
                    Idiom(
                        fix_summary="torch.compile the model to fuse small ops; raise the batch size.",
                        fix="""\
Most kernels run for less time than their launch call takes, so launch overhead sets the pace. The
optimizer is fused or foreach already; fuse the rest of the step:

    model = torch.compile(model)                    # element-wise chains become single Triton kernels

or give each kernel more work with a larger batch.""",
                        docs=(L.TORCH_COMPILE, L.TORCH_TUNING),
                    ),
                ),
                ("pytorch:optimizer_kernels", OPTIMIZER_KERNELS),
            ),
        ),
        "fusion.elementwise_kernels": Wording(
            title="Many small element-wise kernels are not fused",
            fix_summary="torch.compile(model) fuses chains of element-wise ops into single kernels.",
            fix="""\
Element-wise kernels (add, mul, activation, normalization pieces, optimizer updates) take a large share of
GPU time; each reads and writes its tensors from memory. torch.compile fuses chains of them:

    model = torch.compile(model)
    optimizer = torch.optim.AdamW(model.parameters(), fused=True)

The first steps after compiling are slow (compilation); compare steady-state step times.""",
            docs=(L.TORCH_COMPILE, L.TORCH_TUNING),
            variants=(
                (
                    "pytorch:optimizer_fused",
                    Idiom(
                        fix_summary="torch.compile(model) fuses chains of element-wise ops into single kernels.",
                        fix="""\
Element-wise kernels (add, mul, activation, normalization pieces) take a large share of GPU time; each
reads and writes its tensors from memory. The optimizer is fused or foreach already; torch.compile fuses
the model's chains:

    model = torch.compile(model)

The first steps after compiling are slow (compilation); compare steady-state step times.""",
                        docs=(L.TORCH_COMPILE, L.TORCH_TUNING),
                    ),
                ),
                ("pytorch:optimizer_kernels", OPTIMIZER_KERNELS),
            ),
        ),
        "precision.fp32_matmul": Wording(
            fix_summary='Run the forward pass under torch.autocast("cuda", dtype=torch.bfloat16) (float16 before Ampere).',
            fix="""\
Matrix multiplies and convolutions run as 32-bit kernels that do not use Tensor Cores. Autocast runs them in
16 bits and keeps the rest (reductions, loss) in 32:

    with torch.autocast(device_type="cuda", dtype=torch.bfloat16):   # Ampere (cc 8.0) and newer
        loss = loss_fn(model(x), y)
    loss.backward()

    # Volta/Turing (cc 7.x): float16 needs loss scaling
    scaler = torch.amp.GradScaler("cuda")
    with torch.autocast(device_type="cuda", dtype=torch.float16):
        loss = loss_fn(model(x), y)
    scaler.scale(loss).backward(); scaler.step(optimizer); scaler.update()

On Ampere and newer, TF32 makes the remaining 32-bit matmuls use Tensor Cores with no code change:

    torch.backends.cuda.matmul.allow_tf32 = True   # or torch.set_float32_matmul_precision("high")
    torch.backends.cudnn.allow_tf32 = True         # convolutions (already the default)

Keep layer sizes multiples of 8 so Tensor Cores apply.""",
            docs=(L.TORCH_AMP, L.TORCH_TF32, L.NVIDIA_MIXED_PRECISION),
        ),
        "transfer.pageable_memory": Wording(
            title="Host-device copies use pageable memory",
            fix_summary="DataLoader(pin_memory=True) and tensor.to('cuda', non_blocking=True).",
            fix="""\
Copies from pageable host memory are staged through a driver buffer, run at a fraction of the link's
bandwidth and block the host. Pin the batches and copy asynchronously:

    loader = DataLoader(dataset, batch_size=bs, num_workers=8, pin_memory=True)
    for x, y in loader:
        x = x.to("cuda", non_blocking=True)   # asynchronous only from pinned memory
        y = y.to("cuda", non_blocking=True)

For tensors made outside a DataLoader: t = t.pin_memory() once, then .to("cuda", non_blocking=True).""",
            docs=(L.TORCH_PIN_MEMORY, L.CUDA_PINNED),
        ),
        "transfer.sync_copies": Wording(
            title="Copies block the host",
            fix_summary="Copy from pinned memory with non_blocking=True; avoid .cpu()/.item() inside the step.",
            fix="""\
Synchronous copies make the host wait for the copy and for all GPU work queued before it. Host-to-device:
pin the source (DataLoader(pin_memory=True)) and pass non_blocking=True to .to(). Device-to-host: each
.cpu(), .item(), .tolist() or .numpy() is a synchronous copy; keep values on the GPU and read them every N
steps, or copy into a pinned tensor with non_blocking=True and read it after a torch.cuda.Event.""",
            docs=(L.TORCH_PIN_MEMORY, L.TORCH_SYNC_DEBUG),
        ),
        "transfer.small_copies": Wording(
            title="Many small copies",
            fix_summary="Batch small tensors into one copy; create constants on the GPU, not per step from Python.",
            fix="""\
Each copy costs a launch and a fixed latency whatever its size. Copy one stacked tensor instead of many
small ones (torch.stack / torch.cat on the host, then one .to("cuda", non_blocking=True)), create constant
tensors once with device="cuda" instead of torch.tensor(python_value).cuda() every step, and keep
scalars that the step computes on the GPU.""",
            docs=(L.TORCH_PIN_MEMORY, L.TORCH_TUNING),
        ),
        "communication.allreduce_exposed": Wording(
            fix_summary="Tune DDP: bucket_cap_mb, gradient_as_bucket_view=True, static_graph; no_sync() when accumulating.",
            fix="""\
NCCL kernels run while no GPU computes, so every step waits for communication. DDP overlaps the all-reduce
of each gradient bucket with the rest of backward; help it:

    model = torch.nn.parallel.DistributedDataParallel(
        model, device_ids=[local_rank],
        bucket_cap_mb=50,                  # default 25; larger buckets mean fewer, better-overlapped calls
        gradient_as_bucket_view=True,      # gradients live in the buckets: no copy in and out
        static_graph=True)                 # same graph every step: DDP can schedule ahead

With gradient accumulation, skip the all-reduce on all but the last micro-step:

    for i, (x, y) in enumerate(loader):
        context = model.no_sync() if (i + 1) % accum_steps else contextlib.nullcontext()
        with context:
            loss_fn(model(x), y).backward()
        if (i + 1) % accum_steps == 0:
            optimizer.step(); optimizer.zero_grad(set_to_none=True)

bf16 autocast and DDP's bf16 compression hook
(model.register_comm_hook(None, torch.distributed.algorithms.ddp_comm_hooks.default_hooks.bf16_compress_hook))
halve the bytes sent.""",
            docs=(L.TORCH_DDP, L.NCCL_GUIDE),
            variants=(("pytorch:not_allreduce", NOT_ALLREDUCE),),
        ),
        "batch.gpu_underused": Wording(
            fix_summary="Raise the DataLoader batch_size (as memory allows) so fixed per-step costs amortize.",
            fix="""\
The GPU is busy less than half of each step and its kernels are small: per-step overhead costs about as
much as the math. A larger batch does more work per launch and per step:

    loader = DataLoader(dataset, batch_size=2 * batch_size, ...)
    for group in optimizer.param_groups:
        group["lr"] = base_lr * 2          # keep convergence: scale the learning rate (or warm up)

If memory is the limit, bf16 autocast halves activation memory; torch.cuda.max_memory_allocated() tells
the headroom. The estimate is per example (throughput), for a doubled batch.""",
            docs=(L.TORCH_TUNING, L.NVIDIA_DL_PERFORMANCE),
            variants=(
                (
                    "pytorch:no_dataloader",
                    Idiom(
                        fix_summary="Raise the batch size (as memory allows) so fixed per-step costs amortize.",
                        fix="""\
The GPU is busy less than half of each step and its kernels are small: per-step overhead costs about as
much as the math. The trace shows no DataLoader: wherever the loop builds its batches, make them larger:

    batch_size = 2 * batch_size                # where the batch tensors are built or sliced
    for group in optimizer.param_groups:
        group["lr"] = base_lr * 2              # keep convergence: scale the learning rate (or warm up)

If memory is the limit, bf16 autocast halves activation memory; torch.cuda.max_memory_allocated() tells
the headroom. The estimate is per example (throughput), for a doubled batch.""",
                        docs=(L.TORCH_TUNING, L.NVIDIA_DL_PERFORMANCE),
                    ),
                ),
            ),
        ),
    },
)
