"""environment.idle_gpus: GPUs in the profile without a kernel while the job trains on others, named only where the
trace says the job meant several GPUs and nothing says the capture missed them or other processes own them."""

from tb_gpu_advisor.testing import TraceBuilder
from tb_gpu_advisor.testing.hlo import HloModuleBuilder, replica_groups, shape
from tests.data import real_trace
from tests.findings.scenarios import findings_by_id, kernels, report_of, step_starts
from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.pipeline import host_report

ALLREDUCE = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
ID = "environment.idle_gpus"


def tf_mirrored(
    working=(0, 1),
    gpus=8,
    steps=4,
    threads=("tf_data_multi_device_iterator_get_next", "collective_ops"),
    replica_ops=("replica_1/dense/MatMul:MatMul",),
):
    """A TensorFlow MirroredStrategy-style job: `gpus` GPU planes, `working` compute 8 ms and all-reduce 1 ms in
    each of `steps` 10 ms steps; the host runs the strategy's threads and its replicas' ops."""
    builder = TraceBuilder()
    python = builder.thread("python")
    for name in threads:
        builder.thread(name).event("MultiDeviceIteratorGetNextFromShard", 100, 50)
    for name in replica_ops:
        python.event(name, 150, 20)
    planes = {ordinal: builder.gpu(ordinal) for ordinal in range(gpus)}
    for start in step_starts(python, steps):
        for ordinal in working:
            kernels(planes[ordinal], start + 100, 8_000)
            planes[ordinal].kernel(ALLREDUCE, start + 8_200, 1_000, stream=20)
    return builder


def jax_sharded(group, working=(0, 1), gpus=8, steps=4):
    """A JAX job on `working` GPUs of `gpus`, its gradient all-reduce over replica groups of `group` devices."""
    module = HloModuleBuilder("jit_train_step", 3)
    grads = module.entry.parameter("grads", shape("f32", 2**20))
    module.entry.add(
        "all-reduce.1", "all-reduce", shape("f32", 2**20), (grads,), replica_groups=replica_groups(tuple(range(group)))
    )
    builder = TraceBuilder()
    builder.metadata(jax_version="0.4.35", jaxlib_version="0.4.35")
    builder.hlo_module(3, "jit_train_step", module.to_bytes())
    python = builder.thread("python")
    planes = {ordinal: builder.gpu(ordinal) for ordinal in range(gpus)}
    for start in step_starts(python, steps):
        for ordinal in working:
            planes[ordinal].kernel("loop_multiply_fusion", start + 100, 8_000, hlo_op="multiply_fusion", program_id=3)
            planes[ordinal].kernel(ALLREDUCE, start + 8_200, 1_000, stream=20, hlo_op="all-reduce.1", program_id=3)
    return builder


def test_tensorflow_job_on_two_of_eight_gpus():
    report = report_of(tf_mirrored())
    finding = findings_by_id(report)[ID]
    assert finding["severity"] == "high"
    assert finding["summary"].startswith(
        "GPU 2, GPU 3, GPU 4, GPU 5, GPU 6 and GPU 7 (6 of 8 GPUs, "
        "NVIDIA A100-SXM4-80GB) ran no kernel in any of the 4 captured steps "
        "while GPU 0 and GPU 1 computed"
    )
    metrics = finding["evidence"]["metrics"]
    assert (
        metrics["gpus_in_profile"],
        metrics["working_gpus"],
        metrics["idle_gpus"],
        metrics["certainty"],
        metrics["replicas"],
    ) == (8, 2, 6, "high", 2)
    assert [row["steps_with_kernels"] for row in metrics["working"]] == [4, 4]
    assert finding["evidence"]["pointers"]["devices"][0] == "GPU 2 (NVIDIA A100-SXM4-80GB)"
    # 8 ms of compute per step on the busiest GPU, split over 8 GPUs instead of 2: 6 ms saved of each 10 ms step
    assert finding["estimated_speedup"] == 2.5 and finding["speedup_kind"] == "bound"
    assert "MirroredStrategy()" in finding["fix"] and "list_logical_devices" in finding["fix"]
    # the idle GPUs are the job's choice, not a gap in the capture: confidence is not lowered for them
    assert report["summary"]["confidence"]["level"] == "high"
    assert any("environment.idle_gpus" in note for note in report["notes"])
    assert report["summary"]["verdict"].endswith(
        "Besides, 6 of the 8 GPUs this process sees ran no kernel: the job uses fewer GPUs than it has."
    )


def test_jax_job_whose_collectives_span_the_working_gpus():
    finding = findings_by_id(report_of(jax_sharded(group=2)))[ID]
    assert finding["evidence"]["metrics"]["certainty"] == "high"
    assert "collectives over 2 devices" in finding["fix"]
    assert "jax.make_mesh" in finding["fix"]


def test_quiet_where_the_trace_doubts_the_claim():
    # collectives over 8 devices, 2 here: the other 6 GPUs run in other processes
    assert ID not in findings_by_id(report_of(jax_sharded(group=8)))
    # TensorFlow names 6 replicas but only 2 GPUs ran kernels: the capture missed the others' work
    missed = report_of(tf_mirrored(replica_ops=("replica_5/dense/MatMul:MatMul",)))
    assert ID not in findings_by_id(missed)
    assert "the host ran ops of at least 6 replicas" in " ".join(missed["summary"]["confidence"]["reasons"])
    # devices of a cluster (MultiWorkerMirroredStrategy): other worker processes may own the idle GPUs
    assert ID not in findings_by_id(
        report_of(
            tf_mirrored(
                replica_ops=(
                    "replica_1/dense/MatMul:MatMul",
                    "RemoteCall: Instantiate: __inference_fn_1 on /job:worker/replica:0/task:1/device:CPU:0",
                )
            )
        )
    )
    # one GPU at work beside a strategy: a process per GPU is as likely as a job that uses one
    single = report_of(tf_mirrored(working=(0,), replica_ops=()))
    assert ID not in findings_by_id(single)
    assert "one GPU at work" in " ".join(single["summary"]["confidence"]["reasons"])
    # one step: too short to tell
    assert ID not in findings_by_id(report_of(tf_mirrored(steps=1)))


def test_quiet_for_a_single_gpu_job_and_when_every_gpu_works():
    # no strategy, one GPU: a single-GPU job on a multi-GPU machine, only a confidence note
    assert ID not in findings_by_id(report_of(tf_mirrored(working=(0,), threads=(), replica_ops=())))
    assert ID not in findings_by_id(
        report_of(tf_mirrored(working=tuple(range(8)), replica_ops=("replica_7/dense/MatMul:MatMul",)))
    )


def test_real_multi_worker_v100_trace_gets_no_claim():
    """One step, 2 of 8 GPUs with kernels, ops of at least 7 replicas on the host: the capture missed GPU work;
    the confidence says so and no finding claims the job leaves GPUs unused."""
    report = host_report(load_model(str(real_trace("gpu_multi_worker_v100x8.xplane.pb"))))
    assert ID not in findings_by_id(report)
    reasons = " ".join(report["summary"]["confidence"]["reasons"])
    assert "6 of 8 GPUs ran no kernel" in reasons and "the host ran ops of at least 7 replicas" in reasons
