"""The thread feeding the device blocked on other threads (host.feeder_blocked)."""

from __future__ import annotations

from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import Evidence, Finding, estimated, grade, ladder
from tb_gpu_advisor.findings.thresholds import FEEDER_PRODUCER_BUSY_SHARE, INPUT_HIGH_PCT, INPUT_MEDIUM_PCT
from tb_gpu_advisor.model.waits import PRODUCER_KINDS, WAIT_KIND_TEXT
from tb_gpu_advisor.whatif.estimate import bound as whatif_bound
from tb_gpu_advisor.vocabulary import listed


FEEDER_STEPS_LISTED = 100  # host.feeder_blocked's pointers.per_step_ms: the first steps only


def _thread_name(label):
    """A thread as the text names it: its own name, or for an unnamed one (model.waits.thread_label) the end of
    its id, which XPlane makes 19 digits long."""
    if not label.startswith("thread "):
        return label
    thread_id = label[len("thread ") :]
    return f"the unnamed thread (id …{thread_id[-4:]})" if len(thread_id) > 8 else label


def feeder_blocked(ctx):
    """The thread that feeds the device (it dispatches or launches device work, or marks steps) blocked in a
    Python-tracer wait on another thread (a queue, a condition, a future, a lock: model.waits) while every device
    idles (analysis.feeder_waits); tf.data/DataLoader input waits and GC pauses are their own findings."""
    found = ctx.analysis.feeder_waits
    if found is None:
        return None
    blocked_ms = ms(found.total_ps)
    share = ctx.share_pct(blocked_ms)
    severity = grade(share, INPUT_HIGH_PCT, INPUT_MEDIUM_PCT)
    if severity is None:
        return None
    kind = found.main_kind
    feeders = listed(found.feeders)
    device = "the GPUs" if found.device == "gpu" else "XLA's CPU executor"
    producer = next((other for other in found.others if other.wakes), None)
    busy_pct = round(100.0 * producer.busy_ps / found.total_ps, 1) if producer is not None else None
    waiting_pct = round(100.0 * producer.waiting_ps / found.total_ps, 1) if producer is not None else None
    computing_pct = round(busy_pct - waiting_pct, 1) if producer is not None else None
    calls = [
        {"function": call.name, "ms_per_step": ctx.per_step_ms(ms(call.ps)), "waits": call.waits}
        for call in found.other_calls[:3]
    ]
    ran = (
        "; it ran " + ", ".join(f"{c['function']} {c['ms_per_step']:.2f} ms" for c in calls) + " per step"
        if calls and ctx.step_count
        else ""
    )
    if kind in PRODUCER_KINDS:
        condition, cause = None, "producer_slow"
        who = (
            ""
            if producer is None
            else (
                f"The producer ({_thread_name(producer.thread)}: {producer.wakes} queue "
                "puts or signals during the waits)"
            )
        )
        if producer is None:
            note = (
                "No traced thread put into the queue or signalled it during the waits: the producer runs in "
                "another process (multiprocessing, DataLoader workers) or without Python-tracer events."
            )
        elif computing_pct >= 100 * FEEDER_PRODUCER_BUSY_SHARE:
            note = (
                f"{who} was computing through {computing_pct:.0f}% of them{ran}: it makes batches slower than "
                "the step uses them. Python work holds the GIL: spread it over processes (loader workers, "
                "tf.data's parallel map) rather than threads."
            )
        elif waiting_pct >= 100 * FEEDER_PRODUCER_BUSY_SHARE:
            slept = [c for c in calls if c["waits"]]
            spent = (
                " and ".join(f"{c['ms_per_step']:.2f} ms per step in {c['function']}" for c in slept)
                if slept and ctx.step_count
                else f"{waiting_pct:.0f}% of the waits in sleeps and file reads"
            )
            note = (
                f"{who} spends {spent}, through {waiting_pct:.0f}% of the step thread's waits: waiting, not "
                "computing (on I/O or a timer). Several loaders overlap those waits; faster code in the loader "
                "would not help."
            )
        else:
            note = (
                f"{who} was busy through only {busy_pct:.0f}% of them{ran}: it is waiting itself (on I/O or a "
                "lock the trace does not show), so more producers help only where those waits overlap."
            )
    else:
        condition, cause = "lock_contention", "lock_contention"
        holders = [other for other in found.others if other.wakes]
        named = ", ".join(
            f"{_thread_name(other.thread)} released a lock {other.wakes} times during the waits"
            for other in holders[:3]
        )
        note = (
            f"Another thread holds the lock: {named}."
            if holders
            else "The trace does not show which thread holds the lock (no traced release during the waits)."
        )
    if (
        found.device != "gpu"
        and cause == "producer_slow"
        and producer is not None
        and computing_pct < 100 * FEEDER_PRODUCER_BUSY_SHARE <= waiting_pct
    ):
        note += " This is a CPU-only run, but loaders that wait take little of the cores the step uses."
    elif found.device != "gpu":
        note += (
            " This is a CPU-only run: the other threads share the cores with the step, so a faster producer "
            "or a shorter critical section competes with it for them."
        )
    if found.device != "gpu":
        severity = "medium" if severity == "high" else severity
    kinds = [{"kind": name, "what": WAIT_KIND_TEXT[name], "ms": ms(ps)} for name, ps in found.kinds]
    per_step = [ms(ps) for ps in found.per_step_ps[:FEEDER_STEPS_LISTED]]
    finding = Finding(
        id="host.feeder_blocked",
        severity=severity,
        condition=condition,
        summary=f"The thread feeding {device} ({feeders}) waits on {WAIT_KIND_TEXT[kind]} for "
        f"{ctx.time_text(blocked_ms)} while {device} {'idle' if found.device == 'gpu' else 'idles'}: "
        f"{share:.1f}% of the step time.",
        evidence=Evidence(
            {
                "feeder_blocked_ms": blocked_ms,
                "feeder_blocked_ms_per_step": ctx.per_step_ms(blocked_ms),
                "feeder_blocked_pct": share,
                "waits": found.wait_count,
                "wait_kind": kind,
                "cause": cause,
                "feeder_threads": feeders,
                "device": found.device,
                "producer_thread": producer.thread if producer is not None else None,
                "producer_busy_pct": busy_pct,
                "producer_waiting_pct": waiting_pct,
                "producer_computing_pct": computing_pct,
            },
            ladder("feeder_blocked_pct", share, INPUT_HIGH_PCT, INPUT_MEDIUM_PCT),
            {
                "per_step_ms": per_step,
                "wait_kinds": kinds,
                "other_threads": [
                    {"thread": other.thread, "busy_ms": ms(other.busy_ps), "wakes": other.wakes}
                    for other in found.others[:5]
                ],
                "other_calls": calls,
                "time_ranges_ms": ctx.longest_ranges_ms(found.blocked),
                "steps": ctx.steps_overlapping(found.blocked),
            },
        ),
        recoverable_ms=blocked_ms,
        window_ms=ctx.window_ms,
        speedup_basis="",
        fix_note=note,
    )
    step_ms = ctx.mean_step_ms if ctx.step_count and ctx.mean_step_ms else ctx.window_ms
    saved_ms = blocked_ms / ctx.step_count if ctx.step_count else blocked_ms
    return estimated(
        finding,
        whatif_bound(
            step_ms,
            step_ms - saved_ms,
            "upper bound: the feeding thread's waits on other threads during which "
            "every device idles, removed (a producer that keeps up, no lock held "
            "against the feeder)",
        ),
    )
