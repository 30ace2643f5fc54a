"""Trace confidence of what a capture holds: cut steps, no repeating step, warm-up, one rank of several; on
generated Kineto traces for exact cases and on the committed real traces where the case is real."""

from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.pipeline import host_report
from tb_gpu_advisor.testing.kineto_trace import kernel, launch, trace_text, x_event
from tb_gpu_advisor.testing import TraceBuilder
from tests.data import real_trace
from tests.findings.scenarios import kernels, report_of, step_starts

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


def _report(tmp_path, events, **top):
    path = tmp_path / "rank0.1.pt.trace.json"
    path.write_text(trace_text(events, deviceProperties=PROPS, **top))
    return host_report(load_model(path))


def _steps(count, first_launch_us=4, kernels_per_step=3):
    """`count` ProfilerSteps launching the same kernels; the first launch of step 0 takes `first_launch_us`
    (its step is longer by as much)."""
    events, correlation, base = [], 0, 0
    for n in range(count):
        length = 1000 + (first_launch_us if n == 0 else 0)
        events.append(x_event("user_annotation", f"ProfilerStep#{n + 5}", base, length))
        at = base + 10
        for k in range(kernels_per_step):
            correlation += 1
            took = first_launch_us if n == 0 and k == 0 else 4
            events += [launch(at, took, correlation), kernel(f"gemm_{k}", at + took + 1, 200, correlation)]
            at += took + 300
        base += length
    return events


def _confidence(report):
    return report["summary"]["confidence"]


def test_warm_steps_of_one_process_are_high(tmp_path):
    report = _report(tmp_path, _steps(4))
    assert _confidence(report) == {"level": "high", "reasons": []}


def test_a_step_the_capture_cut_is_not_a_complete_step(tmp_path):
    """Kineto's last ProfilerStep when the profiler stops inside it: no GPU work, not a step."""
    events = _steps(1) + [x_event("user_annotation", "ProfilerStep#6", 1000, 40)]
    found = _confidence(_report(tmp_path, events))
    assert found["level"] == "low"
    assert found["reasons"][0].startswith(
        "Only 1 complete step of the 2 marked in the profile (ProfilerStep#6: cut by the capture"
    )


def test_a_long_first_launch_on_an_idle_gpu_is_warm_up(tmp_path):
    """A 3 ms cudaLaunchKernel while the GPU has nothing to run loads the kernel's module: the step holds warm-up,
    and the launch finding says to recapture after it before advising CUDA graphs."""
    report = _report(tmp_path, _steps(4, first_launch_us=3000))
    found = _confidence(report)
    assert found["level"] == "medium"
    assert any(
        reason.startswith("Warm-up inside the captured steps: 3 ms of first-use setup") for reason in found["reasons"]
    )
    launch_finding = next(f for f in report["findings"] if f["id"] == "launch.gpu_starved_by_launches")
    assert launch_finding["severity"] != "high"
    assert launch_finding["fix_summary"].startswith("Recapture after warm-up")
    assert "HIP graphs on ROCm" in launch_finding["fix"]


def test_a_small_warm_up_is_a_note_and_degrades_no_finding(tmp_path):
    """1.5 ms of module loading in 40 steps of ~1 ms (3.6% of the steps' time) cannot change what the steps show:
    a note, confidence high, and no finding told to recapture; the same 1.5 ms in 10 steps (13%) is a reason."""
    report = _report(tmp_path, _steps(40, first_launch_us=1500))
    assert _confidence(report) == {"level": "high", "reasons": []}
    assert (
        "Warm-up inside the captured steps: 1.5 ms of first-use setup (3.6% of the steps' time), too little to "
        "change the findings."
    ) in report["notes"]
    assert not any(f["fix_summary"].startswith("Recapture") for f in report["findings"])
    found = _confidence(_report(tmp_path, _steps(10, first_launch_us=1500)))
    assert found["level"] == "medium"
    assert found["reasons"][0].startswith("Warm-up inside the captured steps: 1.5 ms of first-use setup")


def test_a_long_launch_while_the_gpu_is_busy_is_not_warm_up(tmp_path):
    """A full launch queue blocks cudaLaunchKernel while the GPU works: steady state, not warm-up."""
    events = _steps(4)
    events += [launch(2000, 1500, 99), kernel("long_gemm", 1990, 1600, 98)]
    assert not any("Warm-up" in reason for reason in _confidence(_report(tmp_path, events))["reasons"])


def test_setup_calls_of_a_millisecond_or_more_are_warm_up(tmp_path):
    events = _steps(4) + [x_event("cuda_runtime", "cudaStreamCreateWithFlags", 100, 2000)]
    found = _confidence(_report(tmp_path, events))
    assert any(reason.startswith("Warm-up inside the captured steps: 2 ms") for reason in found["reasons"])


def test_one_rank_of_several_is_medium_and_says_to_capture_all_ranks(tmp_path):
    report = _report(tmp_path, _steps(4), distributedInfo={"rank": 3, "world_size": 8, "backend": "nccl"})
    found = _confidence(report)
    assert found["level"] == "medium"
    assert found["reasons"][0].startswith("This file is rank 3 of 8 ranks of a distributed job")
    assert "Capture all ranks" in found["reasons"][0]


def test_main_kernels_each_in_a_stretch_of_their_own_is_no_repeating_step(tmp_path):
    """A sweep: gemm_a x3, then gemm_b x3, then gemm_c x3, no step markers: no training step to judge; the host
    time between kernels is not a step's, so no host or launch finding."""
    events, correlation = [], 0
    for k, name in enumerate(("gemm_a", "gemm_b", "gemm_c")):
        for repeat in range(3):
            correlation += 1
            start = 3000 * k + 900 * repeat
            events += [launch(start, 5, correlation), kernel(name, start + 600, 200, correlation)]
    report = _report(tmp_path, events)
    found = _confidence(report)
    assert found["level"] == "low" and found["reasons"][0].startswith("No step markers, and no step repeats")
    assert report["summary"]["verdict"].startswith("Not enough trace for a verdict (no repeating step")
    assert not [f for f in report["findings"] if f["category"] in ("host", "launch", "batch")]


def test_interleaved_kernels_without_markers_stay_medium(tmp_path):
    events, correlation = [], 0
    for repeat in range(3):
        for k, name in enumerate(("gemm_a", "gemm_b", "gemm_c")):
            correlation += 1
            start = 3000 * repeat + 900 * k
            events += [launch(start, 5, correlation), kernel(name, start + 600, 200, correlation)]
    found = _confidence(_report(tmp_path, events))
    assert found["level"] == "medium" and found["reasons"][0].startswith("No step markers: every share")


# --- the real traces ---------------------------------------------------------------------------------------


def test_real_amd_gemm_micro_benchmark_is_low_with_no_host_bound_fix():
    """Five GEMM shapes each run 3 times in a row by a JAX script: no training step in it."""
    report = host_report(load_model(real_trace("amd_mi300x_jax08_gemm.xplane.pb")))
    found = _confidence(report)
    assert found["level"] == "low"
    assert found["reasons"][0].startswith(
        "No step markers, and no step repeats in the profile: each of the 3 "
        "kernels with most of the GPU time ran in a stretch of its own"
    )
    assert "jax.profiler.StepTraceAnnotation" in found["reasons"][0]
    assert report["summary"]["bottleneck"] == "unknown"
    assert report["summary"]["verdict"] == (
        "Not enough trace for a verdict (no repeating step; see confidence). As captured: the GPU is busy 37% of "
        "the profiled time; the host time between kernels belongs to the code around them, not to a training "
        "step."
    )
    assert not [f["id"] for f in report["findings"] if f["category"] in ("host", "launch", "batch")]
    # JAX opened all 8 GPUs: the trace cannot say the job meant one; the AMD variables come first
    assert report["notes"][0] == (
        "7 of 8 GPUs visible to this process ran no kernel (GPU 1, GPU 2, GPU 3, GPU 4, GPU 5, GPU 6, GPU 7); "
        "nothing in the trace says the job meant to use them. If it did, shard the batch over jax.devices() "
        "(jax.sharding / pmap); if not, restrict HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES (CUDA_VISIBLE_DEVICES "
        "on NVIDIA)."
    )


def test_real_one_rank_of_an_8_rank_job_is_medium(kineto_models):
    report = host_report(kineto_models["a100_8rank_control"])
    found = _confidence(report)
    assert found["level"] == "medium" and len(found["reasons"]) == 1
    assert found["reasons"][0].startswith("This file is rank 3 of 8 ranks of a distributed job")
    assert all(f["severity"] != "high" for f in report["findings"] if f["category"] == "communication")


def test_real_mi250_trace_is_one_warm_step(kineto_models):
    """ProfilerStep#1 holds a 6.5 ms hipLaunchKernel (code-object load on first launch); ProfilerStep#2 is the
    49 us stub the profiler cut."""
    report = host_report(kineto_models["mi250_minitoy_train"])
    found = _confidence(report)
    assert found["level"] == "low"
    # one count: the header's "Steps: 2" are the 2 marked, of which 1 is complete
    assert found["reasons"][0].startswith(
        "Only 1 complete step of the 2 marked in the profile (ProfilerStep#2: cut by the capture"
    )
    assert found["reasons"][1].startswith("Warm-up inside the captured steps: 6.54 ms of first-use setup")
    assert report["summary"]["verdict"].startswith(
        "Not enough trace for a verdict (1 complete step; warm-up in the steps; see confidence)"
    )
    launch_finding = next(f for f in report["findings"] if f["id"] == "launch.gpu_starved_by_launches")
    assert launch_finding["severity"] == "medium"
    assert launch_finding["fix_summary"].startswith("Recapture after warm-up")
    assert "HIP graphs on ROCm" in launch_finding["fix"]


def test_real_alexnet_trace_is_mostly_warm_up(kineto_models):
    """12.3 s of the 12.9 s of activity are context creation (cudaDeviceGetStreamPriorityRange, cudaFree),
    stream creation, first allocations and a 3 s first cudaLaunchKernel."""
    report = host_report(kineto_models["a100_alexnet_sync"])
    found = _confidence(report)
    assert found["level"] == "low"
    assert found["reasons"][0].startswith("Warm-up in the profile: 12.3 s (95% of the activity) of first-use setup")
    assert all(f["severity"] != "high" for f in report["findings"])
    # no joint speedup claim in a trace too thin for a verdict; as captured, the setup is named
    assert "Fixing findings" not in report["summary"]["verdict"]
    assert "As captured: first-use setup" in report["summary"]["verdict"]
    host = next(f for f in report["findings"] if f["id"] == "host.gpu_idle_host_busy")
    assert host["fix"].startswith("Warm-up is inside this capture")
    # the fix leads with recapturing, as the launch finding's does, not with torch.compile
    assert host["fix_summary"].startswith("Recapture after warm-up") and "torch.compile" not in host["fix_summary"]


def test_steps_whose_gpu_events_are_missing_make_a_partial_capture_low():
    """6 marked steps; the GPU works in 4 of them and has no event at all in steps 2 and 4: those device events
    were not recorded, and their time must not read as idle."""
    builder = TraceBuilder()
    python = builder.thread("python")
    gpu = builder.gpu(0)
    for index, start in enumerate(step_starts(python, 6)):
        if index not in (2, 4):
            kernels(gpu, start + 200, 9_000, launch_thread=python)
    confidence = report_of(builder)["summary"]["confidence"]
    assert confidence["level"] == "low"
    assert confidence["reasons"][0].startswith("A partial or sampled capture: 2 of 6 complete steps (")
