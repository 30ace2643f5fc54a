"""The host family's stall finding (host.op_stall, listed in rules.host.RULES): the step thread blocked inside an operator call (untraced time far above the op's own),
a wait for something outside the traced work, not slow host work."""

from __future__ import annotations

from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Entry, Idiom, register
from tb_gpu_advisor.findings.finding import Evidence, Finding, grade, ladder
from tb_gpu_advisor.findings.thresholds import HOST_HIGH_PCT, HOST_MEDIUM_PCT
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.host import OP_STALL_NEAR_TAG, OP_STALL_PREFIX


# The confidence reason of a report whose first finding is the stall: its cause is inferred from untraced time.
INFERRED_REASON = (
    "The first finding rests on inference: the step thread was blocked inside op calls with nothing traced, so "
    "what held it is inferred, not recorded. Sample its stack during a stall (py-spy dump --native) or capture "
    "with with_stack=True to name the wait."
)
# Finding id -> the confidence reason a report gets when that finding comes first (report.host_report).
INFERRED_CAUSES = {"host.op_stall": INFERRED_REASON}

STALL_ENTRIES = register(
    "host",
    {
        "host.op_stall": Entry(
            category="host",
            title="The step thread stalls inside an operator call",
            fix_summary="Find what the thread waited for (another thread, a lock, paging); compiling will not remove it.",
            fix="""\
An operator call took far longer than the same op in other steps, and its time lies outside every event
traced inside it: the thread was blocked, not working. The GPU idles meanwhile. Find what blocked it:
another thread holding the interpreter lock or a shared lock, memory being pinned or paged in, too few
free CPU cores (check the process's CPU affinity and the number of loader threads). Capture a Python
stack sample (py-spy dump) during the stall to see who holds the thread.""",
            docs=(L.TORCH_DATA, L.TORCH_TUNING),
            jax=Idiom(
                fix_summary="Find what the thread waited for (another thread, a lock, paging); jit will not remove it.",
                fix="""\
An operator call took far longer than the same call in other steps, and its time lies outside every event
traced inside it: the thread was blocked, not working. Find what blocked it: a loader thread holding the
interpreter lock, memory being pinned or paged in, too few free CPU cores (check the process's CPU affinity
and the loader's thread count). A Python stack sample (py-spy dump --native) during the stall shows it.""",
                docs=(L.JAX_GPU_TIPS,),
            ),
            pytorch=Idiom(
                fix_summary="Find what blocked the step thread (pin-memory thread, workers, affinity); not a compile fix.",
                fix="""\
An operator call took far longer than the same op in other steps, and its time lies outside every event
traced inside it: the thread was blocked, not working, and torch.compile would not remove the wait. When
it coincides with the DataLoader's pin-memory thread pinning the next batch, try:

    loader = torch.utils.data.DataLoader(dataset, ..., pin_memory=False)   # no pin-memory thread
    x = x.pin_memory().to("cuda", non_blocking=True)                      # pin in the step instead

or start fewer worker processes, and check the process's CPU affinity (os.sched_getaffinity(0)) leaves cores for the step thread. A Python
stack sample (py-spy dump --native) during the stall shows what held the thread.""",
                docs=(L.TORCH_DATA, L.TORCH_PIN_MEMORY),
            ),
        ),
    },
)


def stall_finding(ctx, finding_id):
    """Finding `finding_id`: the GPU idles while the host's step thread is blocked inside an op call
    (readers.kineto.op_stalls), or None."""
    if not ctx.has_gpu or not ctx.model.has_host_plane:
        return None
    tags = ctx.host.tagged
    stalls = ctx.op_stalls
    if not len(stalls):
        return None
    stall_ms = ctx.idle_cause_ms("host_stall")
    share = ctx.share_pct(stall_ms)
    severity = grade(share, HOST_HIGH_PCT, HOST_MEDIUM_PCT)
    if severity is None:
        return None
    ops = sorted(
        (
            (tag[len(OP_STALL_PREFIX) :], int((s.end_ps - s.start_ps).sum()))
            for tag, s in tags.items()
            if tag.startswith(OP_STALL_PREFIX)
        ),
        key=lambda item: -item[1],
    )
    names = [name.rsplit(": ", 1)[-1] for name, _ in ops[:4]]
    steps = ctx.steps_overlapping(stalls, limit=ctx.step_count or 1)
    near = tags.get(OP_STALL_NEAR_TAG, intervals.EMPTY)
    with_other = intervals.covered_ps(intervals.intersect(stalls, near), [0], [2**62])[0] if len(near) else 0
    company = ""
    if 2 * with_other >= intervals.covered_ps(stalls, [0], [2**62])[0]:
        company = ", in step with another thread's host calls" + (
            " (the DataLoader's pin-memory thread: its workers run in other processes)"
            if ctx.loader_workers_in_use
            else ""
        )
    return Finding(
        id=finding_id,
        severity=severity,
        summary=f"The GPU idles {share:.1f}% {ctx.of_the_step} while the step thread is blocked inside "
        f"{', '.join(names)} ({ctx.time_text(stall_ms)}, in {len(steps)} of {ctx.step_count} steps) with no "
        f"traced work{company}: a wait, not slow host work.",
        evidence=Evidence(
            {
                "stall_exposed_pct": share,
                "stall_exposed_ms": round(stall_ms, 3),
                "stall_exposed_ms_per_step": ctx.per_step_ms(stall_ms),
            },
            ladder("stall_exposed_pct", share, HOST_HIGH_PCT, HOST_MEDIUM_PCT),
            {
                "stalled_ops": [{"name": name, "untraced_ms": round(ps / 1e9, 3)} for name, ps in ops[:8]],
                "time_ranges_ms": ctx.longest_ranges_ms(stalls),
                "steps": steps[:8],
            },
        ),
        recoverable_ms=stall_ms,
        window_ms=ctx.window_ms,
        speedup_basis="upper bound: the step without the stalls (inferred from untraced time inside the ops)",
    )
