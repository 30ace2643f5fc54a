import io

from tb_gpu_advisor import cli
from tb_gpu_advisor.findings import engine
from tb_gpu_advisor.testing import TraceBuilder
from tests.findings.scenarios import EIGEN, findings_by_id, kernels, report_of, step_starts

SEVERITY_ORDER = {"high": 0, "medium": 1, "low": 2}


def mixed_trace():
    """Input-bound steps whose compute is many element-wise kernels, with a small summary stall."""
    builder = TraceBuilder()
    python = builder.thread("python")
    gpu = builder.gpu(0)
    for start in step_starts(python):
        python.input_wait(start, 5_000)
        kernels(gpu, start + 5_000, 4_800, name=EIGEN, count=60, gap_us=5.0, grid=(216, 1, 1), block=(256, 1, 1))
        gpu.kernel("volta_sgemm_128x64_nn", start + 9_800, 20)  # the step's matmul: a complete capture
        python.event("summary/WriteScalarSummary:WriteScalarSummary", start + 9_850, 150)
    return builder


def test_findings_are_ranked_by_severity_then_speedup():
    findings = report_of(mixed_trace())["findings"]
    keys = [(SEVERITY_ORDER[f["severity"]], -f["estimated_speedup"]) for f in findings]
    assert keys == sorted(keys)
    assert [f["id"] for f in findings][:2] == ["input.gpu_waits_for_input", "fusion.elementwise_kernels"]
    assert findings[-1]["severity"] == "low"


def test_a_failing_rule_becomes_a_note_and_the_others_still_run(monkeypatch):
    def broken(ctx):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(engine, "RULES", (broken,) + engine.RULES)
    report = report_of(mixed_trace())
    assert "input.gpu_waits_for_input" in findings_by_id(report)
    assert any(
        note.startswith("Finding rule test_engine.broken failed on this trace (ZeroDivisionError")
        for note in report["notes"]
    )


def test_text_report_leads_with_the_verdict_and_findings_in_80_columns(tmp_path):
    path = mixed_trace().write(str(tmp_path / "worker0.xplane.pb"))
    out = io.StringIO()
    assert cli.main(["analyze", path, "--format", "text"], out=out, err=io.StringIO()) == 0
    lines = out.getvalue().splitlines()
    assert lines[0] == "worker0"
    assert lines[2].startswith("Verdict: Input-bound: the GPU waits for input 50% of each step. Fixing")
    assert lines[3] == "  #1, #2 together: up to 2.00× faster (bound #1; model #2; held at the step"
    assert lines.index("Findings") < lines.index("Steps")
    assert lines[lines.index("Findings") + 2] == "1. [high] The GPU waits for the input pipeline (up to 2.00×)"
    assert max(len(line) for line in lines) <= 80


def test_markdown_and_json_carry_the_findings(tmp_path):
    path = mixed_trace().write(str(tmp_path / "worker0.xplane.pb"))
    out = io.StringIO()
    cli.main(["analyze", path, "--format", "markdown"], out=out, err=io.StringIO())
    assert "### Findings" in out.getvalue()
    assert "Verdict: Input-bound" in out.getvalue()


def test_combined_estimate_adds_time_from_different_pools_once_but_not_past_the_loaders_pace():
    """Input wait 5 ms and element-wise kernels about 4.5 ms of each 10 ms step come from different pools, but the
    input fix moves the loading into workers whose pace the trace does not show: the step is held at the 5 ms
    the input wait leaves (2.0x), not 0.5 ms (20.2x), and the verdict says why; a bound, "up to" as on #1's
    badge: the figure is held at the floor the input fix (a bound) leaves, whatever the model #2 adds."""
    report = report_of(mixed_trace())
    assert report["summary"]["combined_estimate"] == {
        "estimated_speedup": 2.0,
        "speedup_kind": "mixed",
        "finding_ids": ["fusion.elementwise_kernels", "input.gpu_waits_for_input"],
        "shared_ids": [],
        "capped_by_gpu_work": False,
        "capped_by": "loader_pace",
    }
    assert report["summary"]["verdict"].endswith(
        "Fixing findings #1, #2 together: up to 2.00× faster (bound #1; model #2; held at the step without the "
        "input wait: a shorter one needs the loader's workers to keep up with it, which this trace cannot show)."
    )


def test_combined_estimate_counts_shared_time_once_and_prefers_what_ifs():
    """Over time two claims share the joint figure is the larger of the two (review final3 4): the loss's 6 ms bound
    over the what-if's 4 ms, so a bound, and the loss is then the one counted, the what-if shared (review finalA
    5: the ids say whose figure it is); a smaller loss leaves the what-if counted."""
    from tb_gpu_advisor.whatif.combined import Claim, combine

    claims = [
        Claim("idle", 6.0, "bound", frozenset({"host"}), what_if=False),
        Claim("map", 4.0, "model", frozenset({"host"})),
        Claim("copies", 1.0, "model", frozenset({"copies"})),
    ]
    combined = combine(10.0, claims)
    assert combined.counted == ("idle", "copies") and combined.shared == ("map",)
    assert combined.speedup == round(10.0 / 3.0, 2) and combined.kind == "mixed"  # 10 -> 10 - max(6, 4) - 1 ms
    smaller = [Claim("idle", 3.0, "bound", frozenset({"host"}), what_if=False), *claims[1:]]
    assert combine(10.0, smaller).speedup == 2.0 and combine(10.0, smaller).kind == "model"  # 10 -> 10 - 4 - 1
    assert combine(10.0, smaller).counted == ("map", "copies") and combine(10.0, smaller).shared == ("idle",)
    assert combine(10.0, []) is None


def test_a_set_of_fixes_never_gains_less_than_a_shared_what_if_among_them():
    """A cause counted first (leads) takes a pool; a shared what-if that takes more from that pool lifts the joint
    figure by the difference, and as a bound makes it one; so does a shared loss (not a what-if): fixing both
    never gains less than the loss's bound alone (review final3 4, jax_float32_images: 1.20x model -> 1.29x bound)."""
    from tb_gpu_advisor.whatif.combined import Claim, combine

    cause = Claim("cause", 2.0, "model", frozenset({"copies"}), leads=True)
    overlap = Claim("overlap", 3.0, "bound", frozenset({"copies"}))
    combined = combine(10.0, [cause, overlap])
    assert combined.counted == ("overlap",) and combined.shared == ("cause",)
    assert combined.speedup == round(10.0 / 7.0, 2) and combined.kind == "bound"
    loss = Claim("loss", 3.0, "bound", frozenset({"copies"}), what_if=False)
    assert combine(10.0, [cause, loss]).speedup == round(10.0 / 7.0, 2) and combine(10.0, [cause, loss]).kind == "bound"


def test_combined_estimate_never_promises_a_step_shorter_than_the_gpu_work_left():
    """A 10 ms step whose GPU is busy 6 ms: fixes of 8 ms of idle and host time leave the step at the GPU's 6 ms
    (1.67x, not 5x), capped and said so; a kernel fix of 2 ms lowers that floor to 4 ms (2.5x)."""
    from tb_gpu_advisor.whatif.combined import Claim, combine

    idle = Claim("idle", 8.0, "bound", frozenset({"host", "idle"}))
    capped = combine(10.0, [idle], device_busy_ms=6.0)
    assert capped.speedup == 1.67 and capped.capped_ms == 6.0
    faster = combine(10.0, [idle, Claim("kernels", 2.0, "model", frozenset({"kernel"}))], device_busy_ms=6.0)
    assert faster.speedup == 2.5 and faster.capped_ms == 4.0
    assert combine(10.0, [idle], device_busy_ms=1.0).capped_ms is None  # 2 ms left is above the GPU's 1 ms


def test_removing_a_wait_never_promises_a_step_shorter_than_the_host_work_left():
    """A 10 ms step: 6 ms of GPU idle after a read back, 4 ms of GPU work, 7 ms of host work. Without the read the
    host's work overlaps the GPU's but stays: the step is held at 7 ms (1.43x, not 2.5x). A claim on the host's
    own work shares the read's pools and is counted instead where it is larger: then no wait fix counts and the
    host's work is no floor."""
    from tb_gpu_advisor.whatif.combined import Claim, combine

    read = Claim("read", 6.0, "bound", frozenset({"host", "launch", "idle"}), removes_wait=True)
    held = combine(10.0, [read], device_busy_ms=4.0, host_work_ms=7.0)
    assert held.speedup == 1.43 and (held.capped_ms, held.capped_by) == (7.0, "host_work")
    host = Claim("host", 6.2, "bound", frozenset({"host"}))
    by_host = combine(10.0, [read, host], device_busy_ms=3.0, host_work_ms=7.0)
    assert by_host.counted == ("host",) and by_host.shared == ("read",) and by_host.capped_by is None


def test_a_wait_that_exposes_the_host_work_it_shares_is_counted_in_its_place():
    """The same 10 ms step, where the read is the cause of the host claim's time (it leads: the idle after it is
    the host's next dispatch): the read counts, the host claim's time is the same time, and the step is held at
    the host's 7 ms of work (1.43x), not the 2.6x that summing the host claim's own time would promise."""
    from tb_gpu_advisor.whatif.combined import Claim, combine

    read = Claim("read", 6.0, "bound", frozenset({"host", "launch", "idle"}), removes_wait=True, leads=True)
    host = Claim("host", 6.2, "bound", frozenset({"host"}))
    both = combine(10.0, [host, read], device_busy_ms=3.0, host_work_ms=7.0)
    assert both.counted == ("read",) and both.shared == ("host",)
    assert both.speedup == 1.43 and both.capped_by == "host_work" and both.kind == "bound"


def test_the_input_wait_holds_the_step_only_with_other_claims_beside_it():
    from tb_gpu_advisor.whatif.combined import Claim, combine

    wait = Claim("wait", 6.0, "bound", frozenset({"input_wait"}))
    assert combine(10.0, [wait]).speedup == 2.5 and combine(10.0, [wait]).capped_by is None
    both = combine(10.0, [wait, Claim("copies", 2.0, "model", frozenset({"copies"}))])
    assert both.speedup == 2.5 and both.capped_by == "loader_pace"


def test_a_figure_held_at_a_floor_that_is_no_model_is_a_bound():
    """A joint figure with a bound among its parts is a bound: a part at most its number makes the sum at most
    the sum, whatever a model beside it expects. Models alone make a model, unless a floor holds the figure: the
    host's work, the step the input fix leaves, or the GPU's work less what bounds alone take off it; a GPU floor
    lowered by a model stays a model."""
    from tb_gpu_advisor.whatif.combined import Claim, combine

    read = Claim("read", 6.0, "bound", frozenset({"host", "launch", "idle"}), removes_wait=True)
    fusion = Claim("fusion", 1.0, "model", frozenset({"fusion_pool"}))
    # a bound and a model counted: "mixed", an upper limit as a bound is
    assert combine(10.0, [read, fusion], host_work_ms=7.0).kind == "mixed"  # held at 7 ms of host work
    assert combine(10.0, [read, fusion]).kind == "mixed"  # 3 ms: nothing holds it, but #read is a bound
    idle = Claim("idle", 8.0, "model", frozenset({"host", "idle"}))
    kernels = Claim("kernels", 2.0, "model", frozenset({"kernel"}))
    assert combine(10.0, [idle, fusion]).kind == "model"  # models only, nothing holds them
    assert combine(10.0, [idle, kernels], device_busy_ms=6.0).kind == "model"  # the floor 4 ms is 6 less a model
    assert combine(10.0, [idle, fusion], device_busy_ms=6.0).kind == "bound"  # the GPU's own 6 ms


def test_a_joint_figure_of_bounds_and_models_is_mixed():
    """Counted bounds and models: kind "mixed" (review final3 6: the verdict says "(bound #1; model #2)"), worded
    and scored as a bound; all of one kind stays that kind."""
    from tb_gpu_advisor.comparison.predictions import check
    from tb_gpu_advisor.report.units import speedup_phrase
    from tb_gpu_advisor.whatif.combined import Claim, combine

    bound = Claim("bound", 4.0, "bound", frozenset({"host"}))
    model = Claim("model", 1.0, "model", frozenset({"kernel"}))
    mixed = combine(10.0, [bound, model])
    assert mixed.kind == "mixed" and mixed.speedup == 2.0
    assert speedup_phrase(mixed.speedup, mixed.kind) == "up to 2.00\u00d7"
    assert check(mixed.speedup, 2.5, mixed.kind)["score"] == "bound_exceeded"
    assert combine(10.0, [bound]).kind == "bound" and combine(10.0, [model]).kind == "model"


def test_removing_the_input_wait_on_a_cpu_only_profile_is_no_bound():
    """Without a GPU the input pipeline computes on the step's cores: a finding whose time is the input wait
    alone is an estimate ("about"), not a bound (review final3 7: a parallel map measured 1.61x beside a 1.36x
    'up to'); findings on other pools, or already models, keep their kind."""
    from tb_gpu_advisor.findings.engine import on_shared_cores
    from tb_gpu_advisor.findings.finding import Evidence, Finding

    def finding(fid, kind="bound"):
        return Finding(fid, "high", "", Evidence({}, {}), 26.6, 100.0, "upper bound", speedup_kind=kind)

    seq = on_shared_cores(finding("input.sequential_map"))
    assert seq.speedup_kind == "model" and seq.speedup_basis.startswith("estimate; not a bound: on a profile")
    assert seq.estimated_speedup == 1.36
    assert on_shared_cores(finding("host.python_function")).speedup_kind == "bound"
    assert on_shared_cores(finding("input.no_prefetch", "model")).speedup_basis == "upper bound"


def test_a_claim_set_against_the_unprofiled_step_says_so():
    """Review final3 5: a stall of 4.54 ms per step, 31.4% of a 14.47 ms captured step, bounded on the step
    without the profiler's own host time (13.92 ms): the summary gives the one stall time against that step, so
    its share there (32.6%) gives the bound (1/(1 - 0.326) = 1.48x); a claim whose speedup does not move says
    nothing more."""
    from tb_gpu_advisor.analysis.capture_overhead import HostInflation
    from tb_gpu_advisor.findings.engine import unprofiled
    from tb_gpu_advisor.findings.finding import Evidence, Finding

    window = 14.47 * 8
    inflation = HostInflation(window, 0.1, window - 13.92 * 8)
    stall = Finding("host.op_stall", "high", "Stalls.", Evidence({}, {}), 4.54 * 8, window, "upper bound")
    out = unprofiled(stall, inflation, 8)
    assert out.estimated_speedup == 1.48 and stall.estimated_speedup == 1.46
    assert out.summary == (
        "Stalls. The estimate sets its 4.54 ms per step against the step without the profiler's own host time "
        "(13.92 ms), so it is 32.6% of that step."
    )
    tiny = Finding("host.op_stall", "high", "Tiny.", Evidence({}, {}), 0.01, window, "upper bound")
    assert unprofiled(tiny, inflation, 8).summary == "Tiny."
