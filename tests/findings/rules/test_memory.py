"""GPU memory from TensorFlow's memory profile events: peak and headroom per GPU, memory.near_limit, batch advice."""

from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.pipeline import host_report
from tests.conftest import model_of, report_of
from tests.data import real_trace
from tests.findings.scenarios import findings_by_id, kernels, step_starts
from tb_gpu_advisor.testing import TraceBuilder

GB = 10**9
LIMIT = 40 * GB


def small_kernels(peak_bytes):
    """A GPU busy 20% of each step with 5 us kernels (batch.gpu_underused), and the allocator's events."""
    builder = TraceBuilder()
    python = builder.thread("python")
    gpu = builder.gpu(0)
    compute = builder.thread("tf_Compute/1")
    for start in step_starts(python, 4):
        kernels(
            gpu,
            start + 100,
            2_000,
            name="void my_kernel<float>(float*, int)",
            count=400,
            gap_us=0.0,
            launch_thread=python,
            launch_ahead_us=50,
            grid=(4, 1, 1),
            block=(128, 1, 1),
        )
        for used in (peak_bytes // 2, peak_bytes):
            compute.event(
                "MemoryAllocation",
                start + 50,
                0,
                allocator_name="GPU_0_bfc",
                peak_bytes_in_use=used,
                bytes_allocated=used,
                bytes_available=LIMIT - used,
                requested_bytes=256,
            )
        compute.event(
            "MemoryAllocation",
            start + 60,
            0,
            allocator_name="gpu_host_bfc",
            peak_bytes_in_use=2**27,
            bytes_allocated=2**20,
            bytes_available=2**36,
        )
    return builder


def test_peak_and_headroom_per_gpu_and_the_batch_advice():
    report = report_of(small_kernels(12 * GB))
    assert report["gpu_memory"] == [
        {
            "device": 0,
            "allocator": "GPU_0_bfc",
            "peak_bytes_in_use": 12 * GB,
            "limit_bytes": LIMIT,
            "capacity_bytes": 80 * 2**30,
            "headroom_bytes": 28 * GB,
            "peak_pct_of_limit": 30.0,
            "doubled_batch_fits": True,
        }
    ]
    found = findings_by_id(report)
    assert "memory.near_limit" not in found
    batch = found["batch.gpu_underused"]
    assert "GPU 0 peaks at 11.18 GiB of its 37.25 GiB limit: a 2× batch fits" in batch["fix"]
    assert batch["evidence"]["metrics"]["doubled_batch_fits"] is True


def test_a_batch_that_may_not_fit_and_a_full_gpu():
    maybe = findings_by_id(report_of(small_kernels(30 * GB)))["batch.gpu_underused"]
    assert "fits only if activations take less than the 9.31 GiB left" in maybe["fix"]
    assert maybe["evidence"]["metrics"]["doubled_batch_fits"] is None
    full = findings_by_id(report_of(small_kernels(38 * GB)))
    finding = full["memory.near_limit"]
    assert finding["evidence"]["metrics"]["peak_pct_of_limit"] == 95.0 and finding["severity"] == "low"
    assert finding["estimated_speedup"] == 1.0 and "TF_GPU_ALLOCATOR=cuda_malloc_async" in finding["fix"]
    assert full["batch.gpu_underused"]["severity"] == "low" and "no headroom" in full["batch.gpu_underused"]["fix"]


def test_fast_and_reference_readers_agree_on_the_allocators():
    builder = small_kernels(12 * GB)
    assert model_of(builder).allocators == load_model_reference(builder).allocators


def load_model_reference(builder):
    from tb_gpu_advisor.readers.xplane.build import build_model
    from tb_gpu_advisor.readers.xplane.reader import parse_space

    return build_model(parse_space(builder.to_bytes(), "generated.xplane.pb"), reference=True)


def test_the_real_v100_trace_has_headroom():
    report = host_report(load_model(real_trace("gpu_multi_worker_v100x8.xplane.pb")))
    rows = {row["device"]: row for row in report["gpu_memory"]}
    # BERT on V100 16 GB with MultiWorkerMirroredStrategy: the two busy GPUs peak at 6.2 of 15.5 GB
    assert sorted(rows) == [1, 4, 6]
    assert (rows[4]["peak_bytes_in_use"], rows[4]["limit_bytes"], rows[4]["peak_pct_of_limit"]) == (
        6_208_853_760,
        15_477_102_400,
        40.12,
    )
    assert rows[4]["doubled_batch_fits"] is True
    assert "memory.near_limit" not in findings_by_id(report)


def test_pytorch_memory_events_against_the_gpu_memory(tmp_path):
    from tb_gpu_advisor.testing.kineto_trace import kernel, launch, trace_text, x_event

    props = [
        {
            "id": 0,
            "name": "NVIDIA A100-SXM4-80GB",
            "totalGlobalMem": 80 * GB,
            "computeMajor": 8,
            "computeMinor": 0,
            "numSms": 108,
        }
    ]
    events = []
    for n, allocated in enumerate((70 * GB, 74 * GB, 60 * GB)):
        base = n * 1_000
        events += [
            x_event("user_annotation", f"ProfilerStep#{n}", base, 1_000),
            launch(base + 5, 4, n),
            kernel("ampere_sgemm_128x64_tn", base + 10, 900, n),
            '{"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, '
            f'"ts": {base + 6}, "args": {{"Total Reserved": {78 * GB}, "Total Allocated": {allocated}, '
            '"Bytes": 4096, "Device Id": 0, "Device Type": 1}}',
            '{"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, '
            f'"ts": {base + 7}, "args": {{"Total Allocated": {79 * GB}, "Device Id": -1, "Device Type": 0}}}}',
        ]
    path = tmp_path / "rank0.1.pt.trace.json"
    path.write_text(trace_text(events, deviceProperties=props))
    report = host_report(load_model(path))
    assert report["gpu_memory"] == [
        {
            "device": 0,
            "allocator": "cuda:0",
            "peak_bytes_in_use": 74 * GB,
            "limit_bytes": 80 * GB,
            "capacity_bytes": 80 * GB,
            "headroom_bytes": 6 * GB,
            "peak_pct_of_limit": 92.5,
            "doubled_batch_fits": None,
        }
    ]
    finding = findings_by_id(report)["memory.near_limit"]
    assert "expandable_segments" in finding["fix"]  # PyTorch's idiom
