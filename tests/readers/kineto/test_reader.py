"""The Kineto reader on small hand-written traces (exact numbers) and on the committed real ones."""

import gzip

import pytest

from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.readers.kineto.build import load_kineto_model
from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.model.trace import ActivityKind, CopyDirection
from tb_gpu_advisor.testing.kineto_trace import trace_text as _trace_text
from tb_gpu_advisor.testing.kineto_trace import x_event as _x

PROPS = [
    {
        "id": 0,
        "name": "NVIDIA A100-SXM4-80GB",
        "totalGlobalMem": 85_899_345_920,
        "computeMajor": 8,
        "computeMinor": 0,
        "numSms": 108,
    }
]


STEP_TRACE = [
    _x("user_annotation", "ProfilerStep#7", "1700000000000000.000", "1000.000"),
    _x(
        "user_annotation",
        "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
        "1700000000000000.100",
        "300.250",
    ),
    _x("cpu_op", "aten::mm", "1700000000000400.000", "50"),
    _x("cuda_runtime", "cudaLaunchKernel", "1700000000000410.001", "5.002", correlation=11),
    _x(
        "kernel",
        "ampere_sgemm_128x64_nn",
        "1700000000000420.0004",
        "0.0005",
        pid=0,
        tid=7,
        device=0,
        stream=7,
        correlation=11,
        grid=[4, 2, 1],
        block=[128, 1, 1],
        **{"registers per thread": 90, "shared memory": 4096, "est. achieved occupancy %": 12},
    ),
    _x("cuda_runtime", "cudaMemcpyAsync", "1700000000000500", "4", correlation=12),
    _x(
        "gpu_memcpy",
        "Memcpy HtoD (Pageable -> Device)",
        "1700000000000501.5",
        "2.25",
        pid=0,
        tid=7,
        device=0,
        stream=7,
        correlation=12,
        bytes=4096,
    ),
    _x("cuda_runtime", "cudaStreamSynchronize", "1700000000000600", "100", correlation=13),
    _x(
        "cpu_op",
        "record_param_comms",
        "1700000000000700",
        "10",
        **{
            "Collective name": "allreduce",
            "In msg nelems": 1000,
            "Out msg nelems": 1000,
            "dtype": "BFloat16",
            "Group size": 8,
        },
    ),
    _x("cuda_runtime", "cudaLaunchKernel", "1700000000000702", "3", correlation=14),
    _x(
        "kernel",
        "ncclKernel_AllReduce_RING_LL_Sum_bfloat16(ncclDevComm*, unsigned long, ncclWork*)",
        "1700000000000710",
        "80",
        pid=0,
        tid=20,
        device=0,
        stream=20,
        correlation=14,
    ),
]


@pytest.fixture
def step_model(tmp_path):
    path = tmp_path / "worker0.1700000000000.pt.trace.json"
    path.write_text(
        _trace_text(
            STEP_TRACE,
            schemaVersion=1,
            deviceProperties=PROPS,
            distributedInfo={"backend": "nccl", "rank": 3, "world_size": 8},
        )
    )
    return load_model(path)


def test_times_are_exact_picoseconds_from_the_first_event(step_model):
    activity = step_model.gpus[0].activity
    kernel = activity.kind == ActivityKind.KERNEL
    # 420.0004 us after the origin, 0.0005 us long: a float64 of 1700000000000420.0004 cannot hold this.
    assert int(activity.start_ps[kernel][0]) == 420_000_400
    assert int(activity.duration_ps[kernel][0]) == 500
    assert step_model.host_step_markers[0].start_ps == 0
    assert step_model.host_step_markers[0].duration_ps == 1_000_000_000


def test_steps_launches_waits_syncs_and_streams(step_model):
    (marker,) = step_model.host_step_markers
    assert (marker.name, marker.step_num) == ("ProfilerStep#7", 7)
    host = step_model.host_activity
    assert list(host.launch_correlation_id) == [11, 12, 13, 14]
    assert host.input_waits.total_ps == 300_250_000
    assert host.tagged["sync"].total_ps == 100_000_000
    activity = step_model.gpus[0].activity
    assert sorted(set(activity.stream_id.tolist())) == [7, 20]
    assert step_model.format == "kineto" and step_model.host == "worker0"


def test_kernel_config_copy_and_op_name(step_model):
    activity = step_model.gpus[0].activity
    first = int((activity.kind == ActivityKind.KERNEL).argmax())
    config = activity.configs[activity.config_id[first]]
    assert (config.grid, config.block, config.registers_per_thread, config.shared_memory_bytes) == (
        (4, 2, 1),
        (128, 1, 1),
        90,
        4096,
    )
    assert config.occupancy_pct is None  # Kineto's is an estimate of achieved occupancy, not theoretical
    assert config.achieved_occupancy_pct == 12.0  # kept apart, under its own name
    assert activity.op_names[activity.op_id[first]] == "aten::mm"
    copy = int((activity.kind == ActivityKind.MEMCPY).argmax())
    assert activity.copy_direction[copy] == CopyDirection.H2D
    details = activity.copies[activity.copy_id[copy]]
    assert (details.size_bytes, details.src_kind, details.dst_kind) == (4096, "pageable", "device")


def test_device_properties_distributed_info_and_collectives(step_model):
    caps = step_model.gpus[0].capabilities
    assert (caps.model_name, caps.vendor, caps.sm_count, caps.compute_capability) == (
        "NVIDIA A100-SXM4-80GB",
        "Nvidia",
        108,
        (8, 0),
    )
    assert (caps.clock_mhz, caps.memory_bandwidth_bytes_per_s) == (1410.0, 2039 * 10**9)  # table, 80 GB part
    env = step_model.environment
    assert (env["rank"], env["world_size"], env["distributed_backend"], env["framework"]) == (3, 8, "nccl", "pytorch")
    host_call, kernel_call = step_model.collectives
    assert (host_call.source, host_call.collective, host_call.in_bytes, host_call.group_size) == (
        "host",
        "allreduce",
        2000,
        8,
    )
    assert (kernel_call.source, kernel_call.collective, kernel_call.device, kernel_call.duration_ps) == (
        "kernel",
        "allreduce",
        0,
        80_000_000,
    )


def test_gzip_and_plain_give_the_same_model(tmp_path, step_model):
    text = _trace_text(STEP_TRACE, deviceProperties=PROPS)
    gz = tmp_path / "w.1.pt.trace.json.gz"
    gz.write_bytes(gzip.compress(text.encode()))
    zipped = load_model(gz)
    assert zipped.gpus[0].activity.start_ps.tolist() == step_model.gpus[0].activity.start_ps.tolist()
    assert zipped.host_activity.busy.total_ps == step_model.host_activity.busy.total_ps


@pytest.mark.parametrize(
    "content, problem",
    [
        (b"", "file is empty"),
        (b'{"traceEvents": [' + _x("cpu_op", "a", 1, 2).encode(), "is truncated: the JSON ends before the trace does"),
        (b'{"schemaVersion": 1, "traceEvents": [{"ph": "X",, }]}', "is not valid JSON"),
        (b'{"nodes": [1, 2, 3]}', "not a PyTorch profiler trace (no traceEvents list)"),
        (b"[1, 2]", "not a PyTorch profiler trace"),
        (b"\x08\x01\x12\x05hello", "is not JSON text"),
        (gzip.compress(b'{"traceEvents": []}', mtime=0)[:-6], "is truncated: the gzip stream ends early"),
    ],
)
def test_bad_files_give_one_line_errors_naming_the_file(tmp_path, content, problem):
    path = tmp_path / "bad.1.pt.trace.json"
    path.write_bytes(content)
    with pytest.raises(ProfileError) as caught:
        load_kineto_model(path)
    message = str(caught.value)
    assert message.startswith(str(path)) and problem in message and "\n" not in message


def test_a_window_boundary_inside_an_event_or_number_changes_nothing(tmp_path, monkeypatch):
    import tb_gpu_advisor.readers.kineto.stream as stream

    text = _trace_text(STEP_TRACE, deviceProperties=PROPS)
    path = tmp_path / "w.1.pt.trace.json"
    path.write_text(text)
    whole = load_kineto_model(path)
    monkeypatch.setattr(stream, "_CHUNK", 7)
    pieces = load_kineto_model(path)
    assert pieces.gpus[0].activity.start_ps.tolist() == whole.gpus[0].activity.start_ps.tolist()
    assert pieces.host_activity.launch_start_ps.tolist() == whole.host_activity.launch_start_ps.tolist()
    assert pieces.environment == whole.environment


def test_real_traces_read_with_their_counts(kineto_models):
    counts = {
        name: (
            len(m.gpus[0].activity),
            int((m.gpus[0].activity.kind == ActivityKind.KERNEL).sum()),
            len(m.host_step_markers),
            len(m.collectives),
        )
        for name, m in kineto_models.items()
    }
    assert counts == {
        "a100_8rank_control": (9450, 8568, 6, 162),
        "v100_2rank_test": (15632, 9876, 6, 166),
        "a100_2rank_nccl": (3774, 2700, 3, 48),
        "a100_alexnet_sync": (98, 79, 0, 0),
        "mi250_minitoy_train": (16, 14, 2, 0),
    }
    mi250 = kineto_models["mi250_minitoy_train"].gpus[0].capabilities
    # 104 CUs, 64 GiB, no name but "AMD Radeon Graphics": an MI210 or one MI250 GCD (model.device_identity)
    assert (mi250.vendor, mi250.compute_capability, mi250.clock_mhz) == ("AMD", None, 1700)
