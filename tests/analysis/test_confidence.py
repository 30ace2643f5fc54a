"""Trace confidence: each rule of docs/report.md on a generated trace, and the real V100 trace's `low`."""

from dataclasses import replace

from tb_gpu_advisor.analysis.confidence import trace_confidence
from tb_gpu_advisor.analysis.framework import detect_framework
from tb_gpu_advisor.analysis.steps import find_steps
from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.testing import TraceBuilder
from tests.conftest import model_of
from tests.data import real_trace
from tests.findings.scenarios import healthy, kernels, step_starts

TF, JAX, UNKNOWN = "tensorflow", "jax", "unknown"


def confidence(builder, framework=TF):
    """Confidence of a generated trace, with the framework detected and its name set to `framework`."""
    model = model_of(builder)
    return trace_confidence(model, find_steps(model), replace(detect_framework(model), name=framework))


def test_ten_steps_on_one_gpu_is_high():
    found = confidence(healthy(10))
    assert (found.level, found.reasons, found.notes) == ("high", (), ())


def test_idle_gpus_beside_a_single_gpu_job_are_a_note_not_a_reason():
    builder = healthy(10)
    for ordinal in (1, 2, 3):
        builder.gpu(ordinal)
    found = confidence(builder)
    assert (found.level, found.reasons) == ("high", ())
    # the trace cannot tell a single-GPU job from one that forgot to spread its work: a fix for each reading
    assert found.notes == (
        "3 of 4 GPUs visible to this process ran no kernel (GPU 1, GPU 2, GPU 3); nothing in the "
        "trace says the job meant to use them. If it did, run the step under "
        "tf.distribute.MirroredStrategy() (every visible GPU); if not, restrict "
        "CUDA_VISIBLE_DEVICES (HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES on AMD).",
    )
    jax = confidence(builder, JAX)
    assert "If it did, shard the batch over jax.devices() (jax.sharding / pmap)" in jax.notes[0]


def test_one_step_is_low_and_says_how_to_recapture_in_the_frameworks_idiom():
    tf = confidence(healthy(1), TF)
    assert tf.level == "low" and tf.labels == ("1 step",)
    assert "profile_batch=(10, 19)" in tf.reasons[0] and "jax.profiler" not in tf.reasons[0]
    jax = confidence(healthy(1), JAX)
    assert "jax.profiler.StepTraceAnnotation('train', step_num=step)" in jax.reasons[0]
    assert "profile_batch" not in jax.reasons[0]
    both = confidence(healthy(1), UNKNOWN)
    assert "TensorFlow: " in both.reasons[0] and " JAX: " in both.reasons[0]


def test_no_step_markers_is_medium():
    builder = TraceBuilder()
    python = builder.thread("python")
    kernels(builder.gpu(0), 1_000, 9_000, count=4, launch_thread=python)
    found = confidence(builder)
    assert found.level == "medium" and found.labels == ("no step markers",)
    assert "tf.profiler.experimental.Trace('train', step_num=step, _r=1)" in found.reasons[0]


def test_a_profile_shorter_than_two_steps_is_low():
    """No step marker and one input fetch (training loops fetch once per step): less than two steps captured."""
    builder = TraceBuilder()
    python = builder.thread("python")
    python.input_wait(0, 2_000)
    kernels(builder.gpu(0), 2_100, 5_000, count=4, launch_thread=python)
    found = confidence(builder)
    assert found.level == "low" and found.labels == ("profile shorter than two steps",)
    assert "only 1 call to the input iterator" in found.reasons[0]
    longer = TraceBuilder()
    python = longer.thread("python")
    for start in (0, 10_000, 20_000):
        python.input_wait(start, 2_000)
        kernels(longer.gpu(0), start + 2_100, 5_000, count=4, launch_thread=python)
    assert confidence(longer).labels == ("no step markers",)


def _two_gpus(idle=(), nccl=True, strategy=False, step_count=4):
    builder = TraceBuilder()
    python = builder.thread("python")
    if strategy:
        builder.thread("collective_ops").event("CollectiveReduceV2", 0, 10)
    for start in step_starts(python, step_count):
        for ordinal in (0, 1):
            gpu = builder.gpu(ordinal)
            if ordinal in idle:
                continue
            end = kernels(gpu, start + 100, 8_000, count=2, launch_thread=python)
            if nccl:
                gpu.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", end, 1_000)
    for ordinal in idle:
        builder.gpu(ordinal)
    return builder


def test_a_multi_gpu_job_with_a_gpu_that_did_nothing_is_low():
    builder = _two_gpus()
    builder.gpu(2)
    found = confidence(builder)
    assert found.level == "low"
    assert found.labels == ("1 of 3 GPUs without kernels",)
    assert "collective kernels such as ncclDevKernel_AllReduce_Sum_f32_RING_LL" in found.reasons[0]
    assert "tf.profiler.experimental.client.trace" in found.reasons[0]


def test_a_complete_multi_gpu_job_is_high():
    assert confidence(_two_gpus()).level == "high"


def test_a_strategy_without_collective_kernels_is_low():
    found = confidence(_two_gpus(nccl=False, strategy=True))
    assert found.level == "low" and found.labels == ("no collective kernels",)
    assert "collective_ops threads" in found.reasons[0]


def test_dropped_events_are_low():
    builder = healthy(10)
    builder.profiler_warning("CUPTI: 1234 activity records were dropped (buffer full)")
    found = confidence(builder)
    assert found.level == "low" and found.labels == ("dropped events",)
    assert "1234 activity records were dropped" in found.reasons[0]
    other = healthy(10)
    other.profiler_warning("Python tracer is disabled")
    assert confidence(other).level == "high"


def test_only_warmup_steps_is_medium():
    builder = TraceBuilder()
    python = builder.thread("python")
    gpu = builder.gpu(0)
    for start in step_starts(python, 3):
        python.event("backend_compile", start + 10, 500)
        kernels(gpu, start + 600, 9_000, launch_thread=python)
    found = confidence(builder)
    assert found.level == "medium" and found.labels == ("only warm-up steps",)
    first_steps = TraceBuilder()
    python = first_steps.thread("python")
    python.step(0, 1_000, 10_000)
    python.step(1, 11_000, 10_000)
    kernels(first_steps.gpu(0), 1_100, 19_000, count=2, launch_thread=python)
    assert confidence(first_steps).level == "high"  # step 1 is past the run's first step and does not compile


def test_real_v100_trace_is_low_with_its_reasons():
    model = load_model(real_trace("gpu_multi_worker_v100x8.xplane.pb"))
    found = trace_confidence(model, find_steps(model), detect_framework(model))
    assert found.level == "low"
    assert found.labels == ("1 step", "6 of 8 GPUs without kernels, no collective kernels")
    assert "GPU 0, GPU 1, GPU 2, GPU 3, GPU 5, GPU 7" in found.reasons[1]
    assert "collective_ops threads" in found.reasons[1]


def test_real_cpu_captures_are_high():
    for name in ("tf221_cpu_keras_input_bound.xplane.pb", "jax0102_cpu_steps.xplane.pb"):
        model = load_model(real_trace(name))
        assert trace_confidence(model, find_steps(model), detect_framework(model)).level == "high", name


def test_a_gpu_capture_without_host_events_says_how_to_record_them():
    from tb_gpu_advisor.analysis.confidence import trace_confidence
    from tb_gpu_advisor.analysis.framework import Framework
    from tb_gpu_advisor.analysis.steps import find_steps
    from tb_gpu_advisor.testing import TraceBuilder
    from tests.conftest import model_of

    builder = TraceBuilder()
    gpu = builder.gpu(0)
    for index in range(12):
        gpu.kernel("ampere_sgemm_128x64_tn", 1_000 + 1_000 * index, 500, grid=(108, 1, 1), block=(256, 1, 1))
    model = model_of(builder)
    assert len(model.host_activity.busy) == 0
    confidence = trace_confidence(model, find_steps(model), Framework("tensorflow", ()))
    reason = next(text for text in confidence.reasons if "no host events" in text)
    assert "host_tracer_level=2" in reason
