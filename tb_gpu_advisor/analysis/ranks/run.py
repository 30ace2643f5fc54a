"""The run-level analysis of several ranks: aligned steps, per-rank time per step, collectives split into wait and
transfer, the slowest rank and why, the critical path and what-ifs, from each rank's RankProfile."""

import statistics
from dataclasses import dataclass

from tb_gpu_advisor.analysis.ranks.align import align, one_capture
from tb_gpu_advisor.analysis.ranks.critical_path import critical_paths
from tb_gpu_advisor.analysis.ranks.late_peer import late_peer
from tb_gpu_advisor.analysis.ranks.step_time import step_times_ms
from tb_gpu_advisor.analysis.ranks.straggler import find_straggler
from tb_gpu_advisor.analysis.ranks.waits import kind_bandwidth, rank_waits, split_calls
from tb_gpu_advisor.analysis.ranks.whatif import collectives_at_link_peak, collectives_overlapped, rank_at_median
from tb_gpu_advisor.analysis.rounding import ms

# What a rank's step time went to, beside compute: the cause shown per rank and step.
STEP_CAUSES = ("compute", "input", "host", "peer_wait", "transfer", "other")
NETWORK_WORDS = (
    "not in the traces: the hosts name no rank, and what joins them (a network, or a link within one machine) "
    "is not recorded: no peak to compare with"
)
# A component under this share of the step does not name why the rank idled.
IDLE_CAUSE_SHARE = 0.10


@dataclass(frozen=True)
class RankStepRow:
    """One rank in one step (ms): its time by component; `start_ms` is its start after the earliest rank's."""

    step_ms: float
    start_ms: float
    compute_ms: float
    input_ms: float
    host_ms: float
    peer_wait_ms: float  # waiting at collectives for the last rank to arrive
    transfer_ms: float  # in collectives after the last arrival, not while waiting
    other_ms: float  # the rest: untraced host time, idle device time not explained above
    idle_ms: dict  # the device's idle time by cause (idle_attribution), or the CPU step thread's

    @property
    def cause(self):
        """Where the rank's step went: the component besides compute that took most of the step, "compute" when
        compute took more than it (a rank busy with its own work: a straggler's cells say so) or when none took
        IDLE_CAUSE_SHARE of it."""
        parts = {
            "input": self.input_ms,
            "host": self.host_ms,
            "peer_wait": self.peer_wait_ms,
            "transfer": self.transfer_ms,
            "other": self.other_ms,
        }
        top = max(parts, key=parts.get)
        return top if parts[top] >= max(IDLE_CAUSE_SHARE * self.step_ms, self.compute_ms) else "compute"


@dataclass(frozen=True)
class RankInfo:
    position: int
    rank: int | None
    host: str
    device: str
    backend: str | None
    world_size: int | None
    steps: int  # steps in its trace
    offset_ms: float  # its clock offset (subtracted)


@dataclass(frozen=True)
class RunRanks:
    ranks: tuple  # RankInfo, in rank order
    step_nums: tuple  # the matched steps
    step_ms: tuple  # the run's time per matched step (step_time.step_times_ms), which every run-level view reads
    rows: tuple  # per matched step, RankStepRow per rank
    splits: tuple  # waits.CallSplit
    bandwidth: tuple  # waits.KindBandwidth
    straggler: object  # straggler.Straggler
    paths: tuple  # critical_path.StepPath
    what_ifs: tuple  # whatif.RankWhatIf
    offset_calls: int
    same_clock: bool
    one_clock: bool  # every rank on one machine with absolute times: no offsets
    residual_ms: float | None  # the alignment's residual spread of collective ends, when offsets were estimated
    notes: tuple  # what limits the analysis (ranks missing, steps or calls that did not match)
    link: str | None  # the link the bandwidths are judged against, in words
    late_peer: object = None  # late_peer.LatePeer when ranks of the job are missing


def rank_order(profiles):
    """The profiles sorted by rank (then host)."""
    return sorted(profiles, key=lambda p: (p.rank is None, p.rank if p.rank is not None else 0, p.host))


def analyze_ranks(profiles):
    """RunRanks of RankProfiles (any order); needs two ranks or more."""
    profiles = rank_order(profiles)
    count = len(profiles)
    alignment = align(profiles)
    step_ms = tuple(round(t, 6) for t in step_times_ms(alignment))
    splits = split_calls(alignment)
    waits = rank_waits(alignment, splits, count)
    rows = tuple(
        tuple(_row(profiles[r], alignment.steps[i], i, r, waits[i][r]) for r in range(count))
        for i in range(len(alignment.steps))
    )
    group = _group_size(alignment, profiles)
    # Hosts that name no rank (an XPlane session, a trace per host): nothing says what links them.
    hosts_as_ranks = all(p.rank is None for p in profiles) and len({p.host for p in profiles}) > 1
    link_gbps = profiles[0].link_gbps if all(p.link_gbps for p in profiles) and not hosts_as_ranks else None
    paths = critical_paths(alignment, splits)
    straggler = find_straggler(alignment, splits, rows, profiles)
    what_ifs = (
        rank_at_median(alignment, splits, straggler.position, straggler.tied),
        collectives_overlapped(alignment, paths, rows, complete=not _missing_ranks(profiles)),
        collectives_at_link_peak(alignment, paths, group, link_gbps),
    )
    ranks = tuple(
        RankInfo(
            position=i,
            rank=p.rank,
            host=f"{p.machine}: {p.host}" if p.machine and p.machine != p.host else p.host,
            device=p.device,
            backend=p.backend,
            world_size=p.world_size,
            steps=len(p.steps),
            offset_ms=ms(alignment.offsets_ps[i]),
        )
        for i, p in enumerate(profiles)
    )
    return RunRanks(
        ranks=ranks,
        step_nums=tuple(s.step_num for s in alignment.steps),
        step_ms=step_ms,
        rows=rows,
        splits=splits,
        bandwidth=kind_bandwidth(splits, group, link_gbps, complete=not _missing_ranks(profiles)),
        straggler=straggler,
        paths=paths,
        what_ifs=what_ifs,
        offset_calls=alignment.offset_calls,
        same_clock=alignment.same_clock,
        one_clock=alignment.one_clock,
        residual_ms=ms(alignment.residual_ps) if alignment.residual_ps is not None else None,
        notes=_notes(profiles, alignment),
        link=NETWORK_WORDS if hosts_as_ranks else _link_words(profiles, link_gbps),
        late_peer=late_peer(profiles, rows, step_ms),
    )


def _row(profile, step, step_index, position, waits):
    own = (
        next(s for s in profile.steps if s.step_num == step.step_num)
        if step.step_num is not None
        else profile.steps[step_index]
    )
    step_ms = (step.ends_ps[position] - step.starts_ps[position]) / 1e9
    wait_ms, transfer_ms = waits[0] / 1e9, waits[1] / 1e9
    compute, inputs, host = own.compute_ps / 1e9, own.input_ps / 1e9, own.host_ps / 1e9
    if profile.device == "cpu":
        # The step thread waits for its collectives untraced: that time is the wait and transfer above.
        other = step_ms - compute - inputs - host - wait_ms - transfer_ms
    else:
        other = sum(v for k, v in own.idle_ps.items() if k not in ("device_wait", "input")) / 1e9 - host
    return RankStepRow(
        step_ms=round(step_ms, 6),
        start_ms=ms(step.starts_ps[position] - min(step.starts_ps)),
        compute_ms=round(compute, 6),
        input_ms=round(inputs, 6),
        host_ms=round(host, 6),
        peer_wait_ms=round(wait_ms, 6),
        transfer_ms=round(transfer_ms, 6),
        other_ms=round(max(0.0, other), 6),
        idle_ms={k: ms(v) for k, v in sorted(own.idle_ps.items())},
    )


def _group_size(alignment, profiles):
    groups = [c.group_size for s in alignment.steps for c in s.calls if c.group_size]
    if groups:
        return statistics.median_low(groups)
    worlds = [p.world_size for p in profiles if p.world_size]
    return worlds[0] if worlds else len(profiles)


def _link_words(profiles, link_gbps):
    """The link in words; an assumed one says so (collective_bandwidth.link_of: the slowest the GPU can have)."""
    if not link_gbps:
        return None
    if all(p.link_known for p in profiles):
        return f"{profiles[0].link_kind} {link_gbps:g} GB/s"
    return (
        f"{profiles[0].link_kind} {link_gbps:g} GB/s, assumed: the traces do not say which link the ranks use "
        "(or the ranks may be on several hosts), so the slowest the GPU can have"
    )


def _missing_ranks(profiles):
    """Whether the job has ranks that are not in the run: one world size on every rank, larger than the ranks."""
    worlds = {p.world_size for p in profiles if p.world_size}
    return len(worlds) == 1 and next(iter(worlds)) > len(profiles)


def _notes(profiles, alignment):
    notes = []
    worlds = {p.world_size for p in profiles if p.world_size}
    if len(worlds) == 1 and worlds.pop() != len(profiles):
        notes.append(
            f"{len(profiles)} ranks of a job of world size {profiles[0].world_size}: the others were not "
            "profiled, and may be the slow ones"
        )
    ranks = [p.rank for p in profiles if p.rank is not None]
    if len(set(ranks)) != len(ranks):
        notes.append("two traces give the same rank: they may come from different jobs")
    if not one_capture(profiles):
        notes.append("the traces share no instant on their clocks: they may not be one capture of one job")
    if not alignment.steps:
        notes.append("no step number is on every rank: nothing to align")
    elif not alignment.offset_calls and not alignment.one_clock:
        notes.append("too few collectives matched to estimate clock offsets: clocks taken as recorded")
    unmatched = sum(s.unmatched_calls for s in alignment.steps)
    if unmatched:
        notes.append(f"{unmatched} collective calls left out: the ranks disagree on their count or kind in a step")
    if not alignment.same_clock:
        notes.append("a trace gives no absolute time: its clock is aligned only by the collectives")
    return tuple(notes)
