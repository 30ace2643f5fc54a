"""Causes before their symptoms (findings.causes): a specific cause that accounts for most of a generic symptom's
time leads it, in the list and in the verdict; a weak or unproven cause does not."""

from tb_gpu_advisor.findings.causes import causes_first, explains
from tb_gpu_advisor.findings.finding import Evidence, Finding


def _finding(finding_id, severity, recoverable_ms):
    return Finding(finding_id, severity, "", Evidence({}, {}), recoverable_ms, 100.0, "")


def test_a_cause_with_most_of_the_symptoms_time_leads_at_its_severity():
    """Allocator churn (17 ms of GPU idle in allocator calls) inside 19 ms of idle while the host works."""
    symptom = _finding("host.gpu_idle_host_busy", "high", 19.0)
    cause = _finding("memory.allocator_churn", "medium", 17.0)
    other = _finding("launch.gpu_starved_by_launches", "medium", 5.0)
    ranked = causes_first([symptom, other, cause])
    assert [f.id for f in ranked] == [
        "memory.allocator_churn",
        "host.gpu_idle_host_busy",
        "launch.gpu_starved_by_launches",
    ]
    assert ranked[0].severity == "high"
    assert explains(cause, symptom) and not explains(symptom, cause)


def test_a_small_low_or_unproven_cause_stays_where_it_ranks():
    symptom = _finding("launch.tiny_kernels", "medium", 500.0)
    small = _finding("launch.per_tensor_optimizer", "medium", 200.0)  # under half of the symptom's time
    low = _finding("launch.per_tensor_optimizer", "low", 400.0)
    suspicion = _finding("threading.tf_data_contention", "medium", 400.0)
    unrelated = _finding("precision.fp32_matmul", "medium", 400.0)  # kernel time: no common pool
    for other in (small, low, suspicion, unrelated):
        assert not explains(other, symptom), other
        assert [f.id for f in causes_first([symptom, other])] == [symptom.id, other.id]
