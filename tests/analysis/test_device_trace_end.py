"""A device trace that stopped before the host's (analysis.device_trace_end): written Kineto traces with exact
numbers, and the committed real ones, none of which stopped."""

from tb_gpu_advisor.analysis.device_trace_end import device_trace_stopped
from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.pipeline import host_report
from tb_gpu_advisor.testing.kineto_trace import kernel, launch, trace_text, x_event


def _trace(tmp_path, recorded_steps, steps=10, launches=40):
    """`steps` steps of 1 ms, each launching `launches` kernels of 20 us; the device events of the first
    `recorded_steps` only are in the trace."""
    events, correlation = [], 1
    for step in range(steps):
        at = step * 1000
        events.append(x_event("user_annotation", f"ProfilerStep#{step}", at, 1000))
        for index in range(launches):
            events.append(launch(at + index * 5, 4, correlation))
            if step < recorded_steps:
                events.append(kernel("k", at + 300 + index * 20, 20, correlation))
            correlation += 1
    path = tmp_path / "rank0.1.pt.trace.json"
    path.write_text(trace_text(events))
    return load_model(path)


def test_host_calls_going_on_after_the_last_gpu_event_mean_the_device_trace_stopped(tmp_path):
    # Device events for 4 of 10 steps: the last ends at 3000+300+800 = 4100 us; after it the host made 19 of
    # step 4's launches (4105-4195 us) and 5 x 40 more, 219; its last call ends at 9000+195+4 = 9199 us (step
    # markers are not host work), 5099 us later.
    found = device_trace_stopped(_trace(tmp_path, recorded_steps=4))
    assert (found.calls, found.after_ps) == (219, 5_099_000_000)
    confidence = host_report(_trace(tmp_path, recorded_steps=4))["summary"]["confidence"]
    assert confidence["level"] == "low"
    assert any(
        "GPU events end 5.1 ms before the host's" in reason and "Recapture fewer steps" in reason
        for reason in confidence["reasons"]
    )


def test_a_complete_device_trace_did_not_stop(tmp_path):
    assert device_trace_stopped(_trace(tmp_path, recorded_steps=10)) is None
    # 2 steps lost of 10: 80 calls, under the 100 that tell a stopped tracer from a capture's last calls.
    assert device_trace_stopped(_trace(tmp_path, recorded_steps=8)) is None


def test_no_committed_real_kineto_trace_stopped_early(kineto_models):
    # At most 11 host calls after the last GPU event (alexnet's final syncs, 75.8 ms of 43 s).
    assert {name: device_trace_stopped(model) for name, model in kineto_models.items()} == dict.fromkeys(kineto_models)
