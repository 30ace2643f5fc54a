"""Threading findings: tf.data threads contending with the GPU launch threads."""

from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Entry, register
from tb_gpu_advisor.findings.finding import Evidence, Finding, grade, limit
from tb_gpu_advisor.findings.thresholds import (CONTENTION_MIN_CORE_FRACTION, CORE_COUNT_KEYS, LAUNCH_HIGH_PCT,
                                                LAUNCH_MEDIUM_PCT)

ENTRIES = register("threading", {
    "threading.tf_data_contention": Entry(
        category="threading",
        title="GPU launch threads compete with tf.data for the CPU",
        fix_summary="Set TF_GPU_THREAD_MODE=gpu_private so the GPU gets dedicated launch threads.",
        fix="""\
Kernel launches leave the GPU idle while tf.data threads run on the same CPU cores; launch threads then
wait for a core. Give each GPU its own launch threads and bound the op thread pools:

    TF_GPU_THREAD_MODE=gpu_private TF_GPU_THREAD_COUNT=2 python train.py

    tf.config.threading.set_inter_op_parallelism_threads(2)   # before any op runs
    tf.config.threading.set_intra_op_parallelism_threads(num_cores // 2)
    options = tf.data.Options()
    options.threading.private_threadpool_size = num_cores - 4   # leave cores for launches
    ds = ds.with_options(options)""",
        docs=(L.TF_GPU_PERFORMANCE, L.TF_THREADING),
    ),
})


def _core_count(environment):
    """The machine's CPU core count when the trace records it (`/host:metadata` or Task Environment), else None."""
    for key in CORE_COUNT_KEYS:
        value = environment.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            return int(value)
        if isinstance(value, str) and value.strip().isdigit() and int(value) > 0:
            return int(value)
    return None


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
    busy = {kind: round(total / 1e9, 3) for kind, (_, total) in sorted(ctx.host.thread_busy.items())
            if kind.startswith("tf_data")}
    busy_cores = round(sum(total for _, total in ctx.host.thread_busy.values()) / ctx.window_ps, 2)
    tf_data_cores = round(sum(busy.values()) * 1e9 / ctx.window_ps, 2)
    cores = _core_count(ctx.model.environment)
    if cores is not None and busy_cores < CONTENTION_MIN_CORE_FRACTION * cores:
        return None  # the CPU had cores to spare: launches were not waiting for one
    if cores is None:
        severity = "low"
        summary = (f"The GPU idles {share:.1f}% of the step during launch calls while tf.data threads keep "
                   f"{tf_data_cores:.2f} cores busy; the trace does not record the machine's core count, so "
                   "contention for cores is not proven.")
    else:
        severity = min(grade(share, LAUNCH_HIGH_PCT, LAUNCH_MEDIUM_PCT), "medium", key=("low", "medium", "high").index)
        summary = (f"The GPU idles {share:.1f}% of the step during launch calls while host threads keep "
                   f"{busy_cores:.2f} of the machine's {cores} cores busy (tf.data: {tf_data_cores:.2f}).")
    return Finding(
        id="threading.tf_data_contention", severity=severity, summary=summary,
        evidence=Evidence({"launch_exposed_pct": share, "host_busy_cores": busy_cores,
                           "tf_data_busy_cores": tf_data_cores, "machine_cores": cores,
                           "tf_data_thread_busy_ms": busy},
                          limit("host_busy_cores", busy_cores,
                                None if cores is None else round(CONTENTION_MIN_CORE_FRACTION * cores, 2),
                                launch_exposed_pct_above=LAUNCH_MEDIUM_PCT, gpu_private_threads=False),
                          {"threads": sorted(busy)}),
        recoverable_ms=launch_ms, window_ms=ctx.window_ms,
        speedup_basis="upper bound: the GPU idle during launch calls removed")


RULES = (tf_data_contention,)
