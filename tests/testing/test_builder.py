"""TraceBuilder writes what TensorFlow/XLA write: stats, their types and order, sorted lines, same bytes."""

from tb_gpu_advisor.testing import TraceBuilder
from tb_gpu_advisor.readers.xplane import schema


def _space(builder):
    return schema.XSpace.FromString(builder.to_bytes())


def _plane(space, name):
    return next(plane for plane in space.planes if plane.name == name)


def _stats(plane, holder):
    names = {key: meta.name for key, meta in plane.stat_metadata.items()}
    out = []
    for stat in holder.stats:
        which = stat.WhichOneof("value")
        value = names[stat.ref_value] if which == "ref_value" else getattr(stat, which)
        out.append((names[stat.metadata_id], which, value))
    return out


def test_events_take_any_stat_name_including_name():
    builder = TraceBuilder()
    builder.thread("tf_data_iterator_get_next/42", thread_id=42).event(
        "Iterator::Root", 10, 5, name="PrefetchDataset:4", id=-7, parent_id=2**63 + 5
    )
    host = _plane(_space(builder), "/host:CPU")
    line = host.lines[0]
    assert (line.id, line.name) == (42, "tf_data_iterator_get_next/42")
    assert _stats(host, line.events[0]) == [
        ("name", "str_value", "PrefetchDataset:4"),
        ("id", "int64_value", -7),
        ("parent_id", "uint64_value", 2**63 + 5),
    ]


def test_kernel_stats_follow_the_cupti_collector_order_and_formats():
    builder = TraceBuilder(first_correlation_id=500)
    python = builder.thread("python")
    gpu = builder.gpu(0, memory_bandwidth_bytes=2_039_040_000_000, memory_bytes=85_100_068_864)
    gpu.kernel(
        "k",
        100,
        20,
        grid=(8, 1, 1),
        block=(256, 1, 1),
        registers=40,
        occupancy_pct=75.0,
        min_grid_size=864,
        suggested_block_size=1024,
        launch=(python, 90, 4),
        tf_op="m/dense/MatMul:MatMul",
    )
    space = _space(builder)
    device = _plane(space, "/device:GPU:0")
    assert _stats(device, device.lines[0].events[0]) == [
        ("correlation_id", "int64_value", 500),
        ("context_id", "str_value", "$$1"),
        ("theoretical_occupancy_pct", "double_value", 75.0),
        ("occupancy_min_grid_size", "int64_value", 864),
        ("occupancy_suggested_block_size", "int64_value", 1024),
        ("kernel_details", "ref_value", "regs:40 static_shared:0 dynamic_shared:0 grid:8,1,1 block:256,1,1 occ_pct:75"),
        ("tf_op", "ref_value", "m/dense/MatMul:MatMul"),
    ]
    host = _plane(space, "/host:CPU")
    assert _stats(host, host.lines[0].events[0]) == [
        ("device_id", "int64_value", 0),
        ("correlation_id", "int64_value", 500),
        ("context_id", "str_value", "$$1"),
    ]
    plane_stats = _stats(device, device)
    assert plane_stats[:2] == [
        ("device_vendor", "str_value", "Nvidia"),
        ("gpu_device_name", "str_value", "NVIDIA A100-SXM4-80GB"),
    ]
    assert ("memory_bandwidth", "uint64_value", 2_039_040_000_000) in plane_stats
    assert ("memory_size", "uint64_value", 85_100_068_864) in plane_stats


def test_copy_driver_calls_carry_memcpy_details_with_unknown_kinds():
    builder = TraceBuilder()
    python = builder.thread("python")
    builder.gpu(0).memcpy("h2d", 50, 10, 4096, src="pageable", launch=(python, 40, 25))
    host = _plane(_space(builder), "/host:CPU")
    assert _stats(host, host.lines[0].events[0])[-1] == (
        "memcpy_details",
        "ref_value",
        "kind_src:unknown kind_dst:unknown size:4096 dest:0 async:0",
    )


def test_lines_are_sorted_by_start_with_enclosing_events_first():
    builder = TraceBuilder()
    thread = builder.thread("python")
    thread.event("inner", 20, 5).event("later", 40, 1).event("outer", 20, 30).event("first", 1, 2)
    host = _plane(_space(builder), "/host:CPU")
    names = {key: meta.name for key, meta in host.event_metadata.items()}
    assert [names[event.metadata_id] for event in host.lines[0].events] == ["first", "outer", "inner", "later"]


def test_bytes_are_deterministic():
    def build():
        builder = TraceBuilder()
        gpu = builder.gpu(1)
        for index in range(50):
            gpu.kernel(f"k{index % 7}", index * 10, 5, launch=(builder.thread(f"t{index % 3}"), index * 10 - 8, 3))
        builder.metadata(cuda_version="12050")
        return builder.to_bytes()

    assert build() == build()
