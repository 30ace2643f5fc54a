"""Exact numbers of the run with a float64 MatMul placed on the CPU, and its fix."""

from tests.scenarios.scenario_checks import breakdown, summary


def test_the_cpu_placed_matmul_is_named_with_its_copies(built):
    report = built("cpu_placed_op").report
    assert summary(report) == {
        "busy": 49.49,
        "input_wait": 0.19,
        "step_ms": 14.867,
        "steps": 5,
        "stdev": 0.0,
        "source": "host",
        "kernels": 575,
        "kernel_rows": 115,
    }
    assert breakdown(report)["host"] == 50.09
    top = report["findings"][0]
    assert (top["id"], top["severity"], top["estimated_speedup"]) == ("placement.ops_on_host", "high", 1.99)
    assert top["evidence"]["pointers"]["host_ops"] == [
        {
            "name": "text_classifier/feature_cross/MatMul:MatMul",
            "count": 5,
            "total_ms": 37.0,
            "runs_without_launch": 5,
            "copies_around": 10,
        }
    ]
    assert "5 device-to-host just before and 5 host-to-device just after" in top["fix"]
    assert "host.gpu_idle_host_busy" not in {f["id"] for f in report["findings"]}
    assert "transfer.d2h_sync_in_step" not in {f["id"] for f in report["findings"]}


def test_the_float32_cross_runs_on_the_gpu(built):
    report = built("cpu_placed_op_fixed").report
    assert summary(report)["busy"] == 98.59
    assert "placement.ops_on_host" not in {f["id"] for f in report["findings"]}
