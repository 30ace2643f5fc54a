"""Exact numbers of the transfer-bound U-Net scenario and its prefetch-to-device fix."""

from tests.scenarios.scenario_checks import breakdown, summary, transfer

from tb_gpu_advisor.scenarios import transfer_bound


def test_transfer_bound_copies_pageable_synchronously_every_step(built):
    report = built("transfer_bound").report
    assert summary(report) == {
        "busy": 99.6,
        "input_wait": 0.0,
        "step_ms": 18.3075,
        "steps": 5,
        "stdev": 0.0,
        "source": "host",
        "kernels": 750,
        "kernel_rows": 150,
    }
    assert breakdown(report) == {
        "compute_16bit": 58.15,
        "compute_32bit": 0.71,
        "d2h": 0.01,
        "h2d": 40.73,
        "input_prep": 0.02,
        "copy_call": 0.04,
        "launch": 0.03,
        "host_wait": 0.02,
        "host": 0.23,
        "idle": 0.04,
    }
    # The synchronous pageable copy calls return only after their copies end: host waits, not launches.
    per_step = transfer_bound.IMAGES + transfer_bound.MASKS
    assert per_step == 67_108_864
    # 5 steps x (images, masks), all pageable and synchronous, at 9 GB/s.
    assert transfer(report, "h2d") == (10, 5 * per_step, 37282.5, 10, 10)
    assert report["transfers"]["h2d"]["gbps"] == 9.0
    assert report["steps"][0]["breakdown_ms"]["h2d"] == 7.4565


def test_fix_copies_the_same_bytes_pinned_and_overlapped(built):
    report = built("transfer_bound_fixed").report
    assert summary(report) == {
        "busy": 99.28,
        "input_wait": 0.26,
        "step_ms": 10.8565,
        "steps": 5,
        "stdev": 0.0,
        "source": "host",
        "kernels": 750,
        "kernel_rows": 150,
    }
    assert transfer(report, "h2d") == (10, 5 * 67_108_864, 13980.0, 0, 0)
    assert report["transfers"]["h2d"]["gbps"] == 24.002
    # The copies overlap compute: none of the step is exposed host-to-device time.
    assert report["summary"]["breakdown_pct"]["h2d"] == 0.0
    assert report["devices"][0]["model_name"] == "NVIDIA A100-PCIE-40GB"


def test_pageable_bound_is_at_least_the_exposed_copy_ceiling(built):
    """The fix overlaps every copy with compute, so "up to" must reach all exposed copy time removed (the
    fixed twin gets 18.31 / 10.86 = 1.69x); the assumed-link-rate model stays in the basis, labelled a model."""
    report = built("transfer_bound").report
    finding = next(f for f in report["findings"] if f["id"] == "transfer.pageable_memory")
    exposed_pct = finding["evidence"]["metrics"]["exposed_pct"]
    assert exposed_pct == 40.73
    ceiling = 1 / (1 - exposed_pct / 100)
    assert finding["speedup_kind"] == "bound"
    assert finding["estimated_speedup"] >= round(ceiling, 2) == 1.69
    assert "if the link runs at the assumed 24 GB/s" in finding["speedup_basis"]
    combined = report["summary"]["combined_estimate"]
    assert combined["estimated_speedup"] >= round(ceiling, 2)
