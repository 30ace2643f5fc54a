"""Named thresholds of every rule; docs/findings.md gives each one's rationale and its XProf counterpart."""

# Severity ladders on the share of step time a finding measures or could recover (percent).
# XProf InputAnalysis: input >= 20 "HIGHLY", >= 5 "MODERATELY" input-bound.
INPUT_HIGH_PCT = 20.0
INPUT_MEDIUM_PCT = 5.0
# XProf: kernel launch ("host prepare") >= 15 high, >= 3 moderate.
LAUNCH_HIGH_PCT = 15.0
LAUNCH_MEDIUM_PCT = 3.0
# XProf: "All Others" >= 15 high, >= 3 moderate; we split it into host work and unattributed idle.
HOST_HIGH_PCT = 15.0
HOST_MEDIUM_PCT = 3.0
# XProf: device collectives >= 15 high, >= 3 moderate.
COLLECTIVES_HIGH_PCT = 15.0
COLLECTIVES_MEDIUM_PCT = 3.0
# The backward pass's share of a training step's compute (gradients cost about twice the forward pass): the
# compute that gradient all-reduce can overlap with.
BACKWARD_SHARE_OF_COMPUTE = 2.0 / 3.0
# Collective bandwidth: the fastest of at least 3 large calls below a quarter of the link's practical bus
# bandwidth is a setup problem (transport, algorithm, protocol), not skew; the estimate reaches 70% of it.
COLLECTIVE_LOW_BUSBW_FRACTION = 0.25
COLLECTIVE_MIN_LARGE_CALLS = 3
COLLECTIVE_REACHABLE_FRACTION = 0.7
# Per-parameter all-reduce: this many all-reduces per step and GPU, small ones (NCCL-tests curves are latency-bound
# below about 1 MiB; unsized: calls this short), are gradients reduced one tensor at a time; packed, they would
# fill buckets of PyTorch DDP's default size (bucket_cap_mb=25).
PER_PARAMETER_MIN_CALLS = 32
PER_PARAMETER_MAX_BYTES = 1024 * 1024
PER_PARAMETER_MAX_MS = 0.1
PER_PARAMETER_BUCKET_BYTES = 25 * 1024 * 1024
# Rules whose recoverable time is modelled (kernel speed, copies, stalls): same shape as XProf's host ladders,
# plus a low level so small but real items are listed without alarming.
MODELED_HIGH_PCT = 15.0
MODELED_MEDIUM_PCT = 5.0
MODELED_LOW_PCT = 1.0
# Kernel-speed estimates (precision, fusion, occupancy) are the least certain: high only from this share.
KERNEL_HIGH_PCT = 25.0

# Verdict: a bottleneck must hold at least this share of step time; below it the run has no single bottleneck.
VERDICT_MIN_PCT = 10.0
# GPU idle with nothing on the host to explain it: above this the verdict is unknown, not none.
UNEXPLAINED_IDLE_PCT = 10.0

# input.host_batch_prep: file reads and image decoding this share of the preparation -> record-file advice.
FILES_MIN_SHARE = 0.5
# input.host_batch_prep: a gap the trace shows nothing in (certainty low) must be this long per step; shorter, it is
# as likely the loop's own Python (calling the step, reading the loss: tens to hundreds of microseconds).
PREP_UNTRACED_MIN_MS = 1.0
# tf.data service pays off only for a pipeline already tuned and still starving several GPUs this much.
TF_DATA_SERVICE_MIN_GPUS = 2
# tf.data's private pool is the limit of a parallel map when its threads are busy at least this share of the
# window on average: a call on every thread but for the gaps between calls. A pool with a thread to spare shows
# at most (threads - 1) / threads: below this for the pools of up to 4 threads (hosts of up to 4 cores).
MAP_POOL_BUSY_SHARE = 0.8
# ... and the ops that may wait (Python callbacks, ReadFile) take at least this share of those threads' busy time.
MAP_POOL_WAITING_SHARE = 0.5

# Utilization (torch-tb-profiler: GPU utilization < 50% -> larger batch).
BATCH_GPU_BUSY_MAX_PCT = 50.0
# Kernels this short (mean) are "small": per-kernel overhead is a large share of their cost.
SMALL_KERNEL_MEAN_US = 20.0
# The batch estimate doubles the batch: per-example time gains (idle time)/2 at most.
BATCH_SCALE = 2.0

# Precision (XProf: 16-bit share of device compute < 10%); Tensor Cores from compute capability 7.0.
TENSOR_CORE_MIN_CC = (7, 0)
# Host threads busy this fraction of the machine's cores = contention for cores; where the trace says how many.
CONTENTION_MIN_CORE_FRACTION = 0.9
from tb_gpu_advisor.analysis.cpu_load import CORE_COUNT_KEYS  # noqa: E402,F401 (documented with the thresholds)

STRAGGLER_SLOWDOWN_MIN = 1.1  # the straggler's common kernels this much slower than on the other GPUs: hardware
TF32_MIN_CC = (8, 0)  # TF32 Tensor Cores (Ampere), on by default in TensorFlow 2.4+ and JAX for float32 matmuls
BF16_MIN_CC = (8, 0)
FP32_MATMUL_MIN_SHARE_PCT = 10.0  # of GPU kernel time
LOW_PRECISION_MAX_SHARE_PCT = 10.0  # XProf's level, reported as evidence
# 32-bit matmul/conv kernels are assumed to take half the time in 16 bits (Tensor Core peak ratios are 2x on
# A100/H100 (TF32 -> FP16/BF16) to 8x on V100 (FP32 -> FP16); measured model speedups are usually 1.5-3x).
MIXED_PRECISION_GAIN = 2.0

# Fusion: element-wise kernels per step and their share of kernel time before XLA is worth suggesting.
FUSION_MIN_KERNELS_PER_STEP = 50
FUSION_MIN_SHARE_PCT = 20.0
# Share of element-wise kernel time the fusion finding's severity grades: its bound is all of that time (what
# fusion can at most remove); chains usually keep part of it (their bytes still move once).
FUSION_SAVED_FRACTION = 0.5

# Launch: share of kernels running shorter than their own host launch call; GPU gaps this short are the
# launch rhythm (kernel-to-kernel), longer ones have other causes.
TINY_KERNEL_MIN_SHARE_PCT = 50.0
LAUNCH_GAP_MAX_US = 50.0
LAUNCH_GPU_BUSY_MAX_PCT = 90.0

# Kernel efficiency: a kernel "dominates" from this share of its GPU's kernel time.
DOMINANT_KERNEL_SHARE_PCT = 5.0
LOW_OCCUPANCY_PCT = 25.0
# Occupancy above this is enough to hide latency for most kernels (the estimate stops there).
GOOD_OCCUPANCY_PCT = 50.0
# The least a kernel launch takes on the GPU (an empty kernel: about 1-3 us on recent GPUs), or the shortest kernel
# of the trace if shorter: occupancy.tiny_grid's relaunched kernels never run shorter.
MIN_KERNEL_US = 2.0

# Transfers (nsys: pageable and synchronous memcpy rules; HTA: bandwidth).
SMALL_COPY_BYTES = 64 * 1024
SMALL_COPIES_MIN_PER_STEP = 20
LARGE_COPY_BYTES = 1024 * 1024
# A step sending this many input copies of 64 KiB or more could send one stacked batch per input instead.
MANY_INPUT_COPIES_PER_STEP = 4
LOW_BANDWIDTH_FRACTION = 0.25  # of the practical host link bandwidth
# Practical host-to-device bandwidth (GB/s) of the PCIe generation GPUs of a compute capability ship with.
PCIE_GBPS_BY_CC = (((9, 0), 48.0), ((8, 0), 24.0), ((0, 0), 12.0))
# GPU idle after a device-to-host copy longer than this means the host waited for the value (a sync).
SYNC_GAP_MIN_US = 50.0

# Host: XProf flags eager op time > 10% and expensive (retraced) tf.functions >= 20%.
EAGER_MIN_PCT = 10.0
EAGER_MIN_OPS_PER_STEP = 10
RETRACE_MIN_VARIANTS = 2

# Multi-GPU: busy-% spread across GPUs that marks a straggler; NCCL overlap reported as evidence.
IMBALANCE_SPREAD_PCT = 10.0

# Steps: coefficient of variation of step time above which steps are "uneven".
STEP_CV_MIN = 0.2
STEP_MIN_COUNT = 3
# A stall must cost at least this share of step time to be reported.
STALL_MIN_PCT = 1.0
GC_MIN_PCT = 1.0
# The share of a feeder's blocked time its producer thread was busy for: above it, the producer is too slow.
FEEDER_PRODUCER_BUSY_SHARE = 0.5
MEMORY_NEAR_LIMIT_PCT = (
    90.0  # a GPU allocator's peak in use, % of its limit  # GC pauses the GPU idles through, % of the step time
)

# A GEMM (or fusion with a dot) under this share of the roof that binds it is far below what the hardware and
# the library reach on well-shaped problems (large aligned GEMMs commonly run at 60-80% of the dense peak).
GEMM_FAR_BELOW_ROOF_PCT = 40.0
# The share of its roof a reshaped GEMM is modeled to reach: the saving estimate is time x (1 - now/this).
GEMM_REACHABLE_ROOF_PCT = 70.0
# A kernel runs at least this long on the device however little work it has (launch, ramp-up, one wave's tail):
# a GEMM whose mean call is under twice this is bound by its per-call latency, not by its precision or shape,
# and reaching its roof cannot take it below this.
KERNEL_LATENCY_FLOOR_US = 5.0
# A matrix dimension below this fills only part of one tile of the GEMM libraries' common 128x128 tiles.
GEMM_SMALL_DIM = 128
# Tensor Core / matrix-core inputs are fetched in 16-byte vectors: dims should be multiples of 16 bytes.
GEMM_ALIGN_BYTES = 16

# launch.per_tensor_optimizer: an optimizer step launching at least this many kernels, nearly all (this share) from
# per-parameter element-wise ops: a for-loop optimizer over a model of more than a few parameters (Adam launches
# about 5 per parameter; foreach/fused implementations launch a few per group).
OPTIMIZER_LOOP_MIN_KERNELS = 40
OPTIMIZER_LOOP_MIN_SHARE = 0.8
# fusion.unfused_attention: a fused attention kernel (FlashAttention 2/3, cuDNN) reaches about half of the
# dense matrix peak on large heads (the H200 PyTorch healthy run's cuDNN attention: 39-54%).
UNFUSED_ATTENTION_FUSED_ROOF_PCT = 45.0
