"""What the slow steps' excess over the median step is, in words (steps.uneven_step_time): time a steady step does
not spend (idle, input, a late host), the step's own work, and waits. A wait is never evidence that the waiter is
slow: collective time on one rank includes waiting for the other ranks (where the profile holds every GPU of a
collective, analysis.collective_waits splits it into the wait for the last arrival and the transfer after it),
and the host waiting on the device waits for the device's work. The fix of each case names only what grew."""

from __future__ import annotations

from dataclasses import dataclass, replace

from tb_gpu_advisor.findings import links as L
from tb_gpu_advisor.findings.catalog import Idiom
from tb_gpu_advisor.report.units import durations_ms
from tb_gpu_advisor.vocabulary import BREAKDOWN_LABELS, in_sentence

# Below this (ms) a category's share of the excess is not named.
SHOWN_MIN_MS = 0.005
_INPUT = ("input_wait", "input_prep")
# The finding's title where its estimate is the slow steps' recoverable time, by condition: what the fix removes.
_INPUT_TITLE = "Some steps wait longer for input than a steady step"
TITLES = {
    "input": _INPUT_TITLE,
    "input_ahead": _INPUT_TITLE,
    "host_idle": "Some steps idle longer than a steady step",
    "more_work": "Some steps do more work than a steady step",
}
# The title where the slow steps mostly wait for other ranks (waits_for_peers), the wait measured against the last
# arrival (collective_split): no estimate on this rank.
PEERS_TITLE = "Some steps wait longer for other ranks than a steady step"
# The title where the slow steps mostly spend longer in collectives whose wait this trace cannot split from the
# transfer (one rank's trace): no estimate, no claim that the rank waits.
COLLECTIVES_TITLE = "Some steps spend longer in collectives than a steady step"
# Work categories that are the host's own (on a trace without a GPU, the step's compute is the host's).
_HOST_WORK = ("host", "launch", "copy_call")


def title_of(condition: str, excess: Excess) -> str:
    """The finding's title for `condition` (TITLES): where the slow steps mostly do more work and most of that
    work is the host's, "host work"."""
    largest = max(excess.work.items(), key=lambda item: item[1], default=(None, 0.0))[0]
    if condition == "more_work" and largest in _HOST_WORK:
        return "Some steps do more host work than a steady step"
    return TITLES[condition]


@dataclass(frozen=True)
class Excess:
    """The slow steps' excess over the median step (ms) by kind: {category: ms}, each largest first."""

    recoverable: dict
    work: dict
    waits: dict  # collectives here are the time that may be (or, split, is) waiting for peers
    collective_split: bool  # the collectives' wait was measured against the last-arriving GPU

    @property
    def work_ms(self) -> float:
        return sum(self.work.values())

    @property
    def waits_ms(self) -> float:
        return sum(self.waits.values())

    @property
    def input_ms(self) -> float:
        return sum(self.recoverable.get(name, 0.0) for name in _INPUT)


def excess_of(variance, waits=None) -> Excess:
    """Excess of a StepVariance; `waits` (analysis.collective_waits.CollectiveWaits) moves the collectives'
    transfer share to work where every GPU's collectives were matched."""
    grown = {name: value for name, value in variance.excess_by_category_ms.items() if value >= SHOWN_MIN_MS}
    recoverable = {n: v for n, v in grown.items() if n in variance.recoverable_categories}
    wait = {n: v for n, v in grown.items() if n in variance.wait_categories}
    work = {n: v for n, v in grown.items() if n not in recoverable and n not in wait}
    split = waits is not None and waits.matched_calls > 0 and "collectives" in wait
    if split:
        waited, moved = sum(waits.wait_ps.values()), sum(waits.transfer_ps.values())
        total = wait.pop("collectives")
        share = waited / (waited + moved) if waited + moved > 0 else 0.0
        if total * share >= SHOWN_MIN_MS:
            wait["collectives"] = total * share
        if total * (1 - share) >= SHOWN_MIN_MS:
            work["collectives"] = total * (1 - share)
    return Excess(_sorted(recoverable), _sorted(work), _sorted(wait), split)


def _sorted(values):
    return dict(sorted(values.items(), key=lambda item: -item[1]))


def listed(values: dict, has_gpu: bool = True, waits: bool = False, split: bool = False) -> str:
    """ "idle +2.81 ms, host compute +2.56 ms" of {category: ms}, largest first, at most three; as `waits`,
    collectives and the host's wait on a device that is the CPU say what they wait for."""
    shown = list(values.items())[:3]
    return ", ".join(f"{_label(name, has_gpu, waits, split)} +{durations_ms(value)[0]}" for name, value in shown)


def _label(name, has_gpu, waits, split):
    label = in_sentence(BREAKDOWN_LABELS[name])
    if not waits:
        return "collective transfer" if name == "collectives" and split else label
    if name == "collectives":
        return "collectives waiting for the last GPU" if split else "collectives (may be waiting for other ranks)"
    if name == "host_wait" and not has_gpu:
        return "host waiting on the device (the CPU executor's compute)"
    return label


def sentence(excess: Excess, has_gpu: bool) -> str:
    """ "; work: compute (32-bit) +94.77 ms; waits: ..." for what the excess holds besides its recoverable part."""
    text = ""
    if excess.work:
        text += f"; work: {listed(excess.work, has_gpu, split=excess.collective_split)}"
    if excess.waits:
        text += f"; waiting, not work: {listed(excess.waits, has_gpu, waits=True, split=excess.collective_split)}"
    return text


def waits_for_peers(excess: Excess) -> bool:
    """The collectives' wait is the largest part of the excess: more than its recoverable time, its work and its
    other waits each. The slow steps wait for other ranks (or, split, for the last GPU to arrive): what makes them
    slow is on another rank, which only the run's Ranks view shows."""
    peers = excess.waits.get("collectives", 0.0)
    others = (sum(excess.recoverable.values()), excess.work_ms, excess.waits_ms - peers)
    return peers > 0 and all(peers >= other for other in others)


def condition(excess: Excess, share_low: bool, works_ahead: bool = False) -> str:
    """The fix's condition: "work" (mostly work), "waits" (mostly waiting, most of it in collectives),
    "device_waits" (mostly waiting on the device or inside ops), "input" (mostly input wait; "input_ahead" where
    the trace shows a tf.data pipeline that already prefetches) or "host_idle" (idle or the host's own time).
    With a share to recover, "more_work" where work is the largest part of the excess (more than the recoverable
    time and the waits): the slow steps are slow in the step itself, whatever part of their excess is input."""
    if share_low:
        if excess.work_ms >= excess.waits_ms and excess.work_ms > 0:
            return "work"
        return "waits" if excess.waits.get("collectives", 0.0) >= 0.5 * excess.waits_ms else "device_waits"
    recoverable = sum(excess.recoverable.values())
    if excess.work_ms > recoverable and excess.work_ms >= excess.waits_ms:
        return "more_work"
    if excess.input_ms < 0.5 * recoverable:
        return "host_idle"
    return "input_ahead" if works_ahead else "input"


_WAITS_SUMMARY = "Nothing to remove on this rank: the slow steps wait (named above). Analyze all ranks together."
_WAITS_FIX = """The slow steps' extra time is mostly waiting (named above), and a wait says what a step waits for, not that it is
slow. Collective time on one rank's trace includes waiting for the other ranks: capture every rank for the same
steps into one run directory and analyze the directory, whose Ranks section shows which rank arrives late and
what it does meanwhile. The host waiting on the device waits for the device's work (on a trace without a GPU, the
framework's CPU executor computing): look at what runs there in the slow steps."""
_HOST_IDLE_FIX = """The slow steps' extra time is idle (nothing traced runs) or the host's own time, not input: untraced Python, a
garbage collection, or other processes sharing the machine's cores (several ranks or jobs on fewer cores than they
use). Open the slow steps in the trace (listed in the evidence) and see what runs before them; profile on an
otherwise idle machine, with as many cores as the processes on it use, before reading the spread as a problem."""

_MORE_WORK_FIX = """Most of the slow steps' extra time is the step's own work (named in the finding), not the input wait or
idle beside it, which is all the estimate removes: the step does more in some steps than in others. Either the
work per step varies (batches of different sizes or shapes, data-dependent work such as variable sequence
lengths), or something else takes the cores while the slow steps run: other processes or jobs on the machine,
or the input pipeline's own threads on the cores the step computes on (a machine with few cores). Open the slow
steps in the trace (listed in the evidence) and compare them with a steady one; profile on an otherwise idle
machine, with as many cores as the processes on it use, before reading the spread as a problem."""

# Finding ids whose fix removes the step's input wait (findings.overlaps.POOLS' input_wait) and names its cause.
_INPUT_CATEGORY = "input"
INPUT_CONDITIONS = ("input", "input_ahead")


def with_input_named(findings: tuple) -> tuple:
    """The findings (in report order), where the step-variance finding's slow steps mostly wait for input and
    another finding of the report names the input wait's cause and fix (an input finding with time to recover),
    with its fix pointing to that finding ("see finding #N") rather than to an open search."""
    named = next((n for n, f in enumerate(findings, 1) if f.category == _INPUT_CATEGORY and f.recoverable_ms > 0), None)
    if named is None:
        return findings
    return tuple(
        replace(f, condition="input_named", see=named)
        if f.id == "steps.uneven_step_time" and f.condition in INPUT_CONDITIONS
        else f
        for f in findings
    )


_INPUT_NAMED_SUMMARY = "The slow steps wait for input, whose cause and fix another finding names: see finding #{see}."
_INPUT_NAMED_FIX = """The slow steps wait longer for their batch than a steady step. Finding #{see} of this report names what holds
the input pipeline back and its fix: a pipeline that keeps up with the step also absorbs the batches that are
slower to produce. Where slow steps remain after that fix, find which stage of the input pipeline is slow in them
(its events in the slow steps of the trace, listed in the evidence)."""

_PEERS_SUMMARY = "Slow steps wait for other ranks: analyze the run directory; its Ranks section shows the late rank."
_PEERS_FIX = """The slow steps' extra time is mostly collectives waiting for the other ranks (named above): a rank that waits is
not the slow one, and removing its idle time does not shorten its steps while a peer arrives late. Capture every
rank for the same steps into one run directory and analyze the directory (tb-gpu-advisor analyze <run dir>): its
Ranks section shows which rank arrives late in these steps and what that rank does meanwhile; fix that rank."""
_COLLECTIVES_SUMMARY = (
    "Analyze the run directory: its Ranks section splits the collectives into peer wait and transfer."
)
_COLLECTIVES_FIX = """The slow steps' extra time is mostly in collectives (named above). One rank's trace cannot tell waiting for the
other ranks from the transfer itself: a late peer, or a slower transfer (a loaded network or shared cores), look
the same here, and removing this rank's idle time shortens neither. Capture every rank for the same steps into one
run directory and analyze the directory (tb-gpu-advisor analyze <run dir>): its Ranks section splits each rank's
collective time into the wait for the last rank to arrive and the transfer after it, and names the late rank
where one holds the others back; fix that rank, or, where the transfer grows, the link or the cores it shares."""

# Fixes per condition (catalog variants of steps.uneven_step_time).
VARIANTS = (
    (
        "any:collective_time",
        Idiom(fix_summary=_COLLECTIVES_SUMMARY, fix=_COLLECTIVES_FIX, docs=(L.TF_PROFILER, L.JAX_PROFILING)),
    ),
    (
        "pytorch:collective_time",
        Idiom(
            fix_summary=_COLLECTIVES_SUMMARY,
            fix=_COLLECTIVES_FIX
            + "\nRun torch.profiler on every rank with tensorboard_trace_handler(logdir) (one file per rank).",
            docs=(L.TORCH_PROFILER,),
        ),
    ),
    (
        "any:peer_waits",
        Idiom(fix_summary=_PEERS_SUMMARY, fix=_PEERS_FIX, docs=(L.TF_PROFILER, L.JAX_PROFILING)),
    ),
    (
        "pytorch:peer_waits",
        Idiom(
            fix_summary=_PEERS_SUMMARY,
            fix=_PEERS_FIX
            + "\nRun torch.profiler on every rank with tensorboard_trace_handler(logdir) (one file per rank).",
            docs=(L.TORCH_PROFILER,),
        ),
    ),
    (
        "any:input_named",
        Idiom(
            fix_summary=_INPUT_NAMED_SUMMARY,
            fix=_INPUT_NAMED_FIX,
            docs=(L.TF_DATA_PERFORMANCE,),
        ),
    ),
    (
        "pytorch:input_named",
        Idiom(
            fix_summary=_INPUT_NAMED_SUMMARY,
            fix=_INPUT_NAMED_FIX,
            docs=(L.TORCH_DATA,),
        ),
    ),
    (
        "any:more_work",
        Idiom(
            fix_summary="The slow steps mostly do more work: look for other processes on the cores, what varies per "
            "step.",
            fix=_MORE_WORK_FIX,
            docs=(L.TF_PROFILER, L.JAX_PROFILING),
        ),
    ),
    (
        "pytorch:more_work",
        Idiom(
            fix_summary="The slow steps mostly do more work: look for other processes on the cores, what varies per "
            "step.",
            fix=_MORE_WORK_FIX + "\nOpen the trace in Perfetto (ui.perfetto.dev).",
            docs=(L.TORCH_PROFILER,),
        ),
    ),
    (
        "any:waits",
        Idiom(
            fix_summary=_WAITS_SUMMARY,
            fix=_WAITS_FIX,
            docs=(L.TF_PROFILER, L.JAX_PROFILING),
        ),
    ),
    (
        "pytorch:waits",
        Idiom(
            fix_summary=_WAITS_SUMMARY,
            fix=_WAITS_FIX
            + "\nRun torch.profiler on every rank with tensorboard_trace_handler(logdir) (one file per rank).",
            docs=(L.TORCH_PROFILER,),
        ),
    ),
    (
        "any:device_waits",
        Idiom(
            fix_summary="The slow steps wait on the device (named above): look at what it runs in them.",
            fix="""The slow steps' extra time is mostly the host waiting on the device (named above), and a wait says what a step
waits for, not that it is slow: the device's work in those steps (on a trace without a GPU, the framework's CPU
executor computing) takes longer. Open the slow steps in the trace (listed in the evidence) and compare what the
device runs in them with a steady step.""",
            docs=(L.TF_PROFILER, L.JAX_PROFILING),
        ),
    ),
    (
        "any:host_idle",
        Idiom(
            fix_summary="The slow steps idle (named above): look for untraced host work or other processes on the cores.",
            fix=_HOST_IDLE_FIX,
            docs=(L.TF_PROFILER, L.JAX_PROFILING),
        ),
    ),
    (
        "pytorch:host_idle",
        Idiom(
            fix_summary="The slow steps idle (named above): open them in Perfetto; look for other processes on the cores.",
            fix=_HOST_IDLE_FIX + "\nOpen the trace in Perfetto (ui.perfetto.dev).",
            docs=(L.TORCH_PROFILER,),
        ),
    ),
    (
        "input",
        Idiom(
            fix_summary="The slow steps wait for input (named above): let tf.data work ahead (prefetch, parallel map).",
            fix="""The slow steps wait longer for their batch than a steady step: some batches are slower to produce (uneven file
sizes, cache misses, a map that is slow for some elements). Let the pipeline work ahead of the step:
dataset.map(fn, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE).""",
            docs=(L.TF_DATA_PERFORMANCE,),
        ),
    ),
    (
        "input_ahead",
        Idiom(
            fix_summary="The slow steps wait for input (named above) that already prefetches: find the slow batches' cause.",
            fix="""The slow steps wait longer for their batch than a steady step, although the pipeline already prefetches
(Configuration, tf.data): some batches are slower to produce (uneven file sizes, cache misses, a map that is
slow for some elements), or the pipeline's threads share the cores with the step. A map that runs one element
at a time has a finding of its own. Find which stage is slow in those steps (the Profile tab's input pipeline analyzer, or the tf.data events of the slow
steps in the trace); cache what does not change (dataset.cache()), move expensive per-element work offline, or
give the host more cores.""",
            docs=(L.TF_DATA_PERFORMANCE,),
        ),
    ),
    (
        "jax:input",
        Idiom(
            fix_summary="The slow steps wait for input (named above): load batches ahead in a background loader (grain).",
            fix="""The slow steps wait longer for their batch than a steady step: some batches are slower to produce. Load them
ahead of the step in background workers (grain's DataLoader with worker_count > 0, or a prefetching thread),
so a slow batch is ready before the step asks for it.""",
            docs=(L.GRAIN,),
        ),
    ),
    (
        "pytorch:input",
        Idiom(
            fix_summary="The slow steps wait for the DataLoader (named above): more workers, persistent_workers.",
            fix="""The slow steps wait longer for their batch than a steady step: some batches are slower to load. Let the
DataLoader work ahead: DataLoader(..., num_workers=N, prefetch_factor=4, persistent_workers=True,
pin_memory=True), so a slow batch is ready before the step asks for it.""",
            docs=(L.TORCH_DATA,),
        ),
    ),
)
