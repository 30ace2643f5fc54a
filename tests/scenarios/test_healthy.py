"""Exact numbers of the healthy H100 run."""

from tests.scenarios.scenario_checks import breakdown, summary


def test_healthy_run_is_busy_with_large_tensor_core_kernels(built):
    report = built("healthy").report
    assert summary(report) == {
        "busy": 99.84,
        "input_wait": 0.04,
        "step_ms": 65.1385,
        "steps": 5,
        "stdev": 0.0,
        "source": "host",
        "kernels": 1550,
        "kernel_rows": 310,
    }
    # The XLA fusions name no type and the scenario writes no HLO for them: of unknown precision, not 32-bit.
    assert breakdown(report) == {
        "compute_16bit": 82.88,
        "compute_unknown": 16.94,
        "h2d": 0.02,
        "input_wait": 0.04,
        "input_prep": 0.01,
        "copy_call": 0.01,
        "launch": 0.01,
        "host": 0.09,
        "idle": 0.01,
    }
    assert report["launch"]["tiny_kernel_count"] == 0
    tensor_core_us = sum(k["total_us"] for k in report["kernels"] if k["uses_tensor_cores"])
    assert round(100 * tensor_core_us / sum(k["total_us"] for k in report["kernels"]), 1) == 83.0
    device = report["devices"][0]
    assert (
        device["model_name"],
        device["compute_capability"],
        device["sm_count"],
        device["memory_bandwidth_gbps"],
    ) == ("NVIDIA H100 80GB HBM3", "9.0", 132, 3352.32)
    assert any(k["name"].startswith("cudnn_generated_fort_native_sdpa_sm90_flash_fprop") for k in report["kernels"])
