"""analysis.unused_gpus on real captures: how TensorFlow names a one-process strategy's replicas, and the 8xV100
multi-worker trace whose idle GPUs the capture missed."""

from tb_gpu_advisor.analysis.framework import detect_framework
from tb_gpu_advisor.analysis.steps import find_steps
from tb_gpu_advisor.analysis.unused_gpus import CLUSTER_DEVICE, replica_count, unused_gpus
from tb_gpu_advisor.readers.load import load_model
from tests.data import real_trace


def test_real_mirrored_strategy_names_its_replicas():
    """TF 2.21 MirroredStrategy over 3 logical CPUs: ops of replica_1 and replica_2 (3 replicas), collective_ops
    threads in a one-process job, and no cluster device names."""
    model = load_model(str(real_trace("tf_mirrored/tf221_cpu_mirrored_3replicas.xplane.pb")))
    assert replica_count(model) == 3
    assert "collective_ops" in model.host_activity.thread_busy
    assert not any(CLUSTER_DEVICE.search(name) for name in model.host_activity.op_totals)
    assert unused_gpus(model, find_steps(model), detect_framework(model)) is None  # no GPU plane


def test_real_v100_multi_worker_trace_is_low():
    model = load_model(str(real_trace("gpu_multi_worker_v100x8.xplane.pb")))
    found = unused_gpus(model, find_steps(model), detect_framework(model))
    assert [work.ordinal for work in found.idle] == [0, 1, 2, 3, 5, 7]
    assert [work.ordinal for work in found.working] == [4, 6]
    assert found.idle[1].copies == 19  # GPU 1 ran copies, no kernel
    assert (found.certainty, found.replicas, found.complete_steps, found.missed_by_capture) == ("low", 7, 1, True)
    assert not found.claim
    doubts = " ".join(found.doubts)
    assert "at least 7 replicas" in doubts and "/job:worker/" in doubts and "only 1 complete step" in doubts


def test_replica_names_need_their_own_word():
    from types import SimpleNamespace

    names = {
        "replica_2/dense/MatMul:MatMul": 0,
        "gradient_tape/replica_1/Cast:Cast": 0,
        "_send_replica_3/x:_Send": 0,
        "myreplica_9/x:Mul": 0,
        "replica_x/y": 0,
    }
    assert replica_count(SimpleNamespace(host_activity=SimpleNamespace(op_totals=names))) == 4
    assert replica_count(SimpleNamespace(host_activity=SimpleNamespace(op_totals={"dense/MatMul": 0}))) is None
