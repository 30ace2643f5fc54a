"""The verdict: the single bottleneck that holds the run back most, in one sentence with its number."""

from __future__ import annotations

from dataclasses import dataclass

from tb_gpu_advisor.analysis.capture_overhead import UNPROFILED_STEP
from tb_gpu_advisor.analysis.breakdown import COMPUTE_CATEGORIES
from tb_gpu_advisor.findings.causes import explains
from tb_gpu_advisor.findings.cpu_verdict import cpu_verdict
from tb_gpu_advisor.findings.wait_link import time_line_link
from tb_gpu_advisor.findings.thresholds import LAUNCH_GAP_MAX_US, UNEXPLAINED_IDLE_PCT, VERDICT_MIN_PCT
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.waits import WAIT_KIND_TEXT
from tb_gpu_advisor.report.units import duration_ms
from tb_gpu_advisor.vocabulary import BOTTLENECK_LABELS, BREAKDOWN_LABELS, in_sentence

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.findings.context import Context
    from tb_gpu_advisor.findings.finding import Finding


BOTTLENECKS = ("input", "host", "host_blocked", "launch", "transfer", "kernel", "communication", "none", "unknown")
# Finding category -> the bottleneck it is evidence of. Batch and "other" findings are advice, not a bottleneck.
BOTTLENECK_OF_CATEGORY = {
    "input": "input",
    "host": "host",
    "threading": "host",
    "placement": "host",
    "launch": "launch",
    "transfer": "transfer",
    "sync": "transfer",
    "occupancy": "kernel",
    "kernel": "kernel",
    "precision": "kernel",
    "fusion": "kernel",
    "memory": "kernel",
    "communication": "communication",
}
# Findings whose bottleneck is not their category's: the GPU's idle after a read back or a sync is the host's
# dispatch before its next launch (a 4-byte read is no transfer); a step thread blocked inside an op call with
# nothing traced is waiting, not working (a wait is no evidence that the waiter is slow).
BOTTLENECK_OF_FINDING = {
    "transfer.d2h_sync_in_step": "host",
    "sync.host_syncs_in_step": "host",
    "host.op_stall": "host_blocked",
}


def bottleneck_of(finding: Finding) -> str | None:
    """The bottleneck a finding is evidence of, or None for advice (batch size, notes). A thread feeding the device
    that waits on another thread is blocked: on its loader (input), or on a lock another thread holds."""
    if finding.id == "host.feeder_blocked":
        return "host_blocked" if finding.evidence.metrics.get("cause") == "lock_contention" else "input"
    return BOTTLENECK_OF_FINDING.get(finding.id) or BOTTLENECK_OF_CATEGORY.get(finding.category)


# The finding whose recoverable time is exactly the breakdown category of a bottleneck.
DIRECT = {
    "input.gpu_waits_for_input": "input",
    "input.main_process_loader": "input",
    "host.gpu_idle_host_busy": "host",
    "launch.gpu_starved_by_launches": "launch",
    "communication.allreduce_exposed": "communication",
}


@dataclass(frozen=True)
class Verdict:
    bottleneck: str
    sentence: str
    reason: str | None = None
    finding_id: str | None = None

    def summary_fields(self) -> dict[str, None | str]:
        return {
            "bottleneck": self.bottleneck,
            "verdict": self.sentence,
            "bottleneck_reason": self.reason,
            "bottleneck_finding": self.finding_id,
        }


def _p(value):
    """A share as people say it: 60%, 8.5%; a share short of all of it never reads 100% (99.8% stays 99.8%, as
    the busy tile rounds it, beside the 0.2% idle it leaves; 99.96% reads 99.9%)."""
    value = value or 0.0
    if 99.5 <= value < 100:
        return f"{min(round(value, 1), 99.9):.1f}%"
    return f"{value:.0f}%" if value >= 10 else f"{value:.1f}%"


def decide(ctx: Context, findings: tuple) -> Verdict:
    """Verdict from the ranked findings and the step-time breakdown of `ctx`."""
    breakdown = ctx.analysis.breakdown_pct
    if not ctx.has_gpu and ctx.model.tpu_count and not ctx.model.gpus:
        return _unknown(
            f"this is a TPU profile ({ctx.model.tpu_count} TPU planes, no GPU); XProf's TPU tools in "
            "TensorBoard's Profile tab analyze it."
        )
    if not ctx.has_gpu and ctx.model.gpu_metric_ranges and not ctx.model.gpus:
        return _unknown(
            f"this is a CUPTI range-profiler capture on a GPU ({ctx.model.gpu_metric_ranges:,} "
            "cuda_profiler_range events): it records hardware counters, not kernel times, so GPU "
            "bottlenecks cannot be measured from it."
        )
    if ctx.window_ms <= 0:
        return _unknown("the profile has no GPU or host activity to measure.")
    if not ctx.has_gpu:
        wait = ctx.analysis.pipeline_wait_pct or 0.0  # tf.data's own; loader waits are host.feeder_blocked's
        eager = next(
            (
                f
                for f in findings
                if f.id == "host.eager_execution"
                and f.severity in ("high", "medium")
                and ctx.share_pct(f.recoverable_ms) >= VERDICT_MIN_PCT
            ),
            None,
        )
        dispatch = eager.evidence.metrics.get("dispatch_and_python_pct") or 0.0 if eager is not None else 0.0
        host_input = _host_input(ctx, findings)
        if eager is not None and dispatch > wait and (host_input is None or dispatch >= host_input[0]):
            return Verdict(
                "host",
                f"Host-bound (eager dispatch): ops run one at a time, and their calls and the "
                f"Python between them take {_p(dispatch)} of the step (no GPU work in this "
                "profile).",
                finding_id=eager.id,
            )
        related = next((f.id for f in findings if f.category == "input"), None) or next(
            (
                f.id
                for f in findings
                if f.id == "host.python_function" and f.evidence.metrics.get("py_function_in_tf_data")
            ),
            None,
        )
        host = breakdown.get("host") or 0.0
        # Without a GPU the host's compute is the model's own work: a minor wait with no finding on the input
        # pipeline to act on does not make the run input-bound.
        if (
            wait >= VERDICT_MIN_PCT
            and (host_input is None or wait >= host_input[0])
            and (related is not None or wait >= host)
        ):
            return Verdict(
                "input",
                f"Input-bound: the training step waits for {_input_source(ctx, 'tf.data')} "
                f"{_p(wait)} of its time (no GPU work in this profile).",
                finding_id=related,
            )
        if host_input is not None:
            return host_input[1]
        if wait >= VERDICT_MIN_PCT:
            return _unknown(
                f"no GPU work in this profile ({_no_gpu_work(ctx)}), so GPU "
                f"bottlenecks cannot be measured; the step computes on the host {_p(host)} of its time "
                f"and waits for {_input_source(ctx, 'tf.data')} {_p(wait)}, with no input stage "
                "found to change."
            )
        cpu = cpu_verdict(ctx, breakdown, _p)
        if cpu is not None:
            return _unknown(cpu[1]) if cpu[0] == "unknown" else Verdict(cpu[0], cpu[1])
        return _unknown(f"no GPU work in this profile ({_no_gpu_work(ctx)}), so GPU bottlenecks cannot be measured.")
    return _with_idle_gpus(_gpu_verdict(ctx, findings, breakdown), findings)


def _no_gpu_work(ctx):
    """What the trace lacks, in its own format's words: XPlane's device planes, Kineto's GPU events."""
    if ctx.model.format == "kineto":
        return "no kernel, gpu_memcpy or gpu_memset event"
    return "no /device:GPU plane with kernels or copies"


# CPU-only input findings measured on the step thread rather than in the breakdown: (finding id, metric of its share).
_HOST_INPUT = (("input.host_batch_prep", "batch_prep_pct"), ("host.feeder_blocked", "feeder_blocked_pct"))
_DEVICE_IDLES = {"xla_cpu": "XLA's CPU executor idles", "tf_cpu": "no tf.function runs"}


def _host_input(ctx, findings):
    """(share %, Verdict) of a CPU-only profile whose step thread builds its batch (input.host_batch_prep) or waits
    on its loader thread (host.feeder_blocked) for a large part of each step, the larger of the two; else None."""
    found = []
    for finding_id, metric in _HOST_INPUT:
        finding = next((f for f in findings if f.id == finding_id and f.severity in ("high", "medium")), None)
        share = finding.evidence.metrics.get(metric) or 0.0 if finding is not None else 0.0
        if finding is not None and share >= VERDICT_MIN_PCT:
            found.append((share, finding))
    if not found:
        return None
    share, finding = max(found, key=lambda item: item[0])
    each = "of each step" if ctx.step_set.steps else "of the profiled time"
    if finding.id == "input.host_batch_prep":
        idles = _DEVICE_IDLES.get(finding.evidence.metrics.get("device"), "the device idles")
        text = f"Input-bound: the host prepares each batch while {idles} ({_p(share)} {each}; "
    elif finding.evidence.metrics.get("cause") == "lock_contention":
        return share, Verdict(
            "host_blocked",
            f"{BOTTLENECK_LABELS['host_blocked']}: the step thread waits on a lock another thread holds {_p(share)} "
            f"{each} (no GPU work in this profile).",
            finding_id=finding.id,
        )
    else:
        kind = WAIT_KIND_TEXT.get(finding.evidence.metrics.get("wait_kind"), "a queue")
        text = f"Input-bound: the step thread waits on its loader, through {kind}, {_p(share)} {each} ("
    return share, Verdict("input", text + "no GPU work in this profile).", finding_id=finding.id)


def _gpu_verdict(ctx, findings, breakdown):
    """The verdict of a profile in which a GPU worked."""
    top = _top(ctx, findings)
    if top is not None:
        return _with_straggler(_sentence(ctx, bottleneck_of(top), top), findings)
    idle = breakdown.get("idle") or 0.0
    if idle >= UNEXPLAINED_IDLE_PCT:
        cause = (
            "no /host:CPU plane was recorded, so the cause cannot be told"
            if not ctx.model.has_host_plane
            else "no host activity was recorded at those times"
        )
        return _unknown(f"the GPU idles {_p(idle)} of the step and {cause}.")
    each = "of each step" if ctx.step_set.steps else "of the profiled time"
    gpus = len(ctx.analysis.active_busy_pct)
    if gpus > 1 and ctx.analysis.gpu_busy_pct is not None:
        # The Time line's compute (any GPU computing, over the steps), the number shown beside it; the busy mean
        # over the GPUs' own windows is the header's, named as such.
        compute = sum(breakdown.get(key) or 0.0 for key in COMPUTE_CATEGORIES)
        busy = (
            f"at least one of the {gpus} GPUs computes {_p(compute)} {each} (the Time line's compute; GPU busy, the "
            f"mean over the {gpus} GPUs, is {_p(ctx.analysis.gpu_busy_pct)})"
        )
    else:
        busy = f"the GPU is busy {_p(ctx.analysis.gpu_busy_pct)} {each}"
    large = _large_categories(breakdown)
    if _possible_gain_pct(ctx, findings) >= VERDICT_MIN_PCT:
        # Estimates and bounds below the verdict's bar can still add up to more than it: do not deny them.
        return Verdict(
            "none",
            f"No bottleneck: {busy} and no cause is measured to cost {VERDICT_MIN_PCT:.0f}% "
            f"or more{large}; the findings below estimate what their fixes could still gain, none of "
            "them a bottleneck.",
        )
    return Verdict("none", f"No bottleneck: {busy} and no single cause costs {VERDICT_MIN_PCT:.0f}% or more{large}.")


def _large_categories(breakdown):
    """ " (device→device copy/memset takes 12% of the step; ...)": the time breakdown's categories other than
    compute at VERDICT_MIN_PCT or more beside a verdict of no bottleneck, so that it never reads "no cause costs
    10%" beside a bar showing one; "" when there are none."""
    large = [
        (category, pct)
        for category, pct in breakdown.items()
        if category not in COMPUTE_CATEGORIES and category in BREAKDOWN_LABELS and (pct or 0.0) >= VERDICT_MIN_PCT
    ]
    if not large:
        return ""
    named = " and ".join(f"{in_sentence(BREAKDOWN_LABELS[category])} {_p(pct)}" for category, pct in large)
    return f" ({named} of the step, in the time breakdown, which no finding measures as lost time)"


def _possible_gain_pct(ctx, findings):
    """The summed share of the step that the medium and high findings naming a bottleneck claim to recover
    (what the combined estimate counts, before overlaps)."""
    return sum(
        ctx.share_pct(f.recoverable_ms)
        for f in findings
        if f.category in BOTTLENECK_OF_CATEGORY and f.severity in ("high", "medium")
    )


def _with_idle_gpus(verdict, findings):
    """The verdict adding the GPUs the job leaves idle (environment.idle_gpus): the busy shares are the working
    GPUs', and the idle ones are capacity the job does not use."""
    idle = next((f for f in findings if f.id == "environment.idle_gpus"), None)
    if idle is None:
        return verdict
    metrics = idle.evidence.metrics
    text = (
        f"{verdict.sentence} Besides, {metrics['idle_gpus']} of the {metrics['gpus_in_profile']} GPUs this "
        "process sees ran no kernel: the job uses fewer GPUs than it has."
    )
    return Verdict(verdict.bottleneck, text, verdict.reason, verdict.finding_id)


def _with_straggler(verdict, findings):
    """The verdict naming the straggler GPU when another finding is the top one: synchronous steps wait for it."""
    straggler = next((f for f in findings if f.id == "communication.gpu_imbalance" and f.severity != "low"), None)
    if straggler is None or verdict.finding_id == straggler.id:
        return verdict
    device = straggler.evidence.pointers.get("straggler")
    cause = straggler.evidence.metrics.get("cause")
    text = f"{verdict.sentence} {device} is a straggler ({cause} cause): the other GPUs wait for it every step."
    return Verdict(verdict.bottleneck, text, verdict.reason, verdict.finding_id)


def _input_source(ctx, otherwise=None):
    """What the step waits on for input, in the framework's words."""
    if ctx.framework.name == "pytorch":
        return "the DataLoader"
    return otherwise or ("tf.data" if ctx.pipeline.in_use else "input")


def _unknown(reason):
    return Verdict("unknown", f"Unknown: {reason[0].upper()}{reason[1:]}", reason=reason)


def _top(ctx, findings):
    """The finding with the most recoverable time among those that name a bottleneck: medium or high for lost
    time, high for kernel-speed estimates (a busy GPU is not "bottlenecked" by a medium estimate)."""

    def counts(finding: Finding) -> bool:
        needed = ("high",) if bottleneck_of(finding) == "kernel" else ("high", "medium")
        return finding.severity in needed and ctx.share_pct(finding.recoverable_ms) >= VERDICT_MIN_PCT

    eligible = [f for f in findings if f.category in BOTTLENECK_OF_CATEGORY and counts(f)]
    if not eligible:
        return None

    def share(finding: Finding) -> float:  # a cause carries the time of the symptoms it explains (findings.causes)
        return max(
            [finding.recoverable_ms / finding.window_ms if finding.window_ms else 0.0]
            + [s.recoverable_ms / s.window_ms for s in eligible if s.window_ms and explains(finding, s)]
        )

    return max(eligible, key=lambda f: (share(f), -findings.index(f)))


def _sentence(ctx, bottleneck, top):
    breakdown = ctx.analysis.breakdown_pct
    share = _p(ctx.share_pct(top.recoverable_ms))
    # The share is what the top finding's fix recovers, in its badge's word: a bound "up to", a model "about".
    word = "about" if top.speedup_kind == "model" else "up to"
    each = "of each step" if ctx.step_set.steps else "of the profiled time"
    title = top.title or top.entry.title  # a rule's title for what this profile shows, else the catalog's
    if DIRECT.get(top.id) == "input":
        source = _input_source(ctx)
        text = f"Input-bound: the GPU waits for {source} {_p(ctx.analysis.pipeline_wait_pct)} {each}."
    elif DIRECT.get(top.id) in ("host", "launch"):
        # The share is the finding's (its speedup's): of the step the Note sets the estimates against, where
        # that is the step without the profiler's own host time (review finalA 3).
        if top.speedup_basis.endswith(UNPROFILED_STEP):
            each = f"of {UNPROFILED_STEP}"
        why = "while the host works" if DIRECT[top.id] == "host" else "waiting for kernel launch calls"
        text = f"{BOTTLENECK_LABELS[DIRECT[top.id]]}: the GPU idles {share} {each} {why}."
    elif DIRECT.get(top.id) == "communication" or top.id == "collectives.comm_bound":
        exposed = top.evidence.metrics.get("collectives_exposed_pct", breakdown["collectives"])
        text = f"Communication-bound: collectives with no compute beside them take {_p(exposed)} {each}"
        text += (
            f", more than the compute left can hide (the GPU counts as busy {_p(ctx.analysis.gpu_busy_pct)} with them)."
            if top.id == "collectives.comm_bound"
            else "."
        )
    elif bottleneck == "kernel":
        compute = sum(breakdown.get(key) or 0.0 for key in COMPUTE_CATEGORIES)
        text = (
            f"Kernel-bound: the GPU computes {_p(compute)} {each}, and {title[0].lower()}"
            f"{title[1:]} ({word} {share} {'of the step' if ctx.step_set.steps else each} "
            "recoverable)."
        )
    else:
        text = f"{BOTTLENECK_LABELS[bottleneck]}: {title[0].lower()}{title[1:]} ({word} {share} {each} recoverable)."
        text += time_line_link(top, breakdown)
    if not ctx.step_set.steps and bottleneck in ("input", "host", "host_blocked", "launch"):
        text += _without_steps(ctx)
    return Verdict(bottleneck, text, finding_id=top.id)


def _without_steps(ctx):
    """What host-side idle time means in a profile without step markers: setup or a benchmark between calls
    looks the same as a slow training step."""
    busy = intervals.intersect(ctx.gpu_busy, ctx.window) if len(ctx.window) else ctx.gpu_busy
    gaps = busy.start_ps[1:] - busy.end_ps[:-1]
    bursts = 1 + int((gaps > LAUNCH_GAP_MAX_US * 1e6).sum())
    shape = (
        f" The GPU works in {bursts} separate bursts with host time between them, as a micro-benchmark or "
        "setup code does."
        if bursts > 1
        else ""
    )
    return (
        f" No step markers, so this is over all {duration_ms(ctx.window_ms)} of activity, not a training step."
        f"{shape} "
        + ctx.say(
            "Mark the step (tf.profiler.experimental.Trace) to measure it.",
            "Mark the step (jax.profiler.StepTraceAnnotation) to measure it.",
            "Mark the step (prof.step() after each step under torch.profiler) to measure it.",
        )
    )
