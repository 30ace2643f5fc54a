"""Threading findings: tf.data threads contending with the GPU launch threads."""

from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Entry, register
from tb_gpu_advisor.findings.finding import Evidence, Finding, capped, grade, limit
from tb_gpu_advisor.findings.thresholds import LAUNCH_HIGH_PCT, LAUNCH_MEDIUM_PCT

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


def tf_data_contention(ctx):
    """Launch calls starve the GPU while tf.data runs on the same host, and GPU threads are not private."""
    if not ctx.has_gpu or not ctx.pipeline.in_use or ctx.has_thread("tf_gpu_private") or ctx.has_thread("gpu_private"):
        return None
    launch_ms = ctx.category_ms("launch")
    share = ctx.share_pct(launch_ms)
    if share < LAUNCH_MEDIUM_PCT:
        return None
    busy = {kind: round(total / 1e9, 3) for kind, (_, total) in sorted(ctx.host.thread_busy.items())
            if kind.startswith("tf_data")}
    finding = Finding(
        id="threading.tf_data_contention", severity=grade(share, LAUNCH_HIGH_PCT, LAUNCH_MEDIUM_PCT),
        summary=f"The GPU idles {share:.1f}% of the step during launch calls while tf.data threads share the CPU.",
        evidence=Evidence({"launch_exposed_pct": share, "tf_data_thread_busy_ms": busy},
                          limit("launch_exposed_pct", share, LAUNCH_MEDIUM_PCT, gpu_private_threads=False),
                          {"threads": sorted(busy)}),
        recoverable_ms=launch_ms, window_ms=ctx.window_ms,
        speedup_basis="upper bound: the GPU idle during launch calls removed")
    return capped(finding, "medium")


RULES = (tf_data_contention,)
