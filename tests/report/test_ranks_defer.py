"""The slowest rank's findings on its cause quote the run-level what-if; other findings and other ranks' are left."""

from tb_gpu_advisor.report.ranks_defer import defer_to_run


def _finding(category, speedup=1.5):
    return {
        "category": category,
        "summary": "S.",
        "estimated_speedup": speedup,
        "speedup_kind": "bound",
        "speedup_basis": "upper bound",
    }


def _ranks(cause="input", step_ms=10.0):
    return {
        "slowest": {"rank": 1, "host": "m: rank1", "cause": cause, "held_others_ms_per_step": 20.0},
        "what_if": [{"name": "rank_at_median", "step_ms": step_ms, "baseline_ms": 30.0, "speedup": 3.0, "ranks": [1]}],
    }


def test_the_slow_ranks_finding_on_its_cause_quotes_the_run_what_if():
    hosts = [
        {"host": "a", "findings": [_finding("input")]},
        {"host": "b", "findings": [_finding("input"), _finding("kernel")]},
    ]
    defer_to_run(hosts, _ranks(), {0: "a", 1: "b"})
    assert hosts[0]["findings"][0]["summary"] == "S."
    assert hosts[1]["findings"][1]["summary"] == "S."  # not its cause
    assert hosts[1]["findings"][0]["summary"] == (
        "S. The other ranks wait for this rank (20.00 ms per step): the up to 1.50× here is this rank's own step "
        "alone; for the run, the Ranks section's what-if if rank 1 matched the median rank (a model) gives 10.00 ms "
        "per step instead of 30.00 ms (about 3.00×)."
    )
    assert hosts[1]["findings"][0]["speedup_basis"].startswith("upper bound; of this rank's own step alone")


def test_nothing_changes_without_a_straggler_or_a_modelled_step():
    for ranks in ({"slowest": None, "what_if": []}, _ranks(step_ms=None)):
        hosts = [{"host": "b", "findings": [_finding("input")]}]
        defer_to_run(hosts, ranks, {1: "b"})
        assert hosts[0]["findings"][0]["summary"] == "S."


def test_the_critical_path_names_a_ranks_input_inside_its_work_and_small_calls_are_latency_bound():
    from tb_gpu_advisor.report.ranks_sections import _chain, _latency_bound

    segments = [
        {"kind": "work", "rank": 2, "start_ms": 0.0, "end_ms": 21.4, "collective": None},
        {"kind": "collective", "rank": None, "start_ms": 21.4, "end_ms": 36.3, "collective": "allreduce"},
    ]
    assert _chain(segments, {2: ("input", 20.3)}) == (
        "rank 2 work 21.40 ms (its input this step: 20.30 ms) -> allreduce transfer 14.90 ms"
    )
    assert _chain(segments, {2: ("input", 0.06)}) == "rank 2 work 21.40 ms -> allreduce transfer 14.90 ms"
    small = {"collective": "allreduce", "median_bytes": 203304}
    assert _latency_bound([small]) and not _latency_bound([{**small, "median_bytes": 16 * 2**20}])
