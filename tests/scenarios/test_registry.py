"""The scenario registry: every problem of the issue with its fix, documented, in the findings vocabulary."""

import hashlib
import subprocess
import sys

from tb_gpu_advisor.findings.finding import CATEGORIES as FINDING_CATEGORIES
from tb_gpu_advisor.findings.verdict import BOTTLENECKS
from tb_gpu_advisor.scenarios import SCENARIOS, Scenario, fixed_pairs


def test_every_problem_has_its_fix():
    assert [(problem.name, fix.name) for problem, fix in fixed_pairs()] == [
        ("input_bound", "input_bound_fixed"),
        ("launch_bound", "launch_bound_fixed"),
        ("transfer_bound", "transfer_bound_fixed"),
        ("low_occupancy", "low_occupancy_fixed"),
        ("fp32_on_tensor_cores", "fp32_on_tensor_cores_fixed"),
        ("multi_gpu_straggler", "multi_gpu_straggler_fixed"),
        ("host_bound", "host_bound_fixed"),
        ("jax_inline_loader", "jax_inline_loader_fixed"),
        ("jax_float32_images", "jax_float32_images_fixed"),
        ("cpu_placed_op", "cpu_placed_op_fixed"),
    ]
    assert "healthy" in SCENARIOS and len(SCENARIOS) == 22


def test_expectations_use_the_findings_vocabulary():
    for scenario in SCENARIOS.values():
        assert isinstance(scenario, Scenario)
        assert scenario.expected_bottleneck in BOTTLENECKS, scenario.name
        assert scenario.expected_top_finding is None or scenario.expected_top_finding in FINDING_CATEGORIES
        if scenario.fixed_variant_of is None and scenario.name not in ("healthy", "jax_decoder_roofline"):
            assert scenario.expected_top_finding is not None and scenario.advice, scenario.name
    assert [s.name for s in SCENARIOS.values() if s.expected_bottleneck == "none"] == [
        "input_bound_fixed",
        "launch_bound_fixed",
        "transfer_bound_fixed",
        "low_occupancy_fixed",
        "fp32_on_tensor_cores_fixed",
        "host_bound_fixed",
        "healthy",
        "jax_inline_loader_fixed",
        "jax_float32_images_fixed",
        "cpu_placed_op_fixed",
        "jax_decoder_roofline",
    ]


def test_every_build_says_what_it_shows_and_what_to_do():
    for scenario in SCENARIOS.values():
        assert len(scenario.description) > 150, scenario.name
        if scenario.fixed_variant_of is None:
            assert "Advice:" in scenario.description, scenario.name


def test_traces_are_byte_identical_across_processes(built):
    code = (
        "import hashlib; from tb_gpu_advisor.scenarios import SCENARIOS; "
        "print(hashlib.sha256(b''.join(s.build().to_bytes() for s in SCENARIOS.values())).hexdigest())"
    )
    other = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env={"PYTHONHASHSEED": "12345"}
    ).stdout.strip()
    here = hashlib.sha256(b"".join(built(name).builder.to_bytes() for name in SCENARIOS)).hexdigest()
    assert other == here


def test_traces_look_like_current_tensorflow_gpu_captures(built):
    for name in SCENARIOS:
        scenario = built(name)
        report = scenario.report
        assert report["trace_format"] == "current" and report["notes"] == [], name
        assert report["environment"]["cuda_version"] == "12050"
        # Every kernel and copy was launched from a host thread, paired by correlation id.
        assert report["launch"]["unpaired_count"] == 0, name
        assert all(device["vendor"] == "NVIDIA" for device in report["devices"]), name
        assert all(kernel["occupancy_pct"] is not None for kernel in report["kernels"]), name
        names = set(scenario.model.host_activity.op_totals)
        if name.startswith("jax_"):  # jax.profiler.trace with the Python tracer: JAX's dispatch, no TensorFlow
            assert report["summary"]["framework"] == "jax", name
            assert {"PjitFunction(train_step)", "$api.py:2430 device_put"} <= names, name
            assert not any(n.startswith(("EagerExecute", "Iterator")) for n in names), name
            continue
        assert {
            "EagerExecute",
            "KernelAndDeviceFunc::Run",
            "FunctionRun",
            "ExecutorState::Process",
            "TFE_TensorHandleResolve",
        } <= names, name
        # Input comes from tf.data everywhere but in transfer_bound, which feeds NumPy arrays.
        assert ("IteratorGetNextOp::DoCompute" in names) == (name != "transfer_bound"), name
