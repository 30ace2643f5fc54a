"""The run-level analysis on rank sets built from numbers: offsets, waits, the slowest rank, path and what-ifs."""

import pytest

from tb_gpu_advisor.analysis.ranks.profile import WorkRow
from tb_gpu_advisor.analysis.ranks.run import analyze_ranks
from tests.analysis.ranks.synthetic import MS, rank_set


def _what_if(run, name):
    return next(w for w in run.what_ifs if w.name == name)


def test_a_rank_with_more_compute_is_named_with_its_excess_and_the_median_what_if():
    work = [(WorkRow("aten::mm", 50, 50 * MS),)] * 4
    work = [work[0], work[1], (WorkRow("aten::mm", 50, 50 * MS), WorkRow("aten::matmul", 40, 40 * MS)), work[3]]
    run = analyze_ranks(rank_set([10.0, 10.0, 18.0, 10.0], work=work))
    slow = run.straggler
    assert slow.position == 2 and slow.late_steps == 5
    assert slow.cause == "more_compute"
    assert slow.excess_ms["compute"] == pytest.approx(8.0)
    assert slow.held_ms_per_step == pytest.approx(8.0)
    assert slow.work[0].name == "aten::matmul" and slow.work[0].calls_per_step == 8
    # Each step: 18 ms of compute on rank 2, 2 ms of transfer, 1 ms of tail = 21 ms; at the median, 13 ms.
    median = _what_if(run, "rank_at_median")
    assert median.baseline_ms == pytest.approx(21.0) and median.step_ms == pytest.approx(13.0)
    assert median.kind == "model" and "median" in median.assumes
    assert run.rows[0][0].peer_wait_ms == pytest.approx(8.0) and run.rows[0][2].peer_wait_ms == 0
    assert run.rows[0][0].transfer_ms == pytest.approx(2.0)
    # A cell names what took most of the rank's step: rank 0 computes 11 ms (with its tail) and waits 8 ms
    assert run.rows[0][0].cause == "compute" and run.rows[0][2].cause == "compute"
    waits = analyze_ranks(rank_set([2.0, 2.0, 18.0, 2.0]))  # rank 0: 3 ms of compute, 16 ms waiting
    assert waits.rows[0][0].cause == "peer_wait" and waits.rows[0][2].cause == "compute"


def test_the_same_work_slower_is_slower_compute():
    work = [(WorkRow("aten::mm", 50, 50 * MS),)] * 3 + [(WorkRow("aten::mm", 50, 80 * MS),)]
    run = analyze_ranks(rank_set([10.0, 10.0, 10.0, 16.0], work=work))
    assert run.straggler.position == 3 and run.straggler.cause == "slower_compute"
    assert run.straggler.same_work_slower is True


def test_a_late_input_is_a_late_host():
    run = analyze_ranks(rank_set([10.0] * 4, input_ms=[0.1, 0.1, 0.1, 20.1]))
    assert run.straggler.position == 3 and run.straggler.cause == "input"
    assert run.straggler.excess_ms["input"] == pytest.approx(20.0)
    assert _what_if(run, "rank_at_median").step_ms == pytest.approx(13.1)


def test_equal_ranks_have_no_straggler():
    run = analyze_ranks(rank_set([10.0, 10.2, 10.1, 10.05]))
    assert run.straggler.position is None and run.straggler.cause is None
    assert _what_if(run, "rank_at_median").speedup == 1.0


def test_clock_offsets_are_recovered_from_collective_ends():
    run = analyze_ranks(rank_set([10.0, 10.0, 14.0, 10.0], clock_ms=[0.0, 0.0, 0.0, 5.0]))
    assert [r.offset_ms for r in run.ranks] == pytest.approx([0.0, 0.0, 0.0, 5.0])
    assert run.offset_calls == 5
    # Aligned, rank 3 waits 4 ms like ranks 0 and 1; unaligned it would have seemed to arrive last.
    assert run.straggler.position == 2
    assert run.rows[0][3].peer_wait_ms == pytest.approx(4.0)


def test_critical_path_runs_through_the_last_rank_then_the_transfer_then_the_tail():
    run = analyze_ranks(rank_set([10.0, 12.0, 10.0, 10.0]))
    path = run.paths[0]
    assert [(s.kind, s.position) for s in path.segments] == [("work", 1), ("collective", None), ("tail", 0)]
    assert [(s.end_ps - s.start_ps) / MS for s in path.segments] == pytest.approx([12.0, 2.0, 1.0])
    assert path.step_ps / MS == pytest.approx(15.0)


def test_bus_bandwidth_and_the_link_peak_what_if():
    # 4 MiB all-reduce over 4 ranks in 2 ms: algbw 2.097 GB/s, bus factor 2 * 3 / 4 = 1.5.
    run = analyze_ranks(rank_set([10.0] * 4, link_gbps=240.0))
    kind = run.bandwidth[0]
    assert kind.collective == "allreduce" and kind.group_size == 4
    assert kind.busbw_gbps == pytest.approx(4 * 2**20 / 2e-3 / 1e9 * 1.5, rel=1e-3)
    assert kind.link_ratio is None  # a 4 MiB call is latency-bound (under 8 MiB): no share of the link
    large = analyze_ranks(rank_set([10.0] * 4, link_gbps=240.0, bytes_=16 * 2**20)).bandwidth[0]
    assert large.link_ratio == pytest.approx(large.busbw_gbps / 240.0, rel=1e-2)
    assert large.busbw_gbps == pytest.approx(16 * 2**20 / 2e-3 / 1e9 * 1.5, rel=1e-3)
    peak = _what_if(run, "collectives_at_link_peak")
    at_peak_ms = 4 * 2**20 * 1.5 / 240e9 * 1e3
    assert peak.step_ms == pytest.approx(13.0 - 2.0 + at_peak_ms, rel=1e-4)
    assert _what_if(analyze_ranks(rank_set([10.0] * 4)), "collectives_at_link_peak").step_ms is None


def test_one_collective_per_step_leaves_nothing_to_overlap():
    """One bucket per step starts after the last gradient: no compute is left to hide it under, so no what-if."""
    overlapped = _what_if(analyze_ranks(rank_set([10.0] * 4, transfer_ms=5.0)), "collectives_overlapped")
    assert overlapped.baseline_ms == pytest.approx(16.0) and overlapped.step_ms is None
    assert "one collective per step" in overlapped.assumes


def test_overlap_hides_transfer_only_under_the_compute_after_the_first_bucket():
    """Two buckets, 4 ms compute (a bucket after each 2 ms), 6 ms transfer each, 1 ms tail: step 15 ms. Only the
    2 ms of compute after the first bucket can run beside a transfer: 13 ms, not the 5 ms of compute and tail."""
    run = analyze_ranks(rank_set([4.0] * 4, transfer_ms=12.0, buckets=2))
    overlapped = _what_if(run, "collectives_overlapped")
    assert overlapped.baseline_ms == pytest.approx(15.0) and overlapped.step_ms == pytest.approx(13.0)


def test_overlap_never_hides_transfer_under_an_input_wait():
    """The same with a 20 ms input wait first on every rank: the wait precedes the backward, nothing hides there."""
    run = analyze_ranks(rank_set([4.0] * 4, input_ms=[20.0] * 4, transfer_ms=12.0, buckets=2))
    overlapped = _what_if(run, "collectives_overlapped")
    assert overlapped.baseline_ms == pytest.approx(35.0) and overlapped.step_ms == pytest.approx(33.0)


def test_an_overlapped_step_is_never_shorter_than_its_transfer():
    """Four buckets, 10 ms compute, 4 ms transfer each: 7.5 ms of compute could hide transfer, but the 16 ms of
    transfer itself bounds the step."""
    run = analyze_ranks(rank_set([10.0] * 4, transfer_ms=16.0, buckets=4))
    overlapped = _what_if(run, "collectives_overlapped")
    assert overlapped.baseline_ms == pytest.approx(19.5) and overlapped.step_ms == pytest.approx(16.0)


def test_no_overlap_what_if_when_ranks_of_the_group_are_missing():
    run = analyze_ranks(rank_set([4.0] * 4, transfer_ms=12.0, buckets=2, world_size=8))
    overlapped = _what_if(run, "collectives_overlapped")
    assert overlapped.step_ms is None and "uncaptured peer" in overlapped.assumes


def test_ranks_on_one_machine_share_its_clock():
    """Four ranks naming one machine: whatever their collective ends say, no offset (one clock)."""
    run = analyze_ranks(rank_set([10.0, 10.0, 14.0, 10.0], clock_ms=[0.0, 0.0, 0.0, 5.0], machine=lambda r: "vm"))
    assert [r.offset_ms for r in run.ranks] == [0.0] * 4
    assert run.one_clock and run.offset_calls == 0 and run.residual_ms is None
    assert [r.host for r in run.ranks] == ["vm: rank0", "vm: rank1", "vm: rank2", "vm: rank3"]


def test_ranks_of_one_machine_get_one_offset_and_the_residual_is_shown():
    run = analyze_ranks(rank_set([10.0] * 4, clock_ms=[0.0, 0.0, 3.0, 3.0], machine=lambda r: f"node{r // 2}"))
    assert [r.offset_ms for r in run.ranks] == pytest.approx([-1.5, -1.5, 1.5, 1.5])
    assert not run.one_clock and run.offset_calls == 5 and run.residual_ms == pytest.approx(0.0)


def test_ranks_as_late_as_the_slowest_are_named_and_moved_with_it():
    """Of 8 ranks, 2 and 5 compute 18 ms (5 a hair less), the others 10: rank 2 is named, 5 as late as it; fixing
    rank 2 alone gains nothing (rank 5 still holds the step), moving both gains the 8 ms."""
    run = analyze_ranks(rank_set([10.0, 10.0, 18.0, 10.0, 10.0, 17.9, 10.0, 10.0]))
    assert run.straggler.position == 2 and run.straggler.tied == (5,)
    # the others wait 8 ms for rank 2 and would still wait 7.9 ms for rank 5 (its own wait is 0.1 ms): both hold
    # them back, as the words say; a rank that waited is charged nothing
    assert run.straggler.held_ms_by_rank == pytest.approx((0.0, 0.0, 8.0, 0.0, 0.0, 7.9, 0.0, 0.0))
    median = _what_if(run, "rank_at_median")
    assert median.tied == (5,) and median.baseline_ms == pytest.approx(21.0)
    assert median.step_ms == pytest.approx(13.0)
    assert "the ranks as late as it" in median.assumes
    alone = analyze_ranks(rank_set([10.0, 10.0, 18.0, 10.0, 10.0, 12.0, 10.0, 10.0]))
    assert alone.straggler.position == 2 and alone.straggler.tied == ()
    assert alone.straggler.held_ms_by_rank[5] == 0.0  # 6 ms early: a waiter, not as late


def test_a_what_if_with_no_step_time_is_none_never_zero():
    from tb_gpu_advisor.analysis.ranks.whatif import _what_if

    assert _what_if("collectives_overlapped", [], [], "x").step_ms is None
    gone = _what_if("collectives_overlapped", [5.0, 5.0], [5.0, 5.0], "x")
    assert gone.step_ms is None and gone.speedup is None and "no time to model" in gone.assumes


def test_one_step_time_for_the_headline_the_heat_map_and_the_critical_path():
    """Rank 1's step boundary falls 4 ms late at the end of odd steps (its own steps 17, 9, 17, 9 ms; the others
    13 ms): the run's step k is the last start to the last end (17, 9, 17, 9, 13 ms), the windows tile the run (their
    sum is its wall time, 65 ms) and each step's critical path covers exactly its window."""
    from dataclasses import replace

    from tb_gpu_advisor.report.ranks_view import ranks_view

    profiles = rank_set([10.0] * 4)
    moved = [
        replace(
            step,
            start_ps=step.start_ps + (4 * MS if i % 2 else 0),
            end_ps=step.end_ps + (4 * MS if i < 4 and i % 2 == 0 else 0),
        )
        for i, step in enumerate(profiles[1].steps)
    ]
    profiles[1] = replace(profiles[1], steps=tuple(moved))
    run = analyze_ranks(profiles)
    assert list(run.step_ms) == pytest.approx([17.0, 9.0, 17.0, 9.0, 13.0])
    assert [p.step_ps / MS for p in run.paths] == pytest.approx(list(run.step_ms))
    for path in run.paths:
        assert path.segments[0].start_ps == 0 and path.segments[-1].end_ps == path.step_ps
        assert all(a.end_ps == b.start_ps for a, b in zip(path.segments, path.segments[1:]))
    view = ranks_view(run)
    assert view["step_time_ms"] == pytest.approx(13.0)  # 65 ms of wall time over 5 steps
    assert [s["step_time_ms"] for s in view["steps"]] == pytest.approx([17.0, 9.0, 17.0, 9.0, 13.0])
    assert [p["step_ms"] for p in view["critical_path"]] == pytest.approx([17.0, 9.0, 17.0, 9.0, 13.0])
    assert next(w for w in view["what_if"] if w["name"] == "rank_at_median")["baseline_ms"] == pytest.approx(13.0)


def test_the_compute_excess_is_split_into_more_work_and_the_same_work_slower():
    """Rank 2: 8 ms per step in an op the others never run, and its common op 2 ms slower: 8 ms more work (the
    cause's amount), 2 ms the same work slower, of a 10 ms compute excess."""
    common = WorkRow("aten::mm", 50, 50 * MS)
    work = [(common,)] * 4
    work[2] = (WorkRow("aten::mm", 50, 60 * MS), WorkRow("aten::tanh", 40, 40 * MS))
    run = analyze_ranks(rank_set([10.0, 10.0, 20.0, 10.0], work=work))
    slow = run.straggler
    assert slow.cause == "more_compute" and slow.evidence == "ops"
    assert slow.compute_split_ms == pytest.approx({"more_work": 8.0, "same_work_slower": 2.0})
    assert slow.cause_ms == pytest.approx(8.0)
    assert [(d.name, d.ms_per_step - d.median_ms_per_step) for d in slow.work] == [
        ("aten::tanh", pytest.approx(8.0)),
        ("aten::mm", pytest.approx(2.0)),
    ]


def test_a_late_input_names_its_input_spans_never_the_waits_of_the_others():
    """Rank 3's DataLoader takes 20 ms a step (the others' 0.1 ms): the evidence is its own input span; the other
    ranks wait 20 ms at the all-reduce, and none of that makes them slow."""
    from dataclasses import replace

    profiles = rank_set([10.0] * 4, input_ms=[0.1, 0.1, 0.1, 20.1])
    loader = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
    profiles = [
        replace(p, input_work=(WorkRow(loader, 5, int(5 * (20.1 if r == 3 else 0.1) * MS)),))
        for r, p in enumerate(profiles)
    ]
    run = analyze_ranks(profiles)
    slow = run.straggler
    assert slow.position == 3 and slow.cause == "input" and slow.evidence == "input"
    assert slow.cause_ms == pytest.approx(20.0)
    assert [(d.name, d.ms_per_step, d.median_ms_per_step) for d in slow.work] == [
        (loader, pytest.approx(20.1), pytest.approx(0.1))
    ]
    assert slow.held_ms_by_rank[:3] == (0.0, 0.0, 0.0)
    assert all(row[r].peer_wait_ms == pytest.approx(20.0) for row in run.rows for r in range(3))


def test_a_late_host_names_its_host_ops():
    from dataclasses import replace

    profiles = rank_set([10.0] * 4, link_gbps=300.0)
    profiles = [
        replace(
            p,
            steps=tuple(replace(s, host_ps=(12 if r == 1 else 0) * MS) for s in p.steps),
            host_work=(WorkRow("aten::item", 5, (60 if r == 1 else 1) * MS),),
        )
        for r, p in enumerate(profiles)
    ]
    # rank 1 arrives 12 ms late: its host held the device that long each step
    later = rank_set([10.0, 22.0, 10.0, 10.0], link_gbps=300.0)
    profiles = [
        replace(
            p,
            steps=tuple(
                replace(s, calls=late.calls, start_ps=late.start_ps, end_ps=late.end_ps, compute_ps=s.compute_ps)
                for s, late in zip(p.steps, q.steps)
            ),
        )
        for p, q in zip(profiles, later)
    ]
    run = analyze_ranks(profiles)
    slow = run.straggler
    assert slow.position == 1 and slow.cause == "host" and slow.evidence == "host"
    assert slow.cause_ms == pytest.approx(12.0)
    assert [(d.name, d.ms_per_step) for d in slow.work] == [("aten::item", pytest.approx(12.0))]


def test_a_start_that_only_follows_a_later_exit_from_the_collective_is_not_a_late_start():
    """Rank 1 leaves every all-reduce 3 ms after the others and so begins the next step 3 ms late: time in the
    collective, not its own lateness (0). Rank 2 (the straggler, 4 ms more compute) begins steps 2-5 3 ms late with
    no later exit: its own late start is 3 ms in 4 of 5 steps (2.4 ms per step)."""
    from dataclasses import replace

    from tb_gpu_advisor.analysis.ranks.align import align
    from tb_gpu_advisor.analysis.ranks.straggler import _own_lateness

    profiles = rank_set([10.0, 10.0, 14.0, 10.0], machine=lambda r: "vm")  # one clock: no offsets estimated

    def moved(profile, start_ms, exit_ms):
        steps = []
        for i, step in enumerate(profile.steps):
            calls = tuple(replace(c, end_ps=c.end_ps + int(exit_ms * MS)) for c in step.calls)
            steps.append(replace(step, start_ps=step.start_ps + (int(start_ms * MS) if i else 0), calls=calls))
        return replace(profile, steps=tuple(steps))

    profiles[1] = moved(profiles[1], 3.0, 3.0)
    profiles[2] = moved(profiles[2], 3.0, 0.0)
    own = _own_lateness(align(profiles), 4)
    assert [round(row[1], 6) for row in own] == [0.0] * 5
    assert [round(row[2], 6) for row in own] == [0.0, 3.0, 3.0, 3.0, 3.0]
    slow = analyze_ranks(profiles).straggler
    assert slow.position == 2 and slow.excess_ms["start"] == pytest.approx(2.4)


def test_the_median_what_if_reads_the_transfer_on_the_late_ranks_clock():
    """Ranks on two nodes, each node one clock (offset 3 ms): the first of the late rank's node-mates to leave gives
    the transfer, as on one clock; ranks that share no clock hold the measured transfer, said to be a lower bound."""
    nodes = analyze_ranks(
        rank_set([10.0, 18.0, 10.0, 10.0], clock_ms=[0.0, 0.0, 3.0, 3.0], machine=lambda r: f"node{r // 2}")
    )
    median = _what_if(nodes, "rank_at_median")
    assert nodes.straggler.position == 1 and median.step_ms == pytest.approx(13.0)
    assert "first of the ranks on the late rank's clock" in median.assumes
    alone = _what_if(analyze_ranks(rank_set([10.0, 18.0, 10.0, 10.0], clock_ms=[0.0, 0.0, 3.0, 3.0])), "rank_at_median")
    assert alone.step_ms == pytest.approx(13.0) and "a lower bound" in alone.assumes
