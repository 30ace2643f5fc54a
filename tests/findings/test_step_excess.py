"""findings/step_excess.py: the slow steps' excess split into recoverable time, work and waits (issue 29)."""

from tb_gpu_advisor.analysis.collective_waits import CollectiveWaits
from tb_gpu_advisor.analysis.step_variance import StepVariance
from tb_gpu_advisor.findings.step_excess import condition, excess_of, listed


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
