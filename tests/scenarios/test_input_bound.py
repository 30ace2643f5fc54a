"""Exact numbers of the input-bound ResNet-50 scenario and its fix."""

from tests.scenarios.scenario_checks import breakdown, host_op_names, summary, transfer

from tb_gpu_advisor.scenarios import input_bound


def test_input_bound_waits_160_ms_per_step_for_the_sequential_map(built):
    report = built("input_bound").report
    assert summary(report) == {
        "busy": 28.7,
        "input_wait": 71.28,
        "step_ms": 224.4695,
        "steps": 5,
        "stdev": 0.0,
        "source": "host",
        "kernels": 2995,
        "kernel_rows": 599,
    }
    assert breakdown(report) == {
        "compute_16bit": 27.94,
        "compute_32bit": 0.4,
        "h2d": 0.36,
        "input_wait": 71.28,
        "host": 0.01,
    }
    step = report["steps"][0]
    assert step["name"] == "train 100"
    # 64 elements x 2.5 ms in IteratorGetNextOp::DoCompute (+6 us), inside the 4 us longer executor op.
    assert (
        step["breakdown_ms"]["input_wait"]
        == round((input_bound.BATCH * input_bound.ELEMENT_US + 6 + 4) / 1e3, 6)
        == 160.01
    )
    assert step["breakdown_ms"]["compute_16bit"] == 62.711


def test_input_bound_copies_uint8_images_from_pinned_memory(built):
    report = built("input_bound").report
    # 64 x 224 x 224 x 3 bytes of images (805 us at 12 GB/s) and 64 int32 labels, per step.
    assert transfer(report, "h2d") == (10, 5 * (64 * 224 * 224 * 3 + 64 * 4), 4025.0, 0, 0)
    assert report["devices"][0]["model_name"] == "Tesla V100-SXM2-16GB"
    assert (
        report["devices"][0]["compute_capability"],
        report["devices"][0]["sm_count"],
        report["devices"][0]["memory_bandwidth_gbps"],
    ) == ("7.0", 80, 898.048)


def test_fixed_pipeline_keeps_the_gpu_busy(built):
    report = built("input_bound_fixed").report
    assert summary(report) == {
        "busy": 99.88,
        "input_wait": 0.04,
        "step_ms": 64.4875,
        "steps": 5,
        "stdev": 0.0,
        "source": "host",
        "kernels": 2995,
        "kernel_rows": 599,
    }
    assert report["steps"][0]["breakdown_ms"]["input_wait"] == 0.028
    # Same GPU work as the slow run: only the input pipeline changed.
    assert report["kernels"] == built("input_bound").report["kernels"]


def test_both_runs_use_tf_data_events_with_realistic_nesting(built):
    slow = host_op_names(built("input_bound").model)
    fast = host_op_names(built("input_bound_fixed").model)
    assert {
        "IteratorGetNextOp::DoCompute",
        "Iterator::Root::BatchV2::Shuffle::Map",
        "Iterator::Root::BatchV2::Shuffle::Map::TFRecord",
        "DecodeJpeg:DecodeJpeg",
        "EagerExecute",
        "FunctionRun",
        "ExecutorState::Process",
    } <= slow
    assert not any(name.startswith("Iterator::Root::Prefetch") for name in slow)
    assert {
        "IteratorGetNextOp::DoCompute",
        "Iterator::Root::Prefetch",
        "PrefetchProduce",
        "ParallelMapProduce",
        "Iterator::Root::Prefetch::BatchV2::Shuffle::ParallelMapV2",
    } <= fast
