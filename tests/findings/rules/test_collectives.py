"""collectives.comm_bound and collectives.per_parameter_allreduce on small generated traces (exact numbers)."""

from tb_gpu_advisor.readers.kineto.build import load_kineto_model
from tb_gpu_advisor.pipeline import host_report
from tb_gpu_advisor.testing import TraceBuilder
from tb_gpu_advisor.testing.kineto_trace import kernel, launch, trace_text, x_event
from tests.findings.scenarios import findings_by_id, kernels, report_of, step_starts

NCCL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
NCCL_CONFIG = dict(grid=(8, 1, 1), block=(640, 1, 1), registers=96, occupancy_pct=31.25)


def test_a_step_mostly_in_collectives_is_comm_bound_not_busy():
    """3 ms of compute then 6 ms of all-reduce per 10 ms step on 2 GPUs: 90% busy, yet 60% of the step is
    exposed communication; overlap hides 2 ms (2/3 of 3 ms of compute), the other 4 ms need less communication."""
    builder = TraceBuilder()
    python = builder.thread("python")
    for start in step_starts(python):
        for ordinal in range(2):
            gpu = builder.gpu(ordinal)
            end = kernels(gpu, start, 3_000)
            kernels(gpu, end, 6_000, name=NCCL, stream=20, **NCCL_CONFIG)
    report = report_of(builder)
    found = findings_by_id(report)
    bound = found["collectives.comm_bound"]
    metrics = bound["evidence"]["metrics"]
    assert (metrics["collectives_exposed_pct"], metrics["overlap_hides_ms"], metrics["beyond_overlap_ms"]) == (
        60.0,
        8.0,
        16.0,
    )  # over 4 steps
    # the bound: all 6 ms of exposed collectives gone (fewer bytes shorten the part overlap could hide too)
    assert (bound["severity"], bound["estimated_speedup"], bound["speedup_kind"]) == ("high", 2.5, "bound")
    assert found["communication.allreduce_exposed"]["estimated_speedup"] == 1.25  # the overlap model, unchanged
    summary = report["summary"]
    assert (summary["bottleneck"], summary["bottleneck_finding"]) == ("communication", "collectives.comm_bound")
    assert summary["verdict"].startswith(
        "Communication-bound: collectives with no compute beside them take 60% "
        "of each step, more than the compute left can hide (the GPU counts as "
        "busy 90% with them)."
    )


def test_each_gpus_own_compute_is_what_hides_its_collectives():
    """Two GPUs out of phase: one computes while the other communicates, so some GPU always computes (the
    breakdown's collectives are 0) yet each GPU spends half of every step in exposed collectives."""
    builder = TraceBuilder()
    python = builder.thread("python")
    for start in step_starts(python):
        first, second = builder.gpu(0), builder.gpu(1)
        kernels(first, kernels(first, start, 5_000), 5_000, name=NCCL, stream=20, **NCCL_CONFIG)
        kernels(second, kernels(second, start, 5_000, name=NCCL, stream=20, **NCCL_CONFIG), 5_000)
    report = report_of(builder)
    assert report["summary"]["breakdown_pct"]["collectives"] == 0.0
    metrics = findings_by_id(report)["communication.allreduce_exposed"]["evidence"]["metrics"]
    assert (metrics["collectives_exposed_pct"], metrics["nccl_overlap_with_compute_pct"]) == (50.0, 0.0)


def test_many_small_all_reduces_per_step_are_per_parameter_all_reduce():
    """6 ms of compute then 64 all-reduces of 40 µs per 10 ms step: packed into one call, 63 latencies of 40 µs
    (the fastest tenth) go: 2.52 ms per step (sizes not in the trace: a bound)."""
    builder = TraceBuilder()
    python = builder.thread("python")
    for start in step_starts(python):
        for ordinal in range(2):
            gpu = builder.gpu(ordinal)
            end = kernels(gpu, start, 6_000)
            kernels(gpu, end, 64 * 40, count=64, name=NCCL, stream=20, **NCCL_CONFIG)
    finding = findings_by_id(report_of(builder))["collectives.per_parameter_allreduce"]
    metrics = finding["evidence"]["metrics"]
    assert (metrics["allreduce_calls_per_step"], metrics["latency_per_call_ms"], metrics["buckets_per_step"]) == (
        64.0,
        0.04,
        1,
    )
    assert metrics["named_from"] == ["kernel_name"]
    assert (finding["recoverable_ms"], finding["speedup_kind"], finding["severity"]) == (10.08, "bound", "high")
    assert "bytes_per_pack" in finding["fix"]  # framework unknown: TensorFlow's and JAX's idioms
    assert "pmean(grads" in finding["fix"]


def test_a_few_large_all_reduces_are_not_per_parameter():
    builder = TraceBuilder()
    python = builder.thread("python")
    for start in step_starts(python):
        for ordinal in range(2):
            gpu = builder.gpu(ordinal)
            end = kernels(gpu, start, 6_000)
            kernels(gpu, end, 2_560, count=3, name=NCCL, stream=20, **NCCL_CONFIG)
    assert "collectives.per_parameter_allreduce" not in findings_by_id(report_of(builder))


def test_pytorch_all_reduces_sized_by_their_host_ops_give_the_ddp_fix(tmp_path):
    """A PyTorch rank: per 10 ms step 6 ms of compute, then 40 `nccl:all_reduce` calls of 1000 floats (4 KB),
    50 µs each, launched as `ncclKernel_SendRecv` (the name does not say all-reduce; the host op does)."""
    events, corr = [], 1
    for step in range(4):
        t0 = 1000 + step * 10_000
        events.append(x_event("user_annotation", f"ProfilerStep#{step}", t0, 10_000))
        events += [launch(t0 + 1, 2, corr), kernel("ampere_sgemm_128x64_tn", t0 + 10, 6_000, corr)]
        corr += 1
        for call in range(40):
            t = t0 + 6_100 + call * 80
            events += [
                x_event("cpu_op", "c10d::allreduce_", t, 30),
                x_event(
                    "cpu_op",
                    "record_param_comms",
                    t + 1,
                    28,
                    **{
                        "Collective name": "allreduce",
                        "In msg nelems": 1000,
                        "Out msg nelems": 1000,
                        "dtype": "Float",
                        "Group size": 4,
                    },
                ),
                x_event("user_annotation", "nccl:all_reduce", t + 2, 20),
                launch(t + 5, 3, corr),
                kernel("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)", t + 10, 50, corr, stream=20),
            ]
            corr += 1
    path = tmp_path / "rank0.1.pt.trace.json"
    path.write_text(
        trace_text(events, schemaVersion=1, distributedInfo={"backend": "nccl", "rank": 0, "world_size": 4})
    )
    report = host_report(load_kineto_model(path))
    finding = findings_by_id(report)["collectives.per_parameter_allreduce"]
    metrics = finding["evidence"]["metrics"]
    assert (metrics["allreduce_calls_per_step"], metrics["median_bytes"], metrics["bytes_per_step"]) == (
        40.0,
        4000,
        160_000,
    )
    assert (metrics["dtypes"], metrics["group_sizes"], metrics["issued_by"]) == (["f32"], [4], ["nccl:all_reduce"])
    # 39 of 40 latencies of 50 µs per step saved, 4 steps
    assert (finding["recoverable_ms"], finding["speedup_kind"]) == (7.8, "model")
    assert "bucket_cap_mb" in finding["fix"] and "no_sync" in finding["fix"]
    row = next(r for r in report["collectives"] if r["source"] == "kernel")
    assert (row["collective"], row["calls_per_step"], row["named_from"]) == ("allreduce", 40.0, ["host_op"])
