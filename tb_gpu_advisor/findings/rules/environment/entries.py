"""The environment family's catalog words: titles, explanations and fixes of its findings."""

from __future__ import annotations

from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Entry, Idiom, register


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
