"""The joint effect of several fixes on the same step: time two fixes would recover from the same pool of the
step is counted once, time from different pools adds up; the step shrinks once, by the sum (not a product), but
never below the work the fixes leave: the GPU's own, and where a fix only removes a wait, the host's own."""

from dataclasses import dataclass

from tb_gpu_advisor.whatif.estimate import BOUND, MIXED, MODEL

# Whatever the fixes claim, the step keeps this share of its time (the same cap as a single finding's).
MIN_KEPT_FRACTION = 0.01
# Pools of time the GPU itself is busy in: a fix drawing on them shortens the GPU's own work.
DEVICE_POOLS = frozenset({"kernel", "copies", "collectives"})
# Pools of the host's own work: a fix drawing on them (and not only removing a wait) shortens the host's work.
HOST_POOLS = frozenset({"host", "launch"})
# The pool of the time the step waits for its input.
INPUT_POOL = "input_wait"
# What can hold the step above the claims' sum, and how the verdict says it.
CAPPED_BY = {
    "gpu_work": "capped: the GPU's own work left after these fixes takes that long",
    "host_work": "capped: the host's own work per step stays and takes that long",
    "loader_pace": "held at the step without the input wait: a shorter one needs the loader's workers to keep up "
    "with it, which this trace cannot show",
}


@dataclass(frozen=True)
class Claim:
    """One finding's claim on the step: its id, the time its fix removes over the window, the kind of that
    number, the pools of step time it comes out of (findings.overlaps.POOLS), and whether the time is a
    what-if of the fix (else all of the time lost to the cause)."""

    id: str
    recoverable_ms: float
    kind: str
    pools: frozenset
    what_if: bool = True
    removes_wait: bool = False  # the fix removes a wait (a sync, a read back): the work around it stays
    # A cause that explains another claim's time (findings.causes.explains: a wait that exposes it, or a specific
    # cause of a symptom): that time is this claim's, counted first.
    leads: bool = False


@dataclass(frozen=True)
class Combined:
    """The step-time ratio with every counted fix applied, its kind, the ids counted and those left out because
    their time is already counted by a counted finding."""

    speedup: float
    kind: str
    counted: tuple
    shared: tuple
    new_window_ms: float
    capped_ms: float | None = None  # the floor the claims' sum would undercut, where it held the step
    capped_by: str | None = None  # which: CAPPED_BY's keys


def combine(window_ms, claims, device_busy_ms=None, host_work_ms=None):
    """Combined of `claims` over a window of `window_ms`: a cause that explains another claim's time first (a
    wait that exposes it: that time is the host's work after the wait, and the wait's fix, held at that work, is
    what it can give; a specific cause of a symptom: its fix is what the report names), then
    what-ifs of a fix (they say what the fix leaves of the lost time), each most time first; a claim counts unless a claim already counted draws on one of its
    pools (its time is then the same time); the window loses the sum of the counted claims (where a shared claim
    takes more from its pools than the counted ones there, that much more), but never drops
    below the GPU's busy time `device_busy_ms` less what the counted claims take off the GPU's own work (kernels,
    copies, collectives): fixes of idle time cannot make the device's work shorter. Where a counted claim only
    removes a wait, the host's work around it stays and now overlaps the device's: the window then never drops
    below the host's work `host_work_ms` (a claim on the host's work shares the wait's pools, so none is counted
    beside it). Where
    a counted claim is the input wait, its fix moves the loading into parallel workers whose pace the trace does
    not show: the window drops by that claim, and other claims add nothing a loader would have to keep up with.
    Kind BOUND when any counted claim is one or a floor that is no model holds the window (MIXED where the counted
    claims are bounds and models both), else MODEL. None without a claim."""
    counted, shared, taken = [], [], set()
    for claim in sorted(claims, key=lambda c: (not c.leads, not c.what_if, -c.recoverable_ms)):
        if claim.recoverable_ms <= 0:
            continue
        if claim.pools & taken:
            shared.append(claim)
            continue
        counted.append(claim)
        taken |= claim.pools
    if not counted or window_ms <= 0:
        return None
    saved = sum(c.recoverable_ms for c in counted)
    # Fixing a set never gains less than fixing one of its members: where a shared claim (a fix's what-if or the
    # whole loss to a cause, an upper bound) takes more from its pools than the counted claims on them, the
    # difference adds: over shared time the joint figure is the larger of the two (a bound then makes it a bound).
    lifted, extra = _largest_excess(counted, shared)
    saved = min(saved + extra, window_ms * (1.0 - MIN_KEPT_FRACTION))
    floors = {}
    if device_busy_ms:
        device_saved = sum(c.recoverable_ms for c in counted if c.pools and c.pools <= DEVICE_POOLS)
        if lifted and lifted.pools and lifted.pools <= DEVICE_POOLS:
            device_saved += extra
        floors["gpu_work"] = device_busy_ms - device_saved
    if host_work_ms and any(c.removes_wait for c in counted):
        floors["host_work"] = host_work_ms
    if len(counted) > 1 and any(INPUT_POOL in c.pools for c in counted):
        floors["loader_pace"] = window_ms - max(c.recoverable_ms for c in counted if INPUT_POOL in c.pools)
    new_window = window_ms - saved
    capped = capped_by = None
    for name, floor in floors.items():
        floor = min(window_ms, max(0.0, floor))
        if new_window < floor:
            new_window = capped = floor
            capped_by = name
    # A joint figure is a bound when any part is one: a part that is at most its number makes the sum at most
    # the sum, whatever the models beside it expect (a model's error does not lift a ceiling). It is a bound too
    # when a floor that is no model holds it (the host's work, the step the input fix leaves; the GPU's work
    # less what bounds alone take off it): no fix goes below it. Only a sum of models, held by no such floor, is
    # a model.
    # Where the shared claim's excess sets the figure (no floor holds it), the figure is that claim's over the
    # counted ones on its pools: it is the one counted there, they the shared ones, so the ids and the verdict's
    # "#N shares that time" say whose figure it is (review finalA 5).
    if lifted is not None and capped_by is None:
        counted, shared = _in_place(lifted, counted, shared)
    device_models = any(c.kind != BOUND for c in counted if c.pools and c.pools <= DEVICE_POOLS)
    held = capped_by is not None and not (capped_by == "gpu_work" and device_models)
    kind = BOUND if held or any(c.kind == BOUND for c in counted) or (lifted and lifted.kind == BOUND) else MODEL
    # Counted bounds and models together: "mixed", as the verdict's "(bound #1; model #2)" says; still an upper
    # limit ("up to").
    if kind == BOUND and {c.kind for c in counted} >= {BOUND, MODEL}:
        kind = MIXED
    return Combined(
        round(window_ms / new_window, 2),
        kind,
        tuple(c.id for c in counted),
        tuple(c.id for c in shared),
        new_window,
        capped,
        capped_by,
    )


def _in_place(lifted, counted, shared):
    """(counted, shared) with `lifted` counted in the place of the counted claims on its pools, which are shared."""
    covered = [c for c in counted if c.pools & lifted.pools]
    at = counted.index(covered[0]) if covered else len(counted)
    kept = [c for c in counted if c not in covered]
    kept.insert(min(at, len(kept)), lifted)
    return kept, covered + [c for c in shared if c is not lifted]


def _largest_excess(counted, shared):
    """(the shared claim, the ms it takes beyond the counted claims on its pools) with the largest such excess,
    or (None, 0.0) where no shared claim takes more than those claims."""
    best = (None, 0.0)
    for claim in shared:
        excess = claim.recoverable_ms - sum(c.recoverable_ms for c in counted if c.pools & claim.pools)
        if excess > max(best[1], 1e-9):
            best = (claim, excess)
    return best
