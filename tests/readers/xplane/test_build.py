import numpy as np

from tb_gpu_advisor.constants import STEPS_LINE_ID
from tb_gpu_advisor.readers.xplane.build import build_model
from tb_gpu_advisor.model.trace import ActivityKind, CopyDirection
from tb_gpu_advisor.testing import TraceBuilder
from tb_gpu_advisor.readers.xplane.reader import parse_space
from tests.conftest import model_of
from tests.data import real_trace


def _simple(legacy=False):
    builder = TraceBuilder(legacy=legacy)
    python = builder.thread("python")
    gpu = builder.gpu(
        0,
        compute_capability=(9, 0),
        sm_count=132,
        clock_mhz=1980,
        memory_bandwidth_gbps=3350,
        memory_gb=80,
        model="NVIDIA H100 80GB HBM3",
    )
    gpu.kernel(
        "sm90_xmma_gemm_bf16bf16_bf16f32",
        100,
        50,
        grid=(132, 1, 1),
        block=(384, 1, 1),
        registers=168,
        static_shared=1024,
        dynamic_shared=2048,
        occupancy_pct=12.5,
        launch=(python, 90, 4),
        tf_op="model/dense/MatMul:MatMul",
    )
    gpu.memcpy("h2d", 10, 20, 4096, src="pinned", is_async=True, launch=(python, 5, 2))
    gpu.memset(200, 1, 64)
    return builder


def test_current_format_model():
    model = model_of(_simple())
    assert model.format == "current"
    (gpu,) = model.gpus
    caps = gpu.capabilities
    assert (caps.sm_count, caps.clock_mhz, caps.compute_capability, caps.vendor, caps.arch) == (
        132,
        1980.0,
        (9, 0),
        "NVIDIA",
        "sm_90",
    )
    assert caps.memory_bandwidth_bytes_per_s == 3350 * 10**9
    assert caps.model_name == "NVIDIA H100 80GB HBM3"
    activity = gpu.activity
    assert list(activity.kind) == [ActivityKind.MEMCPY, ActivityKind.KERNEL, ActivityKind.MEMSET]
    assert list(activity.start_ps) == [10_000_000, 100_000_000, 200_000_000]
    kernel = activity.configs[activity.config_id[1]]
    assert (kernel.registers_per_thread, kernel.shared_memory_bytes, kernel.occupancy_pct) == (168, 3072, 12.5)
    assert activity.op_names[activity.op_id[1]] == "model/dense/MatMul"
    assert activity.copy_direction[0] == CopyDirection.H2D
    copy = activity.copies[activity.copy_id[0]]
    assert (copy.size_bytes, copy.src_kind, copy.is_async) == (4096, "pinned", True)
    host = model.host_activity
    assert list(host.launch_correlation_id) == [1, 2, 3][: len(host.launch_correlation_id)]
    assert len(host.launch_correlation_id) == 2


def test_legacy_format_model():
    builder = _simple(legacy=True)
    builder.gpu(0).step_marker(0, 0, 300)
    model = model_of(builder)
    assert model.format == "pre-grouped"
    (gpu,) = model.gpus
    assert (gpu.capabilities.vendor, gpu.capabilities.arch) == ("NVIDIA", "sm_90")  # inferred: CUDA cc, no ROCm names
    assert [(m.group_id, m.start_ps, m.end_ps) for m in gpu.step_markers] == [(0, 0, 300_000_000)]
    kernel = gpu.activity.configs[gpu.activity.config_id[1]]
    assert kernel.occupancy_pct is None
    assert gpu.activity.copies[gpu.activity.copy_id[0]].has_pageable_side is None
    # the garbage kernel_details on host launches are never read; launches still pair
    assert len(model.host_activity.launch_correlation_id) == 2


def test_derived_lines_do_not_double_count():
    space = _simple().xspace()
    device = next(p for p in space.planes if p.name == "/device:GPU:0")
    compute = next(line for line in device.lines if "Compute" in line.name)
    derived = device.lines.add(id=-559038734, name="TensorFlow Ops", timestamp_ns=compute.timestamp_ns)
    derived.events.extend(compute.events)
    model = build_model(parse_space(space.SerializeToString(), "x.xplane.pb"))
    assert int((model.gpus[0].activity.kind == ActivityKind.KERNEL).sum()) == 1


def test_wall_clock_line_bases_give_the_same_relative_times():
    space = _simple().xspace()
    shift_ns = 1_796_213_325_854_433_977
    for plane in space.planes:
        for line in plane.lines:
            line.timestamp_ns += shift_ns
    shifted = build_model(parse_space(space.SerializeToString(), "x.xplane.pb"))
    plain = model_of(_simple())
    a, b = shifted.gpus[0].activity, plain.gpus[0].activity
    assert np.array_equal(a.start_ps - a.start_ps[0], b.start_ps - b.start_ps[0])
    latency_shifted = a.start_ps[1] - shifted.host_activity.launch_start_ps[0]
    latency_plain = b.start_ps[1] - plain.host_activity.launch_start_ps[0]
    assert latency_shifted == latency_plain == 10_000_000


def test_steps_line_id_constant():
    assert STEPS_LINE_ID == -559038737


def test_real_v100_trace_model(v100_trace):
    model = build_model(parse_space(v100_trace.read_bytes(), str(v100_trace)))
    assert model.format == "pre-grouped"
    assert len(model.gpus) == 8
    counts = {gpu.ordinal: len(gpu.activity) for gpu in model.gpus}
    assert counts == {0: 0, 1: 19, 2: 0, 3: 0, 4: 759, 5: 0, 6: 778, 7: 0}
    assert len(model.host_activity.launch_correlation_id) == 1556
    gpu6 = model.gpus[6]
    assert [(m.group_id, m.duration_ps) for m in gpu6.step_markers] == [(0, 21_310_352_000)]


def test_real_cpu_trace_has_no_gpu():
    path = real_trace("tf221_cpu_keras_input_bound.xplane.pb")
    model = build_model(parse_space(path.read_bytes(), str(path)))
    assert model.gpus == ()
    assert len(model.host_step_markers) == 21
    assert model.host_step_markers[0].name == "Profiled batch 9"


def test_theoretical_occupancy_stat_fills_in_when_details_lack_it():
    space = _simple().xspace()
    device = next(p for p in space.planes if p.name == "/device:GPU:0")
    details_id = next(k for k, m in device.stat_metadata.items() if m.name == "kernel_details")
    occupancy_id = max(device.stat_metadata) + 1
    device.stat_metadata[occupancy_id].name = "theoretical_occupancy_pct"
    plain_details = max(device.stat_metadata) + 1
    device.stat_metadata[plain_details].name = "regs:64 static_shared:0 dynamic_shared:0 grid:8,1,1 block:64,1,1"
    for line in device.lines:
        for event in line.events:
            for stat in event.stats:
                if stat.metadata_id == details_id:
                    stat.ref_value = plain_details
                    event.stats.add(metadata_id=occupancy_id, double_value=37.5)
    model = build_model(parse_space(space.SerializeToString(), "x.xplane.pb"))
    activity = model.gpus[0].activity
    kernel_index = int(np.flatnonzero(activity.kind == ActivityKind.KERNEL)[0])
    assert activity.configs[activity.config_id[kernel_index]].occupancy_pct == 37.5
