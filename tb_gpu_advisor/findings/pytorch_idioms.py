"""PyTorch's wording of the findings whose shared text names TensorFlow, JAX or XLA: warm-up captures, exchanges
that are not an all-reduce, occupancy, uneven steps and the GPU environment (a PyTorch run reads only PyTorch)."""

from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Idiom, Wording, register_variants

# The recapture every warm-up idiom ends with: the profiler's schedule skips the first steps.
_STEADY_STATE = """\
    with torch.profiler.profile(
            schedule=torch.profiler.schedule(wait=5, warmup=2, active=10),
            on_trace_ready=torch.profiler.tensorboard_trace_handler(logdir)) as prof:
        for batch in loader:
            train_step(batch)
            prof.step()"""

HOST_WARMUP = Idiom(
    fix_summary="Recapture after warm-up: this host time includes first-use setup (compilation, allocation).",
    fix=f"""\
Warm-up is inside this capture (see the trace confidence): the first steps compile (torch.compile), load
kernels and grow the caching allocator, host work that steady-state steps do not pay. Profile steady-state
steps before changing code:

{_STEADY_STATE}

If the GPU still idles while the host works there, shorten the host's part of each step: torch.compile the
model, keep logging and host syncs (.item(), .cpu()) out of it.""",
    docs=(L.TORCH_PROFILER, L.TORCH_COMPILE),
)

LAUNCH_WARMUP = Idiom(
    fix_summary="Recapture after warm-up: this launch time includes first-use setup (module loading).",
    fix=f"""\
Warm-up is inside this capture (see the trace confidence): a kernel's first launch loads its module and the
first calls create the context and streams, taking milliseconds where a warm launch takes microseconds.
Profile steady-state steps before changing code:

{_STEADY_STATE}

If launch time is still large there, launch fewer kernels: torch.compile(model, mode="reduce-overhead")
fuses the step and replays it as a graph (CUDA graphs on NVIDIA, HIP graphs on ROCm).""",
    docs=(L.TORCH_PROFILER, L.TORCH_CUDA_GRAPHS, L.CUDA_GRAPHS),
)

NOT_ALLREDUCE = Idiom(
    fix_summary="Overlap the send/recv or all-to-all exchanges with compute; capture all ranks to find waits.",
    fix="""\
The collectives that run with no compute beside them are point-to-point or all-to-all exchanges (pipeline
or model parallelism, sharded embedding tables), not DDP's gradient all-reduce, so DDP's settings (bucket
size, gradient compression hooks) do not change them. What helps:

- overlap the exchange of the next batch with this batch's compute: TorchRec's TrainPipelineSparseDist
  overlaps the embedding all-to-all with the dense forward/backward;
- for pipeline parallelism, more micro-batches per step (or an interleaved schedule such as
  torch.distributed.pipelining.ScheduleInterleaved1F1B) shrink the idle bubble;
- profile every rank for the same steps (tensorboard_trace_handler on each rank): a rank waiting in
  send/recv is often waiting for a slower peer.""",
    docs=(L.TORCH_PIPELINING, L.NCCL_GUIDE),
)

# The small kernels a fix is about are the optimizer step's per-parameter ones (FixConditions.with_optimizer_kernels):
# torch.compile(model) compiles the forward and backward, not optimizer.step(), so the fix is the optimizer's.
OPTIMIZER_KERNELS = Idiom(
    fix_summary="Fuse the optimizer, not the model: fused=True (Adam, AdamW, SGD) or foreach=True.",
    fix="""\
Most of these small kernels are launched by the optimizer step, one or more per parameter (a for-loop
optimizer: add_, mul_, addcmul_, sqrt... for each tensor). torch.compile(model) compiles the forward and
backward passes, not optimizer.step(), so it leaves them as they are. Fuse the optimizer itself:

    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, fused=True)   # one kernel set for all parameters
    # or foreach=True (a few multi-tensor kernels per step), or compile the optimizer step:
    @torch.compile(fullgraph=False)
    def optimizer_step():
        optimizer.step()

Keep the optimizer class and its hyperparameters; fused=True needs the parameters on the GPU in a
floating-point dtype.""",
    docs=(L.TORCH_TUNING, L.TORCH_COMPILE),
)

VARIANTS = register_variants(
    "pytorch",
    {
        "steps.uneven_step_time": Wording(
            fix_summary="Look at what the slow steps do beyond a steady one (named above): open them in Perfetto.",
            fix="""\
Some steps take much longer than the median. The slow steps are listed in the evidence: open the trace in
Perfetto (ui.perfetto.dev) and look at them. Usual causes: periodic work inside some steps (evaluation,
checkpoints, logging), DataLoader batches that are slow to load (uneven file sizes, workers restarting each
epoch: persistent_workers=True), Python garbage collection, the caching allocator growing, or torch.compile
recompiling for new shapes (keep batch shapes fixed: DataLoader(drop_last=True), pad sequences).""",
            docs=(L.TORCH_PROFILER, L.TORCH_TUNING),
            variants=(
                (
                    "pytorch:work",
                    Idiom(
                        fix_summary="Nothing to recover: the slow steps do more work. Compare their input shapes; rerun on an idle box.",
                        fix="""The slow steps' extra time is mostly the step's own work (GPU compute, copies, or the host's compute where
there is no GPU), not idle, input or waiting: the work per step varies (batches of different
sizes or shapes, data-dependent work such as embedding lookups or variable sequence lengths), or the machine
was shared while they ran. Open the trace in Perfetto (ui.perfetto.dev) to compare a slow step with a fast one;
bucket or pad inputs to a few fixed shapes where the variation is not wanted (which also keeps torch.compile
from recompiling), and profile on an otherwise idle machine before reading the spread as a problem.""",
                        docs=(L.TORCH_PROFILER,),
                    ),
                ),
                (
                    "pytorch:one_outlier",
                    Idiom(
                        fix_summary="One step makes the spread: recapture more steps to see whether it recurs.",
                        fix="""Without its slowest step the steps vary little: a one-off in this capture (a collection, a page-in, another
process on the machine). What it cost in this step is in the evidence (open it in Perfetto, ui.perfetto.dev);
how often it recurs is not in the trace. Capture more steps (torch.profiler.schedule(wait=5, warmup=2,
active=20)): a stall that recurs every N steps (evaluation, checkpoints, logging) shows as several slow steps.""",
                        docs=(L.TORCH_PROFILER,),
                    ),
                ),
            ),
        ),
        "occupancy.tiny_grid": Wording(
            fix_summary="Give these kernels more parallel work (larger batch, fused ops) so every SM is used.",
            fix="""\
These kernels launch fewer thread blocks than the GPU has SMs, so most SMs sit idle while they run. Give
them more parallel work: a larger batch, larger tensors per op (torch.compile fuses small ops into larger
kernels), or, for your own CUDA or Triton kernels, split the work into more, smaller blocks (grid-stride
loops, split-K for GEMMs).""",
            docs=(L.TORCH_COMPILE, L.NVIDIA_DL_PERFORMANCE, L.CUDA_OCCUPANCY),
        ),
        "occupancy.low_occupancy": Wording(
            fix_summary="Raise occupancy of the named kernels (registers, shared memory or block size).",
            fix="""\
These kernels keep few warps resident per SM, so the SM cannot hide memory latency. The limiter is in the
evidence:
- registers: for your own CUDA/Triton kernels cap them (__launch_bounds__(threads, minBlocks) or
  -maxrregcount; Triton: smaller BLOCK sizes / num_warps);
- shared memory: use smaller tiles or fewer pipeline stages;
- block size: launch blocks of 128-256 threads so more warps fit per SM.
For PyTorch's own kernels, change what they are given: larger batch or hidden sizes, fused ops
(torch.compile), a different layout (channels_last for convolutions). Tensor-core and library GEMM/attention
kernels (cuBLAS incl. nvjet, cuDNN, CUTLASS, FlashAttention, Triton matmuls) and kernels with 96 KiB or more
of shared memory per block are excluded: they trade occupancy for large tiles by design, and the roofline
judges them by their FLOP rate.""",
            docs=(L.CUDA_OCCUPANCY, L.NVIDIA_DL_PERFORMANCE),
        ),
        "environment.gpu_not_used": Wording(
            fix_summary="Check PyTorch sees the GPU: torch.cuda.is_available(), torch.version.cuda; install a CUDA "
            "build.",
            fix="""\
No GPU did any work in this profile although the job was set up for one (see the evidence). PyTorch runs on
the CPU when its build has no CUDA (or ROCm) support, the driver is too old for it, or tensors and the model
never move to the GPU. Check, in the same environment:

    import torch
    print(torch.cuda.is_available(), torch.cuda.device_count())   # False / 0 = PyTorch sees no GPU
    print(torch.__version__, torch.version.cuda, torch.version.hip) # None for both = a CPU-only build
    print(next(model.parameters()).device)                        # cuda:0 expected

then `nvidia-smi` (driver, the CUDA version it supports, the GPU is free) and CUDA_VISIBLE_DEVICES (unset, not
"" or "-1"). Install the build matching the driver (the selector on pytorch.org gives the command), and
move the model and each batch: model.to("cuda"), x.to("cuda", non_blocking=True).""",
            docs=(L.TORCH_INSTALL, L.CUDA_COMPATIBILITY),
        ),
        "environment.idle_gpus": Wording(
            fix_summary="Use every GPU: one process per GPU with torchrun and DistributedDataParallel.",
            fix="""\
GPUs listed in this process's profile ran no kernel in any captured step while the others trained (see the
evidence): the job runs on fewer GPUs than the machine gives it. Start one process per GPU and wrap the
model in DistributedDataParallel:

    # torchrun --nproc_per_node=NUM_GPUS train.py
    torch.distributed.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DistributedDataParallel(model.to(local_rank), device_ids=[local_rank])
    sampler = DistributedSampler(dataset)            # each rank its own share of the data

and check CUDA_VISIBLE_DEVICES in the job's environment. Keep each GPU's share of the work: global batch =
per-rank batch x world size (and scale the learning rate with it). If the idle GPUs belong to other ranks,
each rank's trace shows only its own GPU's work: profile every rank and this finding does not apply.""",
            docs=(L.TORCH_DDP,),
        ),
    },
)
