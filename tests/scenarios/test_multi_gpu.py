"""Exact numbers of the 4-GPU NCCL-bound scenario with a straggler, and its fix."""

from tests.scenarios.scenario_checks import breakdown, summary

from tb_gpu_advisor.scenarios import multi_gpu


def test_all_reduce_dominates_and_gpu2_straggles(built):
    report = built("multi_gpu_straggler").report
    assert summary(report) == {
        "busy": 98.89,
        "input_wait": 0.02,
        "step_ms": 98.649,
        "steps": 3,
        "stdev": 0.0,
        "source": "host",
        "kernels": 1392,
        "kernel_rows": 116,
    }
    assert breakdown(report) == {
        "compute_16bit": 40.57,
        "compute_32bit": 4.6,
        "collectives": 54.73,
        "h2d": 0.01,
        "input_wait": 0.02,
        "host": 0.04,
    }
    nccl = {d["name"]: d["nccl_time_us"] for d in report["devices"]}
    compute = {d["name"]: round(d["kernel_time_us"] - d["nccl_time_us"], 1) for d in report["devices"]}
    # GPU:2 computes 1.5x longer and so waits least inside the all-reduce.
    assert nccl == {
        "/device:GPU:0": 202519.5,
        "/device:GPU:1": 202515.0,
        "/device:GPU:2": 161986.5,
        "/device:GPU:3": 202506.0,
    }
    assert compute == {
        "/device:GPU:0": 89137.5,
        "/device:GPU:1": 89137.5,
        "/device:GPU:2": 133695.0,
        "/device:GPU:3": 89137.5,
    }
    assert report["balance"]["nccl_share_pct"] == 65.74
    assert report["balance"]["most_busy_device"] == "/device:GPU:2"
    top = report["kernels"][0]
    assert top["name"] == "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
    assert (top["occurrences"], top["grid"], top["block"]) == (12, [16, 1, 1], [640, 1, 1])
    # One ring all-reduce of every gradient: 117M float32 parameters at 8.7 GB/s; no GPU computes meanwhile.
    params = multi_gpu.LAYERS * 12 * multi_gpu.HIDDEN**2 + multi_gpu.VOCAB * multi_gpu.HIDDEN
    assert params == 117_440_512
    assert round(params * 4 / (multi_gpu.RING_GBPS * 1e3), 1) == 53995.6
    assert report["steps"][0]["breakdown_ms"]["collectives"] == 53.9955


def test_fix_balances_and_overlaps_the_all_reduce(built):
    report = built("multi_gpu_straggler_fixed").report
    assert summary(report) == {
        "busy": 99.88,
        "input_wait": 0.03,
        "step_ms": 70.742,
        "steps": 3,
        "stdev": 0.0,
        "source": "host",
        "kernels": 2592,
        "kernel_rows": 116,
    }
    assert report["summary"]["breakdown_pct"]["collectives"] == 19.67
    assert report["balance"]["busy_pct_spread"] == 0.01
    nccl = [k for k in report["kernels"] if k["name"].startswith("nccl")]
    assert [(k["name"], k["occurrences"]) for k in nccl] == [
        ("ncclDevKernel_AllReduce_Sum_f16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 96)
    ]
    assert len({d["model_name"] for d in report["devices"]}) == 1 and len(report["devices"]) == 4


def test_peers_wait_for_the_straggler_inside_the_all_reduce_not_communicate(built):
    """GPU:0, 1 and 3 enter each all-reduce before GPU:2: their NCCL time up to its arrival is a wait, said as
    one, and the compute that could hide the all-reduce is theirs, not the straggler's excess (which the
    straggler finding removes: counting it as overlap room too would count it twice)."""
    report = built("multi_gpu_straggler").report
    findings = {f["id"]: f for f in report["findings"]}
    comm = findings["collectives.comm_bound"]
    waits = comm["evidence"]["metrics"]["collective_wait_ms_by_gpu"]
    assert waits["/device:GPU:2"] == 0.0
    assert {name: round(value / 3, 1) for name, value in waits.items() if name != "/device:GPU:2"} == {
        "/device:GPU:0": 13.5,
        "/device:GPU:1": 13.5,
        "/device:GPU:3": 13.5,
    }
    assert "waiting for /device:GPU:2 to arrive" in comm["summary"]
    assert "that time is spent communicating" not in comm["summary"]
    assert "inside the collectives waiting for it" in findings["communication.gpu_imbalance"]["summary"]
    # Overlap room: 2/3 of the others' compute (89.14 ms over 3 steps), not of the straggler's 133.70 ms.
    assert comm["evidence"]["metrics"]["compute_ms_busiest_gpu"] == 89.138
