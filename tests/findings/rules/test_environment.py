from tb_gpu_advisor.findings.rules.environment import cuda_version
from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.pipeline import host_report
from tb_gpu_advisor.testing import TraceBuilder
from tests.data import real_trace
from tests.findings.scenarios import findings_by_id, healthy, kernels, report_of, step_starts

BF16_KERNEL = "void cutlass::Kernel<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn_align8>(Params)"


def busy(compute_capability=(8, 0), name=None, **metadata):
    builder = TraceBuilder()
    python = builder.thread("python")
    gpu = builder.gpu(0, compute_capability=compute_capability)
    if metadata:
        builder.metadata(**metadata)
    for start in step_starts(python):
        kernels(gpu, start, 9_900, **({"name": name} if name else {}))
    return builder


def test_cuda_version_formats():
    assert cuda_version("12020") == (12, 2)
    assert cuda_version(11080) == (11, 8)
    assert cuda_version("12.4.131") == (12, 4)
    assert cuda_version("unknown") is None


def test_bf16_on_a_gpu_without_bf16_tensor_cores():
    finding = findings_by_id(report_of(busy((7, 0), BF16_KERNEL)))["environment.bf16_without_hardware"]
    assert finding["evidence"]["metrics"] == {"bf16_kernel_ms": 39.6, "compute_capability": "7.0"}
    assert finding["category"] == "precision"
    assert finding["estimated_speedup"] == 1.98
    assert "environment.bf16_without_hardware" not in findings_by_id(report_of(busy((8, 0), BF16_KERNEL)))


def test_cuda_older_than_the_gpu():
    finding = findings_by_id(report_of(busy((9, 0), cuda_runtime_version="11070")))["environment.cuda_older_than_gpu"]
    assert finding["severity"] == "medium" and finding["estimated_speedup"] == 1.0
    assert finding["evidence"]["threshold"]["value"] == "11.7"
    assert finding["evidence"]["threshold"]["level"] == "11.8"
    assert "environment.cuda_older_than_gpu" not in findings_by_id(report_of(busy((9, 0), cuda_version="12020")))


def test_driver_older_than_runtime():
    report = report_of(busy(cuda_runtime_version="12040", cuda_driver_version="12020"))
    finding = findings_by_id(report)["environment.driver_older_than_runtime"]
    assert finding["summary"] == "The driver supports CUDA 12.2, older than the CUDA 12.4 runtime in use."
    assert finding["evidence"]["metrics"] == {"cuda_driver_version": "12020", "cuda_runtime_version": "12040"}
    assert finding["estimated_speedup"] == 1.0
    assert report["summary"]["bottleneck"] == "none"  # a compatibility note is not a bottleneck


def test_environment_rules_are_quiet_on_the_healthy_trace():
    assert not [key for key in findings_by_id(report_of(healthy())) if key.startswith("environment.")]


def cpu_run(gpu_plane=False, jax=False, ops=("dense/MatMul:MatMul",), threads=(), **metadata):
    """4 steps of host work only: TensorFlow ops (or a jitted JAX step) on the CPU; optionally an idle GPU plane,
    extra thread kinds and /host:metadata stats."""
    builder = TraceBuilder()
    python = builder.thread("python")
    if gpu_plane:
        builder.gpu(0, model="NVIDIA A100-SXM4-80GB")
    if jax:
        builder.metadata(jax_version="0.4.30", jaxlib_version="0.4.30", **metadata)
    elif metadata:
        builder.metadata(**metadata)
    compute = builder.thread("tf_Compute/1")
    for start in step_starts(python):
        if jax:
            python.event("PjitFunction(train_step)", start + 10, 9_000)
        else:
            python.event("__inference_train_step_812", start + 10, 9_000)
            for op in ops:
                compute.event(op, start + 20, 8_000)
        for thread in threads:
            builder.thread(thread).event("op", start + 20, 100)
    return builder


def test_gpu_plane_without_work_names_the_gpu():
    finding = findings_by_id(report_of(cpu_run(gpu_plane=True)))["environment.gpu_not_used"]
    assert finding["severity"] == "high" and finding["estimated_speedup"] == 1.0
    assert finding["evidence"]["pointers"]["devices"] == ["/device:GPU:0 (NVIDIA A100-SXM4-80GB)"]
    assert finding["evidence"]["metrics"]["certainty"] == "high"
    assert "tf.config.list_physical_devices" in finding["fix"]


def test_cuda_libraries_in_a_jax_cpu_run_give_the_jax_checks_and_versions():
    finding = findings_by_id(report_of(cpu_run(jax=True, cuda_version="12030", cudnn_version="8907")))[
        "environment.gpu_not_used"
    ]
    assert finding["severity"] == "medium"
    assert finding["evidence"]["pointers"]["versions"] == {
        "cuda_version": "12030",
        "cudnn_version": "8907",
        "jax_version": "0.4.30",
        "jaxlib_version": "0.4.30",
    }
    assert "jax.devices()" in finding["fix"] and "tf.config" not in finding["fix"]


def test_a_strategy_is_no_gpu_signal_but_gpu_device_strings_are():
    # a tf.distribute strategy runs over CPU devices as well: no sign the job meant a GPU
    strategy = findings_by_id(
        report_of(
            cpu_run(
                threads=("tf_data_multi_device_iterator/3", "collective_ops/1"), ops=("replica_1/dense/MatMul:MatMul",)
            )
        )
    )
    assert "environment.gpu_not_used" not in strategy
    placed = findings_by_id(report_of(cpu_run(ops=("replica_1/device:GPU:1/dense/MatMul:MatMul",))))
    finding = placed["environment.gpu_not_used"]
    assert finding["evidence"]["pointers"]["host_ops"] == ["replica_1/device:GPU:1/dense/MatMul:MatMul"]
    assert finding["summary"] == (
        "No GPU ran any work in this profile, although the trace shows the job was set up "
        "for one: host events that ask for a GPU "
        "(replica_1/device:GPU:1/dense/MatMul:MatMul)."
    )


def test_rocm_libraries_in_the_metadata_are_a_gpu_signal():
    finding = findings_by_id(report_of(cpu_run(rocm_version="6.2.0")))["environment.gpu_not_used"]
    assert finding["summary"].endswith("set up for one: GPU libraries in the metadata (rocm_version 6.2.0).")


def test_real_cpu_mirrored_strategy_is_no_gpu_job():
    """MirroredStrategy over /cpu:0-2 on purpose: no GPU signal, the strategy and its rebatched batch shown."""
    report = host_report(load_model(str(real_trace("tf_mirrored/tf221_cpu_mirrored_3replicas.xplane.pb"))))
    assert not [f["id"] for f in report["findings"] if f["id"].startswith("environment.")]
    config = report["configuration"]
    assert config["distribution"] == "tf.distribute (3 replicas on /cpu devices)"
    assert config["global_batch"] == 48
    assert config["examples_per_step"]["source"] == (
        "tf.data batch stage BatchV2, batch size 48, 1 batch per step; rebatched across 3 replicas: 16 per replica"
    )


def test_quiet_on_a_plain_cpu_run_and_with_a_working_gpu():
    assert "environment.gpu_not_used" not in findings_by_id(report_of(cpu_run()))
    assert "environment.gpu_not_used" not in findings_by_id(report_of(cpu_run(jax=True)))
    assert "environment.gpu_not_used" not in findings_by_id(report_of(busy(cuda_version="12020")))


def test_jax_and_jaxlib_of_different_releases():
    finding = findings_by_id(report_of(busy(jax_version="0.4.31", jaxlib_version="0.4.26")))[
        "environment.versions_misaligned"
    ]
    assert finding["summary"] == "jax 0.4.31 runs with jaxlib 0.4.26: releases that were not tested together."
    assert finding["severity"] == "low" and finding["estimated_speedup"] == 1.0
    for same in (
        dict(jax_version="0.10.2", jaxlib_version="0.10.2"),
        dict(jax_version="0.4.30", jaxlib_version="0.4.30.dev20240701"),
        dict(jax_version="0.4.30"),
    ):
        assert "environment.versions_misaligned" not in findings_by_id(report_of(busy(**same))), same
