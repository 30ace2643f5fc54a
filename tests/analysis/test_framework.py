"""Framework detection on generated traces and on the real TensorFlow and JAX captures."""

import pytest

from tb_gpu_advisor.analysis.framework import detect_framework
from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.testing import TraceBuilder
from tests.conftest import model_of
from tests.data import real_trace
from tests.findings.scenarios import healthy, kernels


def _tf_step(builder):
    python = builder.thread("python")
    python.step(0, 0, 1000)
    python.event("EagerLocalExecute: __inference_train_step_512", 10, 900)
    builder.thread("tf_Compute").event("dense/MatMul:MatMul", 20, 100)
    return builder


def test_tensorflow_from_its_runtime_events_and_threads():
    found = detect_framework(model_of(_tf_step(TraceBuilder())))
    assert found.name == "tensorflow"
    assert any("__inference_train_step_512" in line for line in found.evidence)
    assert any("tf_Compute" in line for line in found.evidence)
    assert not found.tf_data and not found.keras


def test_jax_from_metadata_and_dispatch_even_with_tf_data_input():
    builder = TraceBuilder()
    builder.metadata(jax_version="0.4.30", jaxlib_version="0.4.30")
    python = builder.thread("python")
    python.step(0, 0, 1000)
    python.input_wait(0, 100)
    python.event("Iterator::Root::Prefetch::ParallelMapV2", 0, 100)
    python.event("PjitFunction(train_step)", 150, 800)
    found = detect_framework(model_of(builder))
    assert found.name == "jax"
    assert found.tf_data  # JAX fed by tf.data: still JAX, and the input advice may be tf.data's
    assert found.evidence[0] == "/host:metadata records jax_version 0.4.30"


def test_jax_without_metadata_from_compiled_modules():
    builder = TraceBuilder()
    builder.thread("python").event("jit_train_step:XLA GPU module", 0, 100)
    assert detect_framework(model_of(builder)).name == "jax"


def test_keras_markers_alone_say_keras_on_tensorflow():
    builder = TraceBuilder()
    builder.thread("python").event("Profiled batch", 0, 100, step_num=3)
    found = detect_framework(model_of(builder))
    assert (found.name, found.keras) == ("tensorflow", True)


def test_pytorch_from_aten_ops():
    builder = TraceBuilder()
    builder.thread("python").event("aten::mm", 0, 100)
    builder.thread("python").event("ProfilerStep#4", 0, 200)
    assert detect_framework(model_of(builder)).name == "pytorch"


def test_no_framework_events_is_unknown():
    builder = TraceBuilder()
    python = builder.thread("python")
    python.step(0, 0, 1000)
    kernels(builder.gpu(0), 100, 800, launch_thread=python, launch_ahead_us=50)
    found = detect_framework(model_of(builder))
    assert found.name == "unknown"
    assert found.evidence == ("no framework-specific events, threads or metadata in the trace",)


def test_tf_data_alone_says_tensorflow():
    """tf.data's iterators with no other framework: the program is TensorFlow's (PyTorch does not use tf.data)."""
    found = detect_framework(model_of(healthy()))
    assert (found.name, found.tf_data) == ("tensorflow", True)


def test_tsl_thread_names_of_jax_are_not_tensorflow():
    """JAX's runtime threads are named tf_* too (tf_XLAEigen, tf_pjrt_thread_pool): not TensorFlow evidence."""
    builder = TraceBuilder()
    builder.thread("tf_XLAEigen").event("ThunkExecutor::Execute", 0, 10)
    builder.thread("tf_pjrt_thread_pool").event("PjitFunction(f)", 0, 10)
    assert detect_framework(model_of(builder)).name == "jax"


@pytest.mark.parametrize(
    "name, framework, keras, tf_data",
    [
        ("gpu_multi_worker_v100x8.xplane.pb", "tensorflow", False, True),
        ("tf221_cpu_keras_input_bound.xplane.pb", "tensorflow", True, True),
        ("tf221_cpu_keras_input_fixed.xplane.pb", "tensorflow", True, True),
        ("jax0102_cpu_steps.xplane.pb", "jax", False, False),
        ("amd_mi300x_jax08_gemm.xplane.pb", "jax", False, False),
    ],
)
def test_real_traces(name, framework, keras, tf_data):
    found = detect_framework(load_model(real_trace(name)))
    assert (found.name, found.keras, found.tf_data) == (framework, keras, tf_data)
