"""The capture's own log in a Kineto trace (kineto.profiler_log): CUPTI stopping early or losing events makes
the capture low confidence, with how to recapture."""

from tb_gpu_advisor.readers.kineto.profiler_log import STOPPED_EARLY_WARNING, capture_warnings
from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.pipeline import host_report
from tb_gpu_advisor.testing.kineto_trace import kernel, launch, trace_text, x_event

_COUNTS = (
    "INFO:2024-05-22 17:15:23 2910249:2910249 CuptiActivityProfiler.cpp:333] Record counts: Out-of-range = "
    "4181, Blocklisted runtime = 37458, Invalid ext correlations = 0, CPU GPU out-of-order = 0, Unexpected "
    "CUDA events = 0, CUPTI stopped early? = {}"
)


def test_the_record_counts_say_whether_cupti_stopped_early():
    assert capture_warnings({"INFO": [_COUNTS.format(1)]}) == (STOPPED_EARLY_WARNING,)
    assert capture_warnings({"INFO": [_COUNTS.format(0)]}) == ()
    assert capture_warnings({}) == ()
    assert capture_warnings({"INFO": "not a list", "WARNING": [3, None]}) == ()


def test_only_log_lines_about_lost_events_are_kept():
    log = {"WARNING": ["CPU trace is empty!", "Dropped 120 activity records"], "ERROR": ["CUPTI buffer overflow"]}
    assert capture_warnings(log) == (
        "Kineto warning: Dropped 120 activity records",
        "Kineto error: CUPTI buffer overflow",
    )


def test_a_capture_whose_cupti_stopped_early_is_low_confidence_with_how_to_recapture(tmp_path):
    events = []
    for step in range(4):
        at = step * 100
        events += [
            x_event("user_annotation", f"ProfilerStep#{step}", at, 100),
            launch(at + 1, 5, step + 1),
            kernel("k", at + 10, 50, step + 1),
        ]
    path = tmp_path / "rank0.1.pt.trace.json"
    path.write_text(trace_text(events, INFO=[_COUNTS.format(1)]))
    confidence = host_report(load_model(path))["summary"]["confidence"]
    assert confidence["level"] == "low"
    reason = next(r for r in confidence["reasons"] if "CUPTI stopped collecting early" in r)
    assert "Recapture fewer steps" in reason
    path.write_text(trace_text(events, INFO=[_COUNTS.format(0)]))
    assert not any("CUPTI" in r for r in host_report(load_model(path))["summary"]["confidence"]["reasons"])
