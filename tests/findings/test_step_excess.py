"""findings/step_excess.py: the slow steps' excess split into recoverable time, work and waits (issue 29)."""

from tb_gpu_advisor.analysis.collective_waits import CollectiveWaits
from tb_gpu_advisor.analysis.step_variance import StepVariance
from tb_gpu_advisor.findings.step_excess import condition, excess_of, listed, title_of


def _variance(grown):
    return StepVariance(
        times_ms=(10.0, 20.0, 10.0),
        mean_ms=13.3,
        median_ms=10.0,
        stdev_ms=5.0,
        excess_ms=sum(grown.values()),
        recoverable_ms=grown.get("idle", 0.0),
        excess_by_category_ms=grown,
        cv_without_slowest=0.0,
        recoverable_categories=("input_wait", "input_prep", "idle"),
    )


def test_collectives_are_waits_unless_every_gpu_splits_them():
    variance = _variance({"collectives": 8.0, "compute_32bit": 2.0})
    unsplit = excess_of(variance)
    assert unsplit.waits == {"collectives": 8.0} and unsplit.work == {"compute_32bit": 2.0}
    assert condition(unsplit, share_low=True) == "waits"
    assert "collectives (may be waiting for other ranks) +8.00 ms" in listed(unsplit.waits, waits=True)
    # two GPUs, 3 of each 4 ms of collective kernel time waiting for the last arrival: 6 ms wait, 2 ms transfer
    waits = CollectiveWaits({0: 3, 1: 3}, {0: 1, 1: 1}, 1, 5)
    split = excess_of(variance, waits)
    assert split.waits == {"collectives": 6.0} and split.work == {"compute_32bit": 2.0, "collectives": 2.0}
    assert "collectives waiting for the last GPU" in listed(split.waits, waits=True, split=True)
    assert "collective transfer" in listed(split.work, split=True)


def test_the_host_waiting_on_a_cpu_device_is_a_wait_on_its_compute():
    excess = excess_of(_variance({"host_wait": 4.0, "host": 1.0, "idle": 0.5}))
    assert excess.waits == {"host_wait": 4.0} and excess.recoverable == {"idle": 0.5}
    assert "the CPU executor's compute" in listed(excess.waits, has_gpu=False, waits=True)
    assert condition(excess, share_low=True) == "device_waits"


def test_slow_steps_whose_excess_is_mostly_work_are_titled_after_the_work():
    """Work larger than the recoverable time and the waits: "more_work", whatever part is input; the title says
    host work where the largest work is the host's (review final3 2)."""
    variance = _variance({"host": 6.0, "input_wait": 3.0, "idle": 1.0})
    excess = excess_of(variance)
    assert excess.work_ms == 6.0 and sum(excess.recoverable.values()) == 4.0
    assert condition(excess, share_low=False) == "more_work"
    assert title_of("more_work", excess) == "Some steps do more host work than a steady step"
    device = excess_of(_variance({"compute_32bit": 6.0, "host": 1.0, "input_wait": 3.0}))
    assert title_of(condition(device, share_low=False), device) == "Some steps do more work than a steady step"
    # work equal to or below the recoverable time: still named after the input
    even = excess_of(_variance({"host": 4.0, "input_wait": 3.0, "idle": 1.0}))
    assert condition(even, share_low=False, works_ahead=True) == "input_ahead"


def test_the_input_wait_named_by_another_finding_is_referred_to_by_number():
    """An input finding with time to recover names the input wait's cause: the slow-steps finding whose excess is
    mostly input says "see finding #N" (its number in the report); without one, its own input fix stays."""
    from tb_gpu_advisor.findings.finding import Evidence, Finding
    from tb_gpu_advisor.findings.step_excess import with_input_named

    def finding(fid, recoverable, condition=None):
        return Finding(fid, "low", "", Evidence({}, {}), recoverable, 100.0, "", condition=condition)

    slow = finding("steps.uneven_step_time", 5.0, "input_ahead")
    named = with_input_named((finding("host.gc_pauses", 9.0), finding("input.sequential_map", 20.0), slow))
    assert named[2].condition == "input_named" and named[2].see == 2
    assert named[2].to_dict()["fix_summary"].endswith("see finding #2.")
    assert with_input_named((finding("input.sequential_map", 0.0), slow))[1].condition == "input_ahead"
    work = finding("steps.uneven_step_time", 5.0, "more_work")
    assert with_input_named((finding("input.sequential_map", 20.0), work))[1].condition == "more_work"
