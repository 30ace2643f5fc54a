"""Step windows on the device: each host step's device work placed where the GPU ran it, on generated Kineto traces
(exact numbers) and on the real H200 PyTorch captures (the host runs ahead; the device sets the pace)."""

import pytest

from tb_gpu_advisor.analysis.steps import find_steps, step_time_stats_ms
from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.pipeline import host_report
from tb_gpu_advisor.testing.kineto_trace import kernel, launch, trace_text, x_event
from tests.data import REAL, real_trace

PROPS = [
    {
        "id": 0,
        "name": "NVIDIA H100 80GB HBM3",
        "totalGlobalMem": 85_000_000_000,
        "computeMajor": 9,
        "computeMinor": 0,
        "numSms": 132,
    }
]


def _model(tmp_path, events):
    path = tmp_path / "rank0.1.pt.trace.json"
    path.write_text(trace_text(events, deviceProperties=PROPS))
    return load_model(path)


def _host_ahead(count=4, host_step=100, kernel_us=60, kernels=4):
    """Steps of `host_step` µs on the host, each launching `kernels` kernels of `kernel_us` µs back to back: the
    device needs kernels * kernel_us per step, so a fast host runs ahead and the queue grows."""
    events, correlation, device_free = [], 0, 0
    for n in range(count):
        start = n * host_step
        events.append(x_event("user_annotation", f"ProfilerStep#{n}", start, host_step))
        for k in range(kernels):
            correlation += 1
            at = start + 10 + 20 * k
            begin = max(at + 5, device_free)
            events += [launch(at, 4, correlation), kernel(f"k{k}", begin, kernel_us, correlation)]
            device_free = begin + kernel_us
    return events


def test_a_host_running_ahead_times_its_steps_on_the_device(tmp_path):
    """Host steps of 100 µs; the device runs each step's four 60 µs kernels back to back: 240 µs per step."""
    step_set = find_steps(_model(tmp_path, _host_ahead()))
    assert step_set.timing == "device"
    gpu = step_set.device_steps[0]
    # The first window starts at its marker: the idle device waited for the host's first launch (15 µs).
    assert [(s.index, s.start_ps, s.end_ps, s.first_ps, s.work_end_ps, s.events) for s in gpu.steps] == [
        (0, 0, 255_000_000, 15_000_000, 255_000_000, 4),
        (1, 255_000_000, 495_000_000, 255_000_000, 495_000_000, 4),
        (2, 495_000_000, 735_000_000, 495_000_000, 735_000_000, 4),
        (3, 735_000_000, 975_000_000, 735_000_000, 975_000_000, 4),
    ]
    assert [s.duration_ps for s in step_set.steps] == [100_000_000] * 4  # the markers stay as found
    assert [s.duration_ps for s in step_set.timed_steps] == [255_000_000] + [240_000_000] * 3
    assert step_time_stats_ms(step_set) == pytest.approx({"mean": 0.24375, "median": 0.24, "stdev": 0.0075, "count": 4})


def test_a_device_waiting_on_the_host_gets_the_host_pace(tmp_path):
    """Host steps of 1000 µs each launching 4 short kernels: the idle device waits for the host, so a step's window
    starts with its marker (the host's time before the first launch is the step's) and runs to the next step's
    start, the last one to its marker's end; HTA's first-to-last-kernel span is kept beside it."""
    step_set = find_steps(_model(tmp_path, _host_ahead(count=3, host_step=1000, kernel_us=2)))
    steps = step_set.device_steps[0].steps
    assert [(s.start_ps, s.end_ps, s.first_ps, s.work_span_ps) for s in steps] == [
        (0, 1_000_000_000, 15_000_000, 62_000_000),
        (1_000_000_000, 2_000_000_000, 1_015_000_000, 62_000_000),
        (2_000_000_000, 3_000_000_000, 2_015_000_000, 62_000_000),
    ]
    assert step_time_stats_ms(step_set)["median"] == 1.0


def test_graph_replays_give_their_kernels_to_the_step_that_launched_the_graph(tmp_path):
    """A CUDA graph replay: one cudaGraphLaunch, many kernels sharing its correlation id."""
    events = []
    for n in range(3):
        base = n * 500
        events.append(x_event("user_annotation", f"ProfilerStep#{n}", base, 500))
        events.append(launch(base + 10, 30, 100 + n, name="cudaGraphLaunch"))
        events += [kernel(f"triton_poi_fused_{k}", base + 50 + 100 * k, 80, 100 + n) for k in range(4)]
    step_set = find_steps(_model(tmp_path, events))
    assert [(s.events, s.first_ps, s.work_end_ps) for s in step_set.device_steps[0].steps] == [
        (4, 50_000_000, 430_000_000),
        (4, 550_000_000, 930_000_000),
        (4, 1_050_000_000, 1_430_000_000),
    ]


def test_work_launched_before_the_capture_belongs_to_no_step(tmp_path):
    """Kernels whose launch the trace lacks (queued before the profiler started) are in no step's window."""
    events = [kernel("leftover", 0, 300, 9999)] + [
        x_event("user_annotation", "ProfilerStep#0", 10, 100),
        launch(20, 4, 1),
        kernel("k", 300, 50, 1),
    ]
    step = find_steps(_model(tmp_path, events)).device_steps[0].steps[0]
    assert (step.start_ps, step.work_end_ps, step.events) == (300_000_000, 350_000_000, 1)  # after the leftover


def test_without_launches_in_the_steps_the_markers_time_the_steps(tmp_path):
    events = [x_event("user_annotation", f"ProfilerStep#{n}", n * 100, 100) for n in range(3)]
    events += [launch(400, 4, 1), kernel("k", 410, 50, 1)]  # launched after the last step
    step_set = find_steps(_model(tmp_path, events))
    assert step_set.timing == "host" and step_set.timed_steps == step_set.steps


def test_the_report_says_where_the_step_time_comes_from(tmp_path):
    summary = host_report(_model(tmp_path, _host_ahead()))["summary"]
    assert (summary["step_source"], summary["step_timing"]) == ("host", "device")
    assert summary["step_time_ms"]["median"] == 0.24 and summary["step_time_ms"]["mean"] == 0.24375


@pytest.mark.parametrize(
    "run, host_ms, device_ms",
    [
        ("healthy", 14.32, 24.77),  # measured without the profiler: 24.4 ms per step
        ("launch_eager", 26.90, 26.90),  # the device waits on the host: the host's pace either way
    ],
)
def test_real_h200_pytorch_steps_are_timed_on_the_device(run, host_ms, device_ms):
    path = next((REAL / "h200" / "torch" / run).glob("*.pt.trace.json.gz"))
    step_set = find_steps(load_model(real_trace(str(path.relative_to(REAL)))))
    assert step_set.timing == "device"
    host = sorted(s.duration_ps for s in step_set.steps)
    assert round((host[3] + host[4]) / 2e9, 2) == host_ms
    assert round(step_time_stats_ms(step_set)["median"], 2) == device_ms


def test_a_setup_call_that_recurs_every_step_is_not_warm_up(tmp_path):
    """A 3 ms cudaFree in every step (allocator churn) is the program's cost, not first-use setup; one in the first
    step only is warm-up."""

    def steps(every):
        events, correlation = [], 0
        for n in range(4):
            base = n * 10_000
            events.append(x_event("user_annotation", f"ProfilerStep#{n}", base, 10_000))
            if every or n == 0:
                events.append(x_event("cuda_runtime", "cudaFree", base + 10, 3000))
            correlation += 1
            events += [launch(base + 4000, 4, correlation), kernel("gemm", base + 4010, 2000, correlation)]
        return events

    def said(every):
        report = host_report(_model(tmp_path, steps(every)))
        return report["summary"]["confidence"]["reasons"] + report["notes"]

    # one-off: warm-up (3 ms of the 40 ms of steps, under 10%: a note that degrades nothing)
    assert any(text.startswith("Warm-up inside the captured steps: 3 ms") for text in said(False))
    assert not any("Warm-up" in text for text in said(True))
