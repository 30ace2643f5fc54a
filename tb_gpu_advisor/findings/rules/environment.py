"""Environment findings: GPU generation, precision support, CUDA and driver versions."""

from __future__ import annotations

import re

from tb_gpu_advisor.analysis.gpu_signals import gpu_library_versions, gpu_requests
from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Entry, Idiom, register
from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.analysis.kernel_names import is_nccl
from tb_gpu_advisor.findings.finding import Evidence, Finding, estimated, grade, limit
from tb_gpu_advisor.findings.thresholds import (
    BF16_MIN_CC,
    KERNEL_HIGH_PCT,
    MIXED_PRECISION_GAIN,
    MODELED_LOW_PCT,
    MODELED_MEDIUM_PCT,
    TENSOR_CORE_MIN_CC,
)
from tb_gpu_advisor.whatif.communication import spread_over_idle_gpus


ENTRIES = register(
    "environment",
    {
        "environment.gpu_not_used": Entry(
            category="other",
            title="The job meant to use a GPU but ran without one",
            fix_summary="Check the framework sees the GPU: tf.config.list_physical_devices('GPU'), CUDA/cuDNN versions.",
            fix="""\
No GPU did any work in this profile although the job was set up for one (see the evidence). TensorFlow
silently runs everything on the CPU when it cannot load the GPU. Check, in the same environment:

    import tensorflow as tf
    print(tf.config.list_physical_devices("GPU"))          # [] = TensorFlow sees no GPU
    print(tf.sysconfig.get_build_info())                    # cuda_version / cudnn_version it was built for
    tf.debugging.set_log_device_placement(True)             # where each op runs

then `nvidia-smi` (driver, CUDA version it supports, the GPU is free), CUDA_VISIBLE_DEVICES (unset, not "" or
"-1"), and the startup log's "Could not load dynamic library" lines. Install a GPU build whose CUDA and cuDNN
match the driver: pip install "tensorflow[and-cuda]".""",
            docs=(L.TF_GPU_GUIDE, L.CUDA_COMPATIBILITY),
            jax=Idiom(
                fix_summary="Check JAX sees the GPU: jax.devices(), jax.print_environment_info(); install jax[cuda12].",
                fix="""\
No GPU did any work in this profile although the job was set up for one (see the evidence). JAX falls back
to the CPU (with a warning at startup) when its CUDA plugin is missing or cannot load. Check, in the same
environment:

    import jax
    print(jax.devices())                 # [CpuDevice(id=0)] = JAX sees no GPU
    print(jax.default_backend())         # "gpu" expected
    jax.print_environment_info()         # jax, jaxlib, the CUDA plugin and the driver nvidia-smi reports

then `nvidia-smi` (driver, the CUDA version it supports, the GPU is free) and CUDA_VISIBLE_DEVICES (unset, not
"" or "-1"). Install the CUDA build: pip install -U "jax[cuda12]", and set JAX_PLATFORMS=cuda to fail
loudly instead of falling back to the CPU.""",
                docs=(L.JAX_INSTALL, L.CUDA_COMPATIBILITY),
            ),
        ),
        "environment.idle_gpus": Entry(
            category="other",
            title="GPUs this process sees did no work while the others trained",
            fix_summary="Use every GPU: MirroredStrategy() without devices=; check list_logical_devices('GPU').",
            fix="""\
GPUs listed in this process's profile ran no kernel in any captured step while the others trained (see the
evidence): the job runs on fewer GPUs than the machine gives it. A tf.distribute strategy uses every GPU
TensorFlow sees unless the code narrows it; find where:

    print(tf.config.list_physical_devices("GPU"))    # every GPU TensorFlow can see
    print(tf.config.list_logical_devices("GPU"))     # the devices it made (set_visible_devices narrows them)
    strategy = tf.distribute.MirroredStrategy()      # no devices=[...]: every visible GPU
    print(strategy.num_replicas_in_sync)             # the number of GPUs you expect

and CUDA_VISIBLE_DEVICES in the job's environment. Keep each GPU's share of the work: global batch =
per-replica batch x strategy.num_replicas_in_sync (and scale the learning rate with it). If the idle GPUs
belong to other worker processes (MultiWorkerMirroredStrategy with a worker per GPU), each worker's profile
shows only its own GPUs' work: profile every worker and this finding does not apply.""",
            docs=(L.TF_GPU_GUIDE, L.TF_DISTRIBUTED),
            jax=Idiom(
                fix_summary="Shard over every device: a mesh of jax.devices() (or pmap over jax.local_device_count()).",
                fix="""\
GPUs listed in this process's profile ran no kernel in any captured step while the others trained (see the
evidence): the job runs on fewer GPUs than the machine gives it. Check what JAX sees and what the program
shards over:

    print(jax.devices(), jax.local_device_count())           # every GPU JAX can see
    mesh = jax.make_mesh((jax.device_count(),), ("data",))   # all devices, not jax.devices()[:2]
    batch = jax.device_put(batch, NamedSharding(mesh, P("data")))
    # pmap: the batch's leading axis = jax.local_device_count()

and CUDA_VISIBLE_DEVICES in the job's environment. Keep each GPU's share of the work: global batch =
per-device batch x jax.device_count(). If the idle GPUs belong to other processes (jax.distributed.initialize
with a process per GPU), each process's profile shows only its own GPUs' work: profile every process and
this finding does not apply.""",
                docs=(L.JAX_SHARDING,),
            ),
        ),
        "environment.no_tensor_cores": Entry(
            category="other",
            title="This GPU has no Tensor Cores",
            fix_summary="Mixed precision will save memory but not speed up math on this GPU (cc < 7.0).",
            fix="""\
GPUs before compute capability 7.0 (Pascal and older) have no Tensor Cores: float16 math is not faster than
float32 there (and much slower on most consumer Pascal cards), so the precision advice does not apply. For
training speed the options are a newer GPU (cc >= 7.0 for float16 Tensor Cores, >= 8.0 for bfloat16 and
TF32) or the other findings of this report.""",
            docs=(L.CUDA_GPUS, L.NVIDIA_MIXED_PRECISION),
        ),
        "environment.bf16_without_hardware": Entry(
            category="precision",
            title="bfloat16 kernels on a GPU without bfloat16 Tensor Cores",
            fix_summary="On compute capability 7.x use float16: set_global_policy('mixed_float16').",
            fix="""\
bfloat16 Tensor Core math needs compute capability 8.0 (Ampere) or newer; on this GPU bfloat16 kernels fall
back to slower paths. Use float16 with loss scaling instead:

    tf.keras.mixed_precision.set_global_policy("mixed_float16")   # Keras applies loss scaling itself""",
            docs=(L.TF_MIXED_PRECISION, L.NVIDIA_MIXED_PRECISION),
            jax=Idiom(
                fix_summary="On compute capability 7.x compute in float16 with loss scaling instead of bfloat16.",
                fix="""\
bfloat16 Tensor Core math needs compute capability 8.0 (Ampere) or newer; on this GPU bfloat16 kernels fall
back to slower paths. Cast to jnp.float16 instead and scale the loss so small gradients do not underflow
(e.g. the jmp library: jmp.get_policy("params=float32,compute=float16,output=float32") with
jmp.DynamicLossScale).""",
                docs=(L.NVIDIA_MIXED_PRECISION,),
            ),
            pytorch=Idiom(
                fix_summary="On compute capability 7.x use float16 autocast with a GradScaler instead of bfloat16.",
                fix="""\
bfloat16 Tensor Core math needs compute capability 8.0 (Ampere) or newer; on this GPU bfloat16 kernels fall
back to slower paths. Use float16 with loss scaling:

    scaler = torch.amp.GradScaler("cuda")
    with torch.autocast(device_type="cuda", dtype=torch.float16):
        loss = loss_fn(model(x), y)
    scaler.scale(loss).backward(); scaler.step(optimizer); scaler.update()""",
                docs=(L.TORCH_AMP,),
            ),
        ),
        "environment.cuda_older_than_gpu": Entry(
            category="other",
            title="The CUDA version predates this GPU",
            fix_summary="Use a CUDA (and framework build) that supports this GPU's compute capability natively.",
            fix="""\
The CUDA version recorded in the profile is older than the first one with native support for this GPU's
compute capability: kernels run from PTX compiled just in time (slow start-up, often slower kernels) or
come from generic code paths. Install a TensorFlow build for a newer CUDA (pip install
tensorflow[and-cuda]) and a matching driver.""",
            docs=(L.CUDA_COMPATIBILITY, L.CUDA_GPUS),
            jax=Idiom(
                fix_summary="Use a jaxlib built for a CUDA that supports this GPU's compute capability natively.",
                fix="""\
The CUDA version recorded in the profile is older than the first one with native support for this GPU's
compute capability: kernels run from PTX compiled just in time or come from generic code paths. Install
a jaxlib for a newer CUDA (pip install -U "jax[cuda12]") and a matching driver.""",
                docs=(L.CUDA_COMPATIBILITY, L.CUDA_GPUS),
            ),
            pytorch=Idiom(
                fix_summary="Use a PyTorch build for a CUDA that supports this GPU's compute capability.",
                fix="""\
The CUDA version recorded in the profile is older than the first one with native support for this GPU's
compute capability: kernels run from PTX compiled just in time or come from generic code paths. Install a
PyTorch wheel built for a newer CUDA (pip install torch --index-url https://download.pytorch.org/whl/cu124)
and a matching driver; torch.cuda.get_arch_list() must include this GPU's sm_XY.""",
                docs=(L.CUDA_COMPATIBILITY,),
            ),
        ),
        "environment.versions_misaligned": Entry(
            category="other",
            title="Framework libraries from different releases",
            fix_summary="Install the framework's packages of one release, pinned together.",
            fix="""\
The profile records versions of the framework's packages that belong to different releases, which were not
tested together. Install them from one release, pin them in the job's requirements, and write the versions
down with the run's configuration.""",
            docs=(L.CUDA_COMPATIBILITY,),
            jax=Idiom(
                fix_summary="Install jax and jaxlib (and its CUDA plugin) of the same release.",
                fix="""\
The profile records a jax version and a jaxlib version that differ. JAX is released and tested together with
the jaxlib (and jax-cuda plugin) of the same version; an older jaxlib runs with missing fixes and compiler
improvements, and a mismatched CUDA plugin can fall back to slower paths or fail on new features. Pin them
together and write the versions down with the run's configuration:

    pip install -U "jax[cuda12]==<jax version>"     # brings the matching jaxlib and CUDA plugin
    python -c "import jax; jax.print_environment_info()"   # jax, jaxlib, CUDA and driver versions""",
                docs=(L.JAX_GPU_TIPS,),
            ),
        ),
        "environment.driver_older_than_runtime": Entry(
            category="other",
            title="The NVIDIA driver is older than the CUDA runtime",
            fix_summary="Upgrade the NVIDIA driver to one that supports the CUDA runtime in use.",
            fix="""\
The CUDA version the driver supports is older than the CUDA runtime the framework uses. It runs only through
minor-version compatibility, which disables PTX just-in-time compilation and some features, or through
the forward-compatibility package. Upgrade the driver (nvidia-smi shows the CUDA version it supports).""",
            docs=(L.CUDA_COMPATIBILITY,),
        ),
    },
)


_BF16 = re.compile(r"bf16|bfloat16|__nv_bfloat", re.IGNORECASE)


# First CUDA version with native (SASS) support for a compute capability.
CUDA_FOR_CC = {
    (6, 0): (8, 0),
    (7, 0): (9, 0),
    (7, 5): (10, 0),
    (8, 0): (11, 0),
    (8, 6): (11, 1),
    (8, 9): (11, 8),
    (9, 0): (11, 8),
    (10, 0): (12, 8),
    (12, 0): (12, 8),
}


NOT_A_SPEEDUP = "none: a correctness/compatibility note, no time is measured as recoverable"


def cuda_version(value: str) -> tuple[int, int] | None:
    """(major, minor) from "12020" / 12020 (CUDA_VERSION style) or "12.2[.x]"; None when unreadable."""
    text = str(value).strip()
    if re.fullmatch(r"\d{4,6}", text):
        number = int(text)
        return (number // 1000, (number % 1000) // 10)
    match = re.match(r"(\d+)\.(\d+)", text)
    return (int(match.group(1)), int(match.group(2))) if match else None


def _cc_text(cc):
    return f"{cc[0]}.{cc[1]}"


def no_tensor_cores(ctx):
    cc = ctx.compute_capability
    if not ctx.has_gpu or cc is None or cc >= TENSOR_CORE_MIN_CC:
        return None
    return Finding(
        id="environment.no_tensor_cores",
        severity="low",
        summary=f"Compute capability {_cc_text(cc)}: no Tensor Cores, so mixed precision is not suggested.",
        evidence=Evidence(
            {"compute_capability": _cc_text(cc)},
            limit("compute_capability", _cc_text(cc), _cc_text(TENSOR_CORE_MIN_CC), "below"),
            {"devices": [g.name for g in ctx.active_gpus]},
        ),
        recoverable_ms=0.0,
        window_ms=ctx.window_ms,
        speedup_basis=NOT_A_SPEEDUP,
    )


def bf16_without_hardware(ctx):
    cc = ctx.compute_capability
    if not ctx.has_gpu or cc is None or cc >= BF16_MIN_CC:
        return None
    by_gpu = ctx.kernel_ps_by_gpu(lambda name: bool(_BF16.search(name)))
    bf16_ms = ms(max(by_gpu.values(), default=0))
    if bf16_ms <= 0:
        return None
    recoverable = bf16_ms * (1.0 - 1.0 / MIXED_PRECISION_GAIN)
    severity = grade(ctx.share_pct(recoverable), KERNEL_HIGH_PCT, MODELED_MEDIUM_PCT, MODELED_LOW_PCT) or "low"
    names = sorted({n for g in ctx.active_gpus for n in g.activity.names if _BF16.search(n)})
    return Finding(
        id="environment.bf16_without_hardware",
        severity=severity,
        summary=f"bfloat16 kernels take {ctx.time_text(bf16_ms)} on a compute capability {_cc_text(cc)} GPU, "
        "which has no bfloat16 Tensor Cores.",
        evidence=Evidence(
            {"bf16_kernel_ms": bf16_ms, "compute_capability": _cc_text(cc)},
            limit("compute_capability", _cc_text(cc), _cc_text(BF16_MIN_CC), "below"),
            {"kernels": names[:5]},
        ),
        recoverable_ms=recoverable,
        window_ms=ctx.window_ms,
        speedup_basis=f"estimate: those kernels {MIXED_PRECISION_GAIN:g}× faster in float16 on Tensor Cores",
    )


def _runtime_version(environment):
    for key in ("cuda_runtime_version", "cuda_version"):
        if key in environment and cuda_version(environment[key]):
            return key, cuda_version(environment[key])
    return None, None


def cuda_older_than_gpu(ctx):
    cc = ctx.compute_capability
    key, version = _runtime_version(ctx.model.environment)
    if not ctx.has_gpu or cc is None or version is None:
        return None
    known = [c for c in CUDA_FOR_CC if c <= cc]
    if not known:
        return None
    needed = CUDA_FOR_CC[max(known)]
    if version >= needed:
        return None
    return Finding(
        id="environment.cuda_older_than_gpu",
        severity="medium",
        summary=f"CUDA {version[0]}.{version[1]} predates native support for compute capability {_cc_text(cc)} "
        f"(CUDA {needed[0]}.{needed[1]}+).",
        evidence=Evidence(
            {key: ctx.model.environment[key], "compute_capability": _cc_text(cc)},
            limit("cuda_version", f"{version[0]}.{version[1]}", f"{needed[0]}.{needed[1]}", "below"),
            {"devices": [g.name for g in ctx.active_gpus]},
        ),
        recoverable_ms=0.0,
        window_ms=ctx.window_ms,
        speedup_basis=NOT_A_SPEEDUP,
    )


def driver_older_than_runtime(ctx):
    environment = ctx.model.environment
    key, runtime = _runtime_version(environment)
    driver = cuda_version(environment["cuda_driver_version"]) if "cuda_driver_version" in environment else None
    if runtime is None or driver is None or driver >= runtime:
        return None
    return Finding(
        id="environment.driver_older_than_runtime",
        severity="medium",
        summary=f"The driver supports CUDA {driver[0]}.{driver[1]}, older than the CUDA {runtime[0]}.{runtime[1]} "
        "runtime in use.",
        evidence=Evidence(
            {"cuda_driver_version": environment["cuda_driver_version"], key: environment[key]},
            limit("cuda_driver_version", f"{driver[0]}.{driver[1]}", f"{runtime[0]}.{runtime[1]}", "below"),
            {},
        ),
        recoverable_ms=0.0,
        window_ms=ctx.window_ms,
        speedup_basis=NOT_A_SPEEDUP,
    )


_VERSION_KEY = re.compile(r"version$")


def gpu_not_used(ctx):
    """A TensorFlow or JAX profile in which no GPU worked although something GPU-specific says the job meant one
    to: GPU planes without activity, host events that ask for a GPU, CUDA or ROCm versions in the metadata. A
    tf.distribute strategy is no such sign: it runs over CPU devices as well (the real tf_mirrored capture)."""
    model = ctx.model
    if ctx.has_gpu or model.tpu_count or not (ctx.framework.is_tensorflow or ctx.framework.is_jax):
        return None
    if any(len(gpu.activity) for gpu in model.gpus):
        return None  # GPUs worked, outside the steps: not this case
    idle_gpus = [
        f"{gpu.name} ({gpu.capabilities.model_name})" if gpu.capabilities.model_name else gpu.name for gpu in model.gpus
    ]
    requests = gpu_requests(model)
    libraries = gpu_library_versions(model.environment)
    signals = (
        (
            [f"{len(idle_gpus)} GPU plane{'s' if len(idle_gpus) > 1 else ''} without kernels or copies"]
            if idle_gpus
            else []
        )
        + ([f"host events that ask for a GPU ({requests[0][:60]})"] if requests else [])
        + (
            [f"GPU libraries in the metadata ({', '.join(f'{k} {v}' for k, v in libraries.items())})"]
            if libraries
            else []
        )
    )
    if not signals:
        return None
    versions = {
        key: value for key, value in model.environment.items() if _VERSION_KEY.search(key) and key not in libraries
    }
    # GPU planes in the file are the job's own GPUs: sure. The other signals say it meant one: likely.
    certainty = "high" if idle_gpus else "medium"
    return Finding(
        id="environment.gpu_not_used",
        severity="high" if idle_gpus else "medium",
        summary=(
            "No GPU ran any work in this profile, although the trace shows the job was set up for one: "
            + "; ".join(signals[:2])
            + "."
        ),
        evidence=Evidence(
            {"gpu_planes": len(model.gpus), "active_gpus": 0, "signals": len(signals), "certainty": certainty},
            limit("active_gpus", 0, 1, "below"),
            {"devices": idle_gpus, "host_ops": requests[:5], "signals": signals, "versions": {**libraries, **versions}},
        ),
        recoverable_ms=0.0,
        window_ms=ctx.window_ms,
        speedup_basis="none: the run used no GPU, so no GPU time is measured; on the GPU the step would be "
        "another profile",
    )


def idle_gpus(ctx):
    """GPUs this process's profile lists ran no kernel while others worked, the job meant several GPUs
    (analysis.unused_gpus: several working GPUs, a strategy, replica names, collectives over the working GPUs) and
    nothing says the capture missed their work or other processes own them (unused.claim)."""
    unused = ctx.analysis.unused_gpus
    if unused is None or not unused.claim or not ctx.has_gpu:
        return None
    idle, working = unused.idle, unused.working
    total = len(idle) + len(working)
    compute_ms = ms(max(ctx.kernel_ps_by_gpu(lambda name: not is_nccl(name)).values(), default=0))
    models = sorted({work.model for work in idle if work.model})
    steps = (
        f"any of the {unused.complete_steps} captured steps"
        if unused.complete_steps
        else "the capture (no step markers)"
    )
    summary = (
        f"{_gpu_list(idle)} ({len(idle)} of {total} GPUs{', ' + ', '.join(models) if models else ''}) ran "
        f"no kernel in {steps} while {_gpu_list(working)} computed "
        f"{ctx.time_text(compute_ms)} on the busiest."
    )
    finding = Finding(
        id="environment.idle_gpus",
        severity="high" if unused.certainty == "high" and len(idle) >= len(working) else "medium",
        summary=summary,
        evidence=Evidence(
            {
                "gpus_in_profile": total,
                "working_gpus": len(working),
                "idle_gpus": len(idle),
                "complete_steps": unused.complete_steps,
                "certainty": unused.certainty,
                "replicas": unused.replicas,
                "busiest_compute_ms": compute_ms,
                "working": [
                    {
                        "device": work.name,
                        "kernels": work.kernels,
                        "kernel_ms": work.kernel_ms,
                        "steps_with_kernels": work.steps_with_kernels,
                    }
                    for work in working
                ],
            },
            limit("idle_gpus", len(idle), 0),
            {
                "devices": [work.label for work in idle],
                "working": [work.label for work in working],
                "copies_only": [work.label for work in idle if work.copies],
                "signals": list(unused.intent),
            },
        ),
        recoverable_ms=0.0,
        window_ms=ctx.window_ms,
        speedup_basis="",
        fix_note=f"What says the job meant several GPUs: {'; '.join(unused.intent)}. Nothing in the profile says "
        "the capture missed their work or that other processes own them"
        + ("" if unused.certainty == "high" else " (no step markers, so how sure is medium)")
        + ".",
    )
    return estimated(finding, spread_over_idle_gpus(ctx.window_ms, compute_ms, len(working), total))


def _gpu_list(works):
    labels = [f"GPU {work.ordinal}" for work in works]
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]


def _release(text):
    """(major, minor, patch) of a version text such as `0.4.30` or `0.4.30.dev20240701`, or None."""
    match = re.match(r"^(\d+)\.(\d+)\.(\d+)", str(text).strip())
    return tuple(int(part) for part in match.groups()) if match else None


def versions_misaligned(ctx):
    """The trace's metadata records jax and jaxlib versions of different releases (JAX writes both)."""
    environment = ctx.model.environment
    jax, jaxlib = _release(environment.get("jax_version", "")), _release(environment.get("jaxlib_version", ""))
    if jax is None or jaxlib is None or jax == jaxlib:
        return None
    return Finding(
        id="environment.versions_misaligned",
        severity="low",
        summary=f"jax {environment['jax_version']} runs with jaxlib {environment['jaxlib_version']}: "
        "releases that were not tested together.",
        evidence=Evidence(
            {"jax_version": environment["jax_version"], "jaxlib_version": environment["jaxlib_version"]},
            limit("jaxlib_version", environment["jaxlib_version"], environment["jax_version"], "differs from"),
            {},
        ),
        recoverable_ms=0.0,
        window_ms=ctx.window_ms,
        speedup_basis=NOT_A_SPEEDUP,
    )


RULES = (
    gpu_not_used,
    idle_gpus,
    no_tensor_cores,
    bf16_without_hardware,
    cuda_older_than_gpu,
    driver_older_than_runtime,
    versions_misaligned,
)
