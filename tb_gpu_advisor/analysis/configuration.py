"""The training configuration a trace shows: framework and versions, GPUs, XLA, precision, threads, tf.data."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tb_gpu_advisor.analysis.examples_per_step import examples_per_step
from tb_gpu_advisor.analysis.framework import strategy_signals
from tb_gpu_advisor.analysis.host_cores import METADATA
from tb_gpu_advisor.analysis.gpu_signals import set_up_for_gpu
from tb_gpu_advisor.analysis.tf_data import tf_data_pipeline
from tb_gpu_advisor.analysis.unused_gpus import replica_count
from tb_gpu_advisor.analysis.kernel_families import nvjet_input_dtype
from tb_gpu_advisor.analysis.kernels import op_dtypes_by_name
from tb_gpu_advisor.analysis.kernel_names import (
    is_fp32_matmul,
    is_library_math,
    is_low_precision,
    is_nccl,
    is_xla_kernel,
    kernel_precision,
    uses_tensor_cores,
)

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.analysis.compilation import Compilation
    from tb_gpu_advisor.analysis.framework import Framework
    from tb_gpu_advisor.analysis.host_cores import Cores
    from tb_gpu_advisor.analysis.kernels import KernelRow
    from tb_gpu_advisor.model.trace import TraceModel


# Metadata keys holding versions, in the order shown; any other `*_version` key follows, sorted.
_VERSION_ORDER = (
    "tensorflow_version",
    "jax_version",
    "jaxlib_version",
    "torch_version",
    "cuda_runtime_version",
    "cuda_version",
    "cuda_driver_version",
    "cudnn_version",
    "nccl_version",
    "rocm_version",
)
_NOT_VERSIONS = {"kineto_schema_version", "cpu_version"}
_BF16 = re.compile(r"bf16|bfloat16", re.IGNORECASE)
_FP8 = re.compile(r"e4m3|e5m2|fp8|f8e", re.IGNORECASE)
_TF32 = re.compile(r"tf32", re.IGNORECASE)
# Tensor Core GEMM shapes with a 32-bit accumulator (`s1688`, `s16816`): with no 16-bit or 8-bit input in the
# name the inputs are 32-bit, which Tensor Cores (Ampere and later) compute as TF32.
_TF32_MMA = re.compile(r"(?<![a-z0-9])(?:tensorop_)?s(?:1688|16816)(?:gemm|cudnn|_|$)", re.IGNORECASE)
_HLO_DTYPES = {"bf16": "bf16", "f16": "fp16", "f32": "fp32", "f64": "fp64", "f8e4m3fn": "fp8", "f8e5m2": "fp8"}
# A precision holding this share of matmul/conv time names the run's precision; below it the run is mixed.
DOMINANT_PRECISION_PCT = 90.0
# XLA runs f32 dots at DEFAULT precision in TF32 on NVIDIA GPUs from this compute capability (Ampere) on.
XLA_TF32_MIN_CC = (8, 0)
# JAX's dispatch of a compiled XLA program.
_COMPILED_DISPATCH = re.compile(r"^(Pjit|Pmap)Function\(")
# Thread pools whose thread count is a setting (tf.config.threading, tf.data options, TF_GPU_THREAD_COUNT).
_POOL_PREFIXES = (
    "tf_Compute",
    "tf_data_private_threadpool",
    "tf_data_iterator",
    "tf_gpu_private",
    "tf_XLA",
    "tf_numa",
    "tf_pjrt",
    "tf_PjRt",
    "python",
    "collective_ops",
    "tf_inter_op",
    "tf_intra_op",
)
_TF_DATA_OPTIONS = (
    ("prefetch", ("Prefetch",)),
    ("prefetch to device", ("PrefetchToDevice",)),
    ("parallel map", ("ParallelMap", "ParallelMapV2", "ParallelBatch")),
    (
        "parallel interleave",
        ("ParallelInterleave", "ParallelInterleaveV2", "ParallelInterleaveV3", "ParallelInterleaveV4"),
    ),
    ("sequential map", ("Map",)),
    ("map and batch", ("MapAndBatch",)),
    ("cache", ("Cache", "CacheV2", "MemoryCache", "MemoryReader")),
    ("snapshot", ("Snapshot",)),
    ("shuffle", ("Shuffle",)),
    ("file reads", ("TFRecord", "TextLine", "FixedLengthRecord", "ArrayRecord")),
)


@dataclass(frozen=True)
class Configuration:
    """What the trace says about how the job ran; None or empty where it does not say."""

    framework: str
    versions: tuple  # ((metadata key, version text), ...)
    gpu_model: str | None
    gpu_count: int
    active_gpu_count: int
    compute_capability: str | None
    gpu_memory_bytes: int | None
    xla: bool | None  # compiler-generated kernels ran: XLA, or Triton for torch.compile; without GPU kernels, XLA
    #   programs compiled for the CPU (None: neither)
    precision: str | None  # "bf16", "fp16", "tf32", "fp32", "fp8", or "mixed: bf16 + fp32"
    matmul_dtype_pct: tuple  # ((dtype, % of matmul/conv kernel time), ...), most first
    distribution: str | None
    global_batch: int | None  # None: the trace does not record the batch, or only per device
    examples: object  # analysis.examples_per_step.ExamplesPerStep: examples per step, scope, source or reason
    thread_pools: tuple  # ((thread kind, thread count), ...)
    gpu_thread_mode: str | None  # "gpu_private" when TF_GPU_THREAD_MODE=gpu_private threads ran
    tf_data: tuple  # tf.data options seen in the pipeline's stages
    host_cores: int | None
    cores_seen: object = None  # analysis.host_cores.Cores from metadata or thread pools, or None
    graph_replay_pct: float | None = None  # % of launched device work replayed from CUDA/HIP graphs or XLA command
    #   buffers (analysis.compilation), None without launches
    gpu_arch: str | None = None  # "sm_80", "gfx942": the architecture, where the trace names no model
    tpu_count: int = 0  # `/device:TPU:N` planes: XLA runs on TPUs, not on the CPU
    # % of matmul/conv time labelled tf32 from XLA's DEFAULT precision on f32 dots (no HIGHEST in their HLO) on an
    #   NVIDIA GPU of compute capability 8.0+, where the kernel's name does not say (Triton `gemm_fusion_dot`)
    tf32_by_default_pct: float = 0.0


def configuration(
    model: TraceModel,
    framework: Framework,
    kernels: tuple[KernelRow, ...],
    active_ordinals: tuple[int, ...],
    host_cores: None,
    steps: tuple = (),
    cores_seen: Cores | None = None,
    compiled: Compilation | None = None,
) -> Configuration:
    """The Configuration of a host's trace; pure. `steps`: the steps found (analysis.steps); `compiled`: its
    analysis.compilation.Compilation (PyTorch's compiler is read from it)."""
    gpus = [gpu for gpu in model.gpus if gpu.ordinal in set(active_ordinals)] or list(model.gpus)
    caps = gpus[0].capabilities if gpus else None
    kernel_names = [row.name for row in kernels if not is_nccl(row.name)]
    xla_tf32 = bool(
        caps
        and (caps.vendor or "nvidia").lower() == "nvidia"
        and caps.compute_capability
        and tuple(caps.compute_capability) >= XLA_TF32_MIN_CC
        and framework.name in ("jax", "tensorflow")
    )
    dtype_pct, by_default_pct = _matmul_dtypes(kernels, xla_tf32)
    examples = examples_per_step(model, framework.strategy, tuple(steps), tuple(active_ordinals))
    # A CPU-only step program over several XLA CPU devices (--xla_force_host_platform_device_count): XLA's CPU
    # thread pools follow the device count, not the cores.
    cpu_devices = examples.devices if not model.gpus and not model.tpu_count and examples.devices > 1 else 0
    if cpu_devices and cores_seen is not None and cores_seen.source != METADATA:
        cores_seen = None
    return Configuration(
        framework=framework.name,
        versions=_versions(model.environment),
        gpu_model=caps.model_name if caps else None,
        gpu_count=len(model.gpus),
        active_gpu_count=len(active_ordinals),
        compute_capability=".".join(map(str, caps.compute_capability)) if caps and caps.compute_capability else None,
        gpu_memory_bytes=caps.memory_bytes if caps else None,
        xla=_xla(model, framework, kernel_names, compiled),
        precision=_precision(dtype_pct),
        matmul_dtype_pct=dtype_pct,
        distribution=_distribution(model, framework) or _sharded(cpu_devices),
        global_batch=examples.global_batch,
        examples=examples,
        thread_pools=_thread_pools(model.host_activity.thread_busy),
        gpu_thread_mode="gpu_private"
        if any(kind.startswith("tf_gpu_private") for kind in model.host_activity.thread_busy)
        else None,
        tf_data=_tf_data_options(model.host_activity),
        host_cores=host_cores,
        cores_seen=cores_seen,
        graph_replay_pct=round(100.0 * compiled.graph_share, 2) if compiled and compiled.launched_events else None,
        gpu_arch=caps.arch if caps else None,
        tpu_count=model.tpu_count,
        tf32_by_default_pct=by_default_pct,
    )


def _xla(model, framework, kernel_names, compiled=None):
    """XLA-generated kernels ran on a GPU (JAX always compiles with XLA); in PyTorch, torch.compile's events or
    Inductor's kernels (analysis.compilation; cuDNN's `cudnn::fusion::` kernels are no compiler's); without GPU
    kernels, XLA programs compiled for the CPU (HLO modules in the trace, JAX's compiled-function dispatches) say
    XLA is on; else unknown."""
    if kernel_names and framework.name == "pytorch" and compiled is not None:
        return bool(compiled.torch_compile)
    if kernel_names:
        return framework.is_jax or any(is_xla_kernel(name) for name in kernel_names)
    if model.hlo_protos or any(_COMPILED_DISPATCH.match(name) for name in model.host_activity.op_totals):
        return True
    return None


def version_text(key: str, value: str) -> str:
    """A metadata version as people write it: CUDA's 12020 as 12.2; others as recorded."""
    if key.startswith("cuda") and isinstance(value, (int, str)) and str(value).isdigit() and int(value) >= 1000:
        number = int(value)
        return f"{number // 1000}.{(number % 1000) // 10}"
    return str(value)


def _versions(environment):
    keys = [key for key in _VERSION_ORDER if key in environment]
    keys += sorted(
        key for key in environment if key.endswith("_version") and key not in keys and key not in _NOT_VERSIONS
    )
    return tuple((key, version_text(key, environment[key])) for key in keys)


def _xla_default_tf32(row, xla_tf32):
    """An f32 dot XLA compiled at its DEFAULT precision (no HIGHEST in its HLO) into a kernel whose name does not
    say how it computes (Triton's `gemm_fusion_dot`), where `xla_tf32` (NVIDIA, compute capability 8.0+): XLA runs
    it in TF32."""
    return (
        xla_tf32
        and row.dtype == "f32"
        and row.compute == "matrix"
        and row.matrix_precision in (None, "DEFAULT")
        and not is_fp32_matmul(row.name)
        and kernel_precision(row.name, None) != "32bit"
    )


def _kernel_dtype(row, known=None, xla_tf32=False):
    """The precision of a matmul/conv kernel row: its op's input type (HLO or PyTorch), else that of the rows of
    the same kernel whose op says one (`known`: name -> their one element type; cuDNN names its bf16 kernels
    `f16`), else what its name says; an f32 dot at XLA's DEFAULT precision on TF32 hardware is tf32."""
    tf32 = bool(_TF32.search(row.name) or _TF32_MMA.search(row.name))
    dtype = row.dtype or (known or {}).get(row.name)
    if dtype == "f32" and (tf32 or _xla_default_tf32(row, xla_tf32)):
        return "tf32"  # float32 operands on TF32 Tensor Cores: the kernel's name or XLA's default says so
    if dtype in _HLO_DTYPES:
        return _HLO_DTYPES[dtype]
    if _FP8.search(row.name):
        return "fp8"
    if _BF16.search(row.name) or nvjet_input_dtype(row.name) == "bf16":
        return "bf16"
    if is_low_precision(row.name):
        return "fp16"
    if tf32:
        return "tf32"
    return "fp32" if kernel_precision(row.name, row.dtype) == "32bit" else "unknown"


def is_matmul_kernel(row: KernelRow) -> bool:
    """A kernel table row that is a matrix multiply or convolution (not a collective)."""
    return (
        row.compute == "matrix" or uses_tensor_cores(row.name) or is_fp32_matmul(row.name) or is_library_math(row.name)
    ) and not is_nccl(row.name)


def _matmul_dtypes(kernels, xla_tf32=False):
    """(((dtype, % of matmul/conv kernel time), ...), % of that time tf32 by XLA's default alone) from the
    kernel names (HLO element types and precision where costed)."""
    times, by_default = {}, 0
    known = op_dtypes_by_name(kernels)
    for row in kernels:
        if is_matmul_kernel(row):
            dtype = _kernel_dtype(row, known, xla_tf32)
            times[dtype] = times.get(dtype, 0) + row.total_ps
            if dtype == "tf32" and not (_TF32.search(row.name) or _TF32_MMA.search(row.name)):
                by_default += row.total_ps
    total = sum(times.values())
    if not total:
        return (), 0.0
    shares = tuple(
        sorted(
            ((dtype, round(100.0 * ps / total, 2)) for dtype, ps in times.items()), key=lambda item: (-item[1], item[0])
        )
    )
    return shares, round(100.0 * by_default / total, 2)


def _precision(dtype_pct):
    """The matmul/conv precision: None without such kernels; "unknown" when none names its type; otherwise named
    by the kernels whose type is known (their "unknown" share stays in matmul_dtype_pct)."""
    if not dtype_pct:
        return None
    known = [(dtype, pct) for dtype, pct in dtype_pct if dtype != "unknown"]
    if not known:
        return "unknown"
    if known[0][1] >= DOMINANT_PRECISION_PCT or len(known) == 1:
        return known[0][0]
    return "mixed: " + " + ".join(dtype for dtype, _ in known[:3])


def _distribution(model, framework):
    environment = model.environment
    world = environment.get("world_size")
    if world not in (None, "", 1, "1"):
        backend = environment.get("distributed_backend")
        return f"{world} ranks" + (f" ({backend})" if backend else "")
    if framework.strategy:
        return f"tf.distribute ({framework.strategy})"
    signals = strategy_signals(model) if not model.gpus else None
    if signals:
        # No GPU plane: a strategy over CPU devices unless something GPU-specific says the job meant a GPU.
        what = f"{replicas} replicas" if (replicas := replica_count(model)) else signals
        if set_up_for_gpu(model):
            return f"tf.distribute ({what}; no GPU ran work)"
        return f"tf.distribute ({what} on /cpu devices)" if replicas else f"tf.distribute (on /cpu devices: {what})"
    return None


def _sharded(cpu_devices):
    """A CPU-only step program's own device assignment, where nothing else says how the job is distributed."""
    if cpu_devices:
        return f"{cpu_devices} XLA CPU devices (the step program is sharded over them: jit with shardings, or pmap)"
    return None


def _thread_pools(thread_busy):
    return tuple(sorted((kind, count) for kind, (count, _) in thread_busy.items() if kind.startswith(_POOL_PREFIXES)))


def _tf_data_options(host):
    pipeline = tf_data_pipeline(host.op_totals, host.thread_busy, 0, host.map_ops_in_flight)
    options = [label for label, names in _TF_DATA_OPTIONS if pipeline.stages & set(names)]
    if pipeline.generators:
        options.append("from_generator")
    if pipeline.per_device_generators:
        options.append("per-device feed (tf.distribute)")
    return tuple(options)
