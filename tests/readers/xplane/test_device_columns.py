"""The fast GPU-plane path builds exactly the reference GpuDevice, edge cases included."""

import struct

import pytest

from tb_gpu_advisor.constants import STEPS_LINE_ID
from tb_gpu_advisor.model.trace import ActivityKind, CopyDirection
from tb_gpu_advisor.testing import TraceBuilder
from tb_gpu_advisor.testing.encode import len_prefixed
from tests.data import real_trace
from tests.readers.xplane.equivalence import SpaceWriter, compare_paths

_DETAILS = "regs:32 static_shared:0 dynamic_shared:0 grid:4,1,1 block:128,1,1"


def _gpu_space():
    """A host plane with one launch and a GPU plane whose compute line the tests fill."""
    writer = SpaceWriter()
    host = writer.plane("/host:CPU")
    thread = host.lines.add(id=1, name="python", timestamp_ns=1000)
    writer.event(host, thread, "train", 0, 10_000_000, [("step_num", "int64_value", 0), ("_r", "int64_value", 1)])
    gpu = writer.plane("/device:GPU:0")
    line = gpu.lines.add(id=7, name="Stream #7(Compute)", timestamp_ns=1000)
    return writer, gpu, line


@pytest.mark.parametrize("legacy", [False, True])
def test_builder_traces_match(tmp_path, caplog, legacy):
    builder = TraceBuilder(legacy=legacy)
    python = builder.thread("python")
    gpu0, gpu1 = builder.gpu(0), builder.gpu(1)
    for step in range(3):
        python.step(step, step * 1000, 900)
        builder.thread("tf_data").input_wait(step * 1000, 100)
        for index in range(5):
            start = step * 1000 + 150 + index * 120
            gpu0.kernel(
                f"volta_sgemm_{index % 2}",
                start,
                80,
                occupancy_pct=None if legacy else 25.0 + index,
                launch=(python, start - 30, 5),
                tf_op=f"model/dense_{index}/MatMul:MatMul",
                group_id=step,
            )
            gpu1.kernel(
                "ncclKernel_AllReduce_RING_LL_Sum_float",
                start,
                60,
                stream=13,
                hlo_op=f"all-reduce.{index}",
                launch=(python, start - 20, 4),
                group_id=step,
            )
        gpu0.memcpy("h2d", step * 1000 + 110, 30, 1 << 20, launch=(python, step * 1000 + 105, 3), group_id=step)
        gpu1.memcpy("d2h", step * 1000 + 880, 10, 4, src="device", dst="pinned", is_async=True, group_id=step)
        gpu0.memset(step * 1000 + 890, 2, 64)
        if legacy:
            gpu0.step_marker(step, step * 1000, 900)
    builder.metadata(cuda_version="12.4")
    kind, _, model = compare_paths(builder.to_bytes(), tmp_path, caplog)
    assert kind == "ok" and len(model.gpus) == 2 and len(model.gpus[0].activity) == 21


@pytest.mark.parametrize(
    "name",
    [
        "gpu_multi_worker_v100x8.xplane.pb",
        "jax0102_cpu_steps.xplane.pb",
        "amd_mi300x_jax08_gemm.xplane.pb",
        "tpu_v6e_inference_4chip.xplane.pb",
        "tf221_cpu_keras_input_bound.xplane.pb",
        "tf221_cpu_keras_input_fixed.xplane.pb",
        "tpu_inference_utf8_mangled.xplane.pb",
    ],
)
def test_real_traces_match(tmp_path, caplog, name):
    kind, outcome, _ = compare_paths(real_trace(name).read_bytes(), tmp_path, caplog)
    assert kind == ("error" if "mangled" in name else "ok"), outcome


def test_ref_values_missing_metadata_and_valueless_stats(tmp_path, caplog):
    writer, gpu, line = _gpu_space()
    writer.event(
        gpu,
        line,
        "k_ref",
        100,
        50,
        [("correlation_id", "int64_value", 1), ("kernel_details", "ref", _DETAILS), ("tf_op", "ref", "a/b:MatMul")],
    )
    event = writer.event(gpu, line, "k_dangling", 200, 50, [("correlation_id", "uint64_value", 2)])
    event.stats.add(metadata_id=writer.stat_id(gpu, "kernel_details"), ref_value=987654)  # no such string
    writer.event(gpu, line, "unused", 300, 50, metadata_id=4242)  # no event metadata: an unnamed kernel
    writer.event(
        gpu,
        line,
        "k_none",
        400,
        50,
        [("kernel_details", None, None), ("tf_op", None, None), ("correlation_id", None, None)],
    )
    writer.event(
        gpu,
        line,
        "k_str",
        500,
        50,
        [("correlation_id", "str_value", "7"), ("kernel_details", "str_value", _DETAILS + " occ_pct:ü")],
    )
    _, _, model = compare_paths(writer.bytes(), tmp_path, caplog)
    activity = model.gpus[0].activity
    assert list(activity.correlation_id) == [1, 2, -1, -1, -1]
    assert activity.names[activity.name_id[2]] == ""


def test_occurrences_offsets_and_line_bases(tmp_path, caplog):
    writer, gpu, line = _gpu_space()
    writer.event(gpu, line, "k", 100, 50)
    counted = line.events.add(metadata_id=writer.event_id(gpu, "k"), num_occurrences=3, duration_ps=40)
    assert counted.offset_ps == 0
    event = line.events[0].__class__
    # offset, then num_occurrences, then offset again: the last member of the oneof wins
    writer.append_raw_event(
        line,
        b"".join(
            m.SerializeToString()
            for m in (
                event(metadata_id=1, offset_ps=900, duration_ps=5),
                event(num_occurrences=2),
                event(offset_ps=1200),
            )
        ),
    )
    # offset, then num_occurrences: the offset reads 0
    writer.append_raw_event(
        line,
        event(metadata_id=1, offset_ps=700, duration_ps=6).SerializeToString()
        + event(num_occurrences=4).SerializeToString(),
    )
    writer.event(gpu, line, "negative", -500, 50)
    late = gpu.lines.add(id=8, name="Stream #8(Compute)", timestamp_ns=2_000_000)
    writer.event(gpu, late, "k", 5, 10)
    _, _, model = compare_paths(writer.bytes(), tmp_path, caplog)
    activity = model.gpus[0].activity
    assert sorted(zip(activity.duration_ps.tolist(), activity.start_ps.tolist()))[:4] == [
        (5, 1_001_200),
        (6, 1_000_000),
        (10, 2_000_000_005),
        (40, 1_000_000),
    ]


def test_wall_clock_line_bases_are_made_relative(tmp_path, caplog):
    writer, gpu, line = _gpu_space()
    for plane in writer.space.planes:
        for each in plane.lines:
            each.timestamp_ns = 1_796_000_000_000_000_000
    writer.event(gpu, line, "k", 100, 50)
    _, _, model = compare_paths(writer.bytes(), tmp_path, caplog)
    assert model.gpus[0].activity.start_ps.tolist() == [100]


def test_occupancy_configs_and_ops_intern_in_reference_order(tmp_path, caplog):
    writer, gpu, line = _gpu_space()
    old_style = "regs:16 shm:0 grid:1,1,1 block:32,1,1"  # no occ_pct: the occupancy stat fills it in
    for index, (occupancy_field, occupancy) in enumerate(
        [
            ("double_value", 50.0),
            ("int64_value", 25),
            ("double_value", -0.0),
            ("double_value", 0.0),
            ("uint64_value", 75),
            ("str_value", "40"),
            (None, None),
            ("double_value", 50.0),
        ]
    ):
        stats = [
            ("kernel_details", "ref", old_style if index % 3 else _DETAILS + f" occ_pct:{index}"),
            ("theoretical_occupancy_pct", occupancy_field, occupancy),
            ("hlo_op", "ref", "" if index % 2 else f"fusion.{index % 3}"),
            ("tf_op", "ref", f"layer_{index % 4}:Conv2D" if index % 5 else "no_colon"),
        ]
        writer.event(gpu, line, f"kernel_{index % 3}", 100 + index * 100, 50, stats)
    _, _, model = compare_paths(writer.bytes(), tmp_path, caplog)
    assert len(model.gpus[0].activity.configs) >= 4


def test_derived_steps_skipped_lines_and_non_work_events(tmp_path, caplog):
    writer, gpu, line = _gpu_space()
    writer.event(gpu, line, "MemoryResidency", 50, 10)
    writer.event(gpu, line, "k", 100, 50, [("correlation_id", "int64_value", 3)])
    writer.event(gpu, line, "k", 160, 0)
    writer.event(gpu, line, "MemcpyP2P", 300, 20, [("memcpy_details", "str_value", "size:64 dest:1 async:1")])
    writer.event(gpu, line, "MemcpyDtoH", 330, 20, [("memcpy_details", "ref", "size:notanumber")])
    writer.event(gpu, line, "CudaGraphExec:3", 400, 20)
    steps = gpu.lines.add(id=STEPS_LINE_ID, name="Steps", timestamp_ns=1000)
    writer.event(gpu, steps, "0", 0, 900, [("group_id", "int64_value", 0), ("step_name", "str_value", "step 0")])
    ops = gpu.lines.add(id=STEPS_LINE_ID + 3, name="TensorFlow Ops", timestamp_ns=1000)
    writer.event(gpu, ops, "k", 100, 50)
    wrapped = gpu.lines.add(id=2**32 + STEPS_LINE_ID + 5, name="XLA Ops", timestamp_ns=1000)  # int32-truncated
    writer.event(gpu, wrapped, "k", 100, 50)
    counters = gpu.lines.add(id=99, name="_counters_", timestamp_ns=1000)
    writer.event(gpu, counters, "sm_clock_mhz", 0, 1, [("sm_clock_mhz", "double_value", 1410.0)])
    gpu.lines.add(id=100, name="empty")
    line.events.add()  # an empty event: duration 0, skipped
    _, _, model = compare_paths(writer.bytes(), tmp_path, caplog)
    assert len(model.gpus[0].activity) == 4 and len(model.gpus[0].step_markers) == 1


def test_long_events_unknown_fields_and_duplicate_stats(tmp_path, caplog):
    writer, gpu, line = _gpu_space()
    long_op = "very/long/scope/" * 20 + "MatMul:MatMul"
    writer.event(
        gpu,
        line,
        "k",
        100,
        50,
        [
            ("tf_op", "str_value", long_op),
            ("correlation_id", "int64_value", 5),
            ("correlation_id", "int64_value", -9),
            ("tf_op", "ref", "x:Y"),
        ],
    )
    event = writer.event(gpu, line, "k", 200, 50, [("correlation_id", "int64_value", 6)])
    event.stats[0].MergeFromString(b"\x48\x07")  # unknown field 9 in a stat
    line.MergeFromString(b"\x38\x01")  # unknown field 7 in the line
    gpu.MergeFromString(b"\x48\x02")  # unknown field 9 in the plane
    _, _, model = compare_paths(writer.bytes(), tmp_path, caplog)
    assert list(model.gpus[0].activity.correlation_id) == [-9, 6]


@pytest.mark.parametrize(
    "case",
    ["double_correlation", "two_kernel_details", "nan_occupancy", "bad_utf8", "huge_correlation", "truncated", "group"],
)
def test_unusual_planes_fall_back_to_the_reference(tmp_path, caplog, case):
    writer, gpu, line = _gpu_space()
    stats = [("correlation_id", "int64_value", 1), ("kernel_details", "ref", _DETAILS)]
    if case == "double_correlation":
        stats[0] = ("correlation_id", "double_value", 3.7)
    elif case == "two_kernel_details":
        stats.append(("kernel_details", "ref", _DETAILS.replace("regs:32", "regs:64")))
    elif case == "nan_occupancy":
        stats[1] = ("kernel_details", "ref", "regs:8 grid:1,1,1 block:1,1,1")
        stats.append(("theoretical_occupancy_pct", "double_value", struct.unpack("<d", b"\0" * 6 + b"\xf8\x7f")[0]))
    elif case == "huge_correlation":
        stats[0] = ("correlation_id", "uint64_value", 2**64 - 1)
    writer.event(gpu, line, "k", 100, 50, stats)
    data = writer.bytes()
    if case == "bad_utf8":
        marker = b"Stream #7(Compute)"
        data = data.replace(marker, marker[:-1] + b"\xff")
    elif case in ("truncated", "group"):
        raw_line = line.SerializeToString()
        broken = raw_line[:-2] if case == "truncated" else raw_line + b"\x53\x54"  # start/end group 10
        del gpu.lines[:]
        planes = [
            len_prefixed(1, writer.space.planes[0].SerializeToString()),
            len_prefixed(1, gpu.SerializeToString() + len_prefixed(3, broken)),
        ]
        data = b"".join(planes) + len_prefixed(4, b"edge")
    # A NaN occupancy is ignored by both paths alike (the fast path need not fall back for it).
    expect = case in ("double_correlation", "two_kernel_details", "huge_correlation", "group")
    kind, outcome, model = compare_paths(data, tmp_path, caplog, expect_fallback=expect)
    if case in ("bad_utf8", "truncated"):
        assert kind == "error" and "corrupt" in outcome
    if case == "huge_correlation":  # beyond int64: not an id the reference can pair, like the fast path's -1
        assert kind == "ok" and model.gpus[0].activity.correlation_id.tolist() == [-1]


def test_copies_by_memcpy_details_and_hlo_op_names(tmp_path, caplog):
    writer, gpu, line = _gpu_space()
    copies = gpu.lines.add(id=12, name="Stream #12(MemcpyOther)", timestamp_ns=1000)
    writer.event(
        gpu, copies, "CopyDeviceToDevice", 100, 50, [("memcpy_details", "ref", "kind:Unknown size:64 dest:0 async:1")]
    )
    writer.event(gpu, copies, "RuntimeCopy", 200, 50, [("memcpy_details", "str_value", "kind:DeviceToHost size:8")])
    writer.event(gpu, copies, "bare_copy", 300, 50, [("memcpy_details", None, None)])
    writer.event(
        gpu,
        line,
        "both",
        400,
        50,
        [("kernel_details", "ref", _DETAILS), ("memcpy_details", "ref", "kind_src:pinned kind_dst:device size:4")],
    )
    writer.event(
        gpu,
        line,
        "jax_kernel",
        500,
        50,
        [("kernel_details", "ref", _DETAILS), ("hlo_op", "ref", "dot.1"), ("name", "ref", "jit(f)/dot_general")],
    )
    writer.event(
        gpu,
        line,
        "xla_kernel",
        600,
        50,
        [("kernel_details", "ref", _DETAILS), ("hlo_op", "ref", "add.2"), ("name", None, None)],
    )
    _, _, model = compare_paths(writer.bytes(), tmp_path, caplog)
    activity = model.gpus[0].activity
    rows = {
        activity.names[n]: (ActivityKind(k), CopyDirection(d), activity.config_id[i] >= 0)
        for i, (n, k, d) in enumerate(zip(activity.name_id, activity.kind, activity.copy_direction))
    }
    assert rows == {
        "CopyDeviceToDevice": (ActivityKind.MEMCPY, CopyDirection.D2D, False),
        "RuntimeCopy": (ActivityKind.MEMCPY, CopyDirection.D2H, False),
        "bare_copy": (ActivityKind.MEMCPY, CopyDirection.OTHER, False),
        "both": (ActivityKind.MEMCPY, CopyDirection.H2D, False),
        "jax_kernel": (ActivityKind.KERNEL, CopyDirection.NONE, True),
        "xla_kernel": (ActivityKind.KERNEL, CopyDirection.NONE, True),
    }
    assert [activity.op_names[o] for o in activity.op_id if o >= 0] == ["dot.1", "add.2"]


def test_program_ids_match_in_both_paths(tmp_path, caplog):
    """program_id (int64, uint64, ref, str, absent, above int64) joins kernels to HLO: both paths agree."""
    writer, gpu, line = _gpu_space()
    for offset, value in enumerate(
        [("int64_value", 5), ("uint64_value", 7), ("ref", "9"), ("str_value", "11"), (None, None), ("int64_value", -3)]
    ):
        stats = [("kernel_details", "ref", _DETAILS), ("hlo_op", "ref", "fusion.1")]
        if value[0] is not None:
            stats.append(("program_id", value[0], value[1]))
        writer.event(gpu, line, "k", 100 + offset * 100, 50, stats)
    _, _, model = compare_paths(writer.bytes(), tmp_path, caplog)
    assert list(model.gpus[0].activity.program_id) == [5, 7, -1, -1, -1, -3]


def test_program_id_above_int64_falls_back_and_is_unknown(tmp_path, caplog):
    writer, gpu, line = _gpu_space()
    writer.event(gpu, line, "k", 100, 50, [("kernel_details", "ref", _DETAILS), ("program_id", "uint64_value", 2**63)])
    _, _, model = compare_paths(writer.bytes(), tmp_path, caplog, expect_fallback=True)
    assert list(model.gpus[0].activity.program_id) == [-1]


def test_generated_and_real_traces_with_hlo_match(tmp_path, caplog):
    from tb_gpu_advisor.testing.roofline_trace import roofline_builder
    from tests.analysis.test_roofline import AMD_TRACE

    for data in (roofline_builder().to_bytes(), AMD_TRACE.read_bytes()):
        kind, outcome, model = compare_paths(data, tmp_path, caplog)
        assert kind == "ok" and model.hlo_protos and (model.gpus[0].activity.program_id >= 0).any(), outcome


def test_tf_signatures_match_in_both_paths(tmp_path, caplog):
    """(op type, input shapes) of TensorFlow kernels from tf_op or the annotation, interned in the same order."""
    writer, gpu, line = _gpu_space()
    cases = [
        [("tf_op", "ref", "model/dense/MatMul:MatMul"), ("shape", "str_value", "(half[8,16];half[16,4])")],
        [
            ("annotation", "str_value", "outer::model/mul:Mul#shape=(half[4];half[])#"),
            ("shape", "ref", "(half[4];half[])"),
        ],
        [("tf_op", "ref", "model/dense/MatMul:MatMul"), ("shape", "str_value", "(half[8,16];half[16,4])")],
        [("tf_op", "ref", "XlaModule:"), ("shape", "str_value", "(half[4])")],  # XLA: its HLO costs it
        [("tf_op", "ref", "no_type"), ("shape", "str_value", "(half[4])")],
        [("annotation", "str_value", "a:Add#x#"), ("shape", None, None)],
        [("tf_op", "ref", "x:Exp")],
    ]
    for offset, stats in enumerate(cases):
        writer.event(gpu, line, "k", 100 + offset * 100, 50, [("kernel_details", "ref", _DETAILS)] + stats)
    _, _, model = compare_paths(writer.bytes(), tmp_path, caplog)
    activity = model.gpus[0].activity
    assert activity.tf_signatures == (("MatMul", "(half[8,16];half[16,4])"), ("Mul", "(half[4];half[])"))
    assert list(activity.tf_signature_id) == [0, 1, 0, -1, -1, -1, -1]
