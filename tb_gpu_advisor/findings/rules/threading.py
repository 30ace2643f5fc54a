"""Threading findings: host CPU cores saturated, and tf.data threads contending with the GPU launch threads."""

from __future__ import annotations

from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Entry, Idiom, register
from tb_gpu_advisor.findings.finding import Evidence, Finding, grade, limit
from tb_gpu_advisor.findings.thresholds import (
    CONTENTION_MIN_CORE_FRACTION,
    HOST_HIGH_PCT,
    INPUT_MEDIUM_PCT,
    LAUNCH_HIGH_PCT,
    LAUNCH_MEDIUM_PCT,
)

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.findings.context import Context


ENTRIES = register(
    "threading",
    {
        "threading.host_cpu_saturated": Entry(
            category="threading",
            title="The host's CPU cores are saturated while the GPU waits for it",
            fix_summary="Bound the thread pools, move preprocessing off this host, or use more cores per GPU.",
            fix="""\
Host threads keep (nearly) every core of the machine busy while the GPU waits for the host, so more
threads cannot help: they only take cores from each other and from the GPU launch threads. In order:

    # 1. keep cores for the GPU launch threads and bound TensorFlow's op pools (before any op runs)
    TF_GPU_THREAD_MODE=gpu_private TF_GPU_THREAD_COUNT=2 python train.py
    tf.config.threading.set_inter_op_parallelism_threads(2)
    tf.config.threading.set_intra_op_parallelism_threads(2)
    options = tf.data.Options()
    options.threading.private_threadpool_size = max(2, os.cpu_count() - 4)  # 2 at least on small hosts
    ds = ds.with_options(options)
    # 2. do less per step on the host: cache decoded data, move augmentation onto the GPU (Keras
    #    preprocessing layers inside the model), store preprocessed records
    ds = ds.map(decode).cache().map(augment, num_parallel_calls=tf.data.AUTOTUNE)
    # 3. take preprocessing off this host: tf.data service workers on other machines
    ds = ds.apply(tf.data.experimental.service.distribute("parallel_epochs", service_address))

When the input pipeline alone needs more cores than the machine has, the host is too small for this job:
use a machine with more CPU cores per GPU, or fewer GPUs per host.""",
            docs=(L.TF_DATA_PERFORMANCE, L.TF_THREADING, L.TF_DATA_SERVICE, L.TF_GPU_PERFORMANCE),
            jax=Idiom(
                fix_summary="Size loader workers to the cores, do less per example on the host, or use more cores.",
                fix="""\
Host threads keep (nearly) every core of the machine busy while the devices wait for the host, so more
loader threads cannot help: they take cores from each other and from the threads that dispatch work to
the GPU. In order:

    # 1. size the loader to the cores left after dispatch (grain / tf.data)
    loader = grain.DataLoader(..., worker_count=max(1, os.cpu_count() - 2))
    # tf.data feeding JAX: options.threading.private_threadpool_size = max(2, os.cpu_count() - 2)
    # 2. do less per example on the host: decode once and cache, augment on the device inside the jitted step
    # 3. keep XLA's CPU thread pool from competing when the model runs on the GPU
    XLA_FLAGS="--xla_cpu_multi_thread_eigen=false" python train.py

When the input pipeline alone needs more cores than the machine has, the host is too small for this job:
use a machine with more CPU cores per GPU, or preprocess the data offline.""",
                docs=(L.GRAIN, L.JAX_GPU_TIPS, L.TF_DATA_PERFORMANCE),
            ),
            pytorch=Idiom(
                fix_summary="Size DataLoader workers and torch threads to the cores, or preprocess off the host.",
                fix="""\
Host threads keep (nearly) every core busy while the GPU waits for the host. Size the pools to the cores
(each rank on the machine gets its share):

    cores = max(1, os.cpu_count() // max(1, torch.cuda.device_count()))
    torch.set_num_threads(max(1, cores // 4))
    loader = DataLoader(ds, num_workers=max(1, cores - 2), pin_memory=True, persistent_workers=True)

Decode once and cache, augment on the GPU, or use a machine with more CPU cores per GPU.""",
                docs=(L.TORCH_DATA, L.TORCH_TUNING),
            ),
        ),
        "threading.tf_data_contention": Entry(
            category="threading",
            title="GPU launch threads compete with tf.data for the CPU",
            fix_summary="Set TF_GPU_THREAD_MODE=gpu_private so the GPU gets dedicated launch threads.",
            fix="""\
Kernel launches leave the GPU idle while tf.data threads run on the same CPU cores; launch threads then
wait for a core. Give each GPU its own launch threads and bound the op thread pools:

    TF_GPU_THREAD_MODE=gpu_private TF_GPU_THREAD_COUNT=2 python train.py

    num_cores = os.cpu_count()                                # this host's logical cores
    tf.config.threading.set_inter_op_parallelism_threads(2)   # before any op runs
    tf.config.threading.set_intra_op_parallelism_threads(max(1, num_cores // 2))
    options = tf.data.Options()
    options.threading.private_threadpool_size = max(2, num_cores - 4)  # leave cores for launches
    ds = ds.with_options(options)""",
            docs=(L.TF_GPU_PERFORMANCE, L.TF_THREADING),
        ),
    },
)


def tf_data_contention(ctx):
    """Launch calls starve the GPU while tf.data runs on the same host, and GPU threads are not private.

    Contention needs evidence: host threads busy for (nearly) as many cores as the machine has. Without the core
    count in the trace the finding says so and stays low."""
    if not ctx.has_gpu or not ctx.pipeline.in_use or ctx.has_thread("tf_gpu_private") or ctx.has_thread("gpu_private"):
        return None
    launch_ms = ctx.category_ms("launch")
    share = ctx.share_pct(launch_ms)
    if share < LAUNCH_MEDIUM_PCT or ctx.window_ps <= 0:
        return None
    busy = {
        kind: round(total / 1e9, 3)
        for kind, (_, total) in sorted(ctx.host.thread_busy.items())
        if kind.startswith("tf_data")
    }
    load = ctx.analysis.cpu_load
    busy_cores, tf_data_cores, cores = load.busy_cores or 0.0, load.cores_of("tf_data"), load.machine_cores
    if cores is not None and busy_cores < CONTENTION_MIN_CORE_FRACTION * cores:
        return None  # the CPU had cores to spare: launches were not waiting for one
    if cores is None and share < LAUNCH_HIGH_PCT:
        return None  # saturation cannot be measured: only a launch share XProf calls high is worth the hint
    if cores is None:
        severity = "low"
        summary = (
            f"The GPU idles {share:.1f}% {ctx.of_the_step} during launch calls while tf.data threads keep "
            f"{tf_data_cores:.2f} cores busy; the trace does not record the machine's core count, so "
            "contention for cores is not proven."
        )
    else:
        severity = min(grade(share, LAUNCH_HIGH_PCT, LAUNCH_MEDIUM_PCT), "medium", key=("low", "medium", "high").index)
        summary = (
            f"The GPU idles {share:.1f}% {ctx.of_the_step} during launch calls while host threads keep "
            f"{busy_cores:.2f} of the machine's {cores} cores busy (tf.data: {tf_data_cores:.2f})."
        )
    return Finding(
        id="threading.tf_data_contention",
        severity=severity,
        summary=summary,
        evidence=Evidence(
            {
                "launch_exposed_pct": share,
                "host_busy_cores": busy_cores,
                "tf_data_busy_cores": tf_data_cores,
                "machine_cores": cores,
                "tf_data_thread_busy_ms": busy,
            },
            limit(
                "host_busy_cores",
                busy_cores,
                None if cores is None else round(CONTENTION_MIN_CORE_FRACTION * cores, 2),
                launch_exposed_pct_above=LAUNCH_MEDIUM_PCT,
                gpu_private_threads=False,
            ),
            {"threads": sorted(busy)},
        ),
        recoverable_ms=launch_ms,
        window_ms=ctx.window_ms,
        speedup_basis="upper bound: the GPU idle during launch calls removed",
    )


def host_cpu_saturated(ctx: Context) -> Finding | None:
    """Host threads keep >= CONTENTION_MIN_CORE_FRACTION of the machine's cores busy while the GPU waits on the
    host (input wait, host work, launch calls). Needs the core count in the trace: without it no claim."""
    load = ctx.analysis.cpu_load
    if not ctx.has_gpu or load is None or load.load_ratio is None or ctx.window_ps <= 0:
        return None
    needed = round(CONTENTION_MIN_CORE_FRACTION * load.machine_cores, 2)
    if load.busy_cores < needed:
        return None
    waiting_ms = sum(ctx.category_ms(name) for name in ("input_wait", "input_prep", "host", "launch"))
    share = ctx.share_pct(waiting_ms)
    if share < INPUT_MEDIUM_PCT:
        return None  # the cores are busy, but the GPU does not wait for them
    tf_data_cores = load.cores_of("tf_data")
    top = [f"{kind} ({threads} threads): {cores:.2f} cores" for kind, threads, cores in load.by_kind[:4]]
    input_heavy = tf_data_cores >= 0.5 * load.busy_cores
    note = (
        f"tf.data's threads alone keep {tf_data_cores:.2f} of the {load.machine_cores} cores busy: the host has "
        "too few cores for this input pipeline."
        if input_heavy
        else f"Busiest threads: {'; '.join(top)}."
    )
    return Finding(
        id="threading.host_cpu_saturated",
        severity="medium" if share >= HOST_HIGH_PCT else "low",
        summary=f"Host threads keep {load.busy_cores:.2f} cores' worth of thread time busy on a machine with "
        f"{load.machine_cores} cores while the GPU waits on the host {share:.1f}% {ctx.of_the_step}.",
        evidence=Evidence(
            {
                "host_busy_cores": load.busy_cores,
                "machine_cores": load.machine_cores,
                "busy_cores_over_machine_cores": load.load_ratio,
                "tf_data_busy_cores": tf_data_cores,
                "host_waiting_cores": load.waiting_cores,
                "gpu_waits_on_host_pct": share,
                "profile_span_ms": load.span_ms,
                "busy_cores_by_thread": {kind: cores for kind, _, cores in load.by_kind[:8]},
            },
            limit("host_busy_cores", load.busy_cores, needed, gpu_waits_on_host_pct_above=INPUT_MEDIUM_PCT),
            {"threads": [kind for kind, _, _ in load.by_kind[:4]]},
        ),
        recoverable_ms=waiting_ms,
        window_ms=ctx.window_ms,
        speedup_basis="upper bound: the GPU never waiting on the host (input, host work, launches)",
        fix_note=note,
    )


RULES = (host_cpu_saturated, tf_data_contention)
