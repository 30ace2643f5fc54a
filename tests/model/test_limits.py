"""Times beyond what a profile can hold, values beyond int64 and too many planes: one clear error per file."""

import pytest

from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.readers.xplane.build import build_model
from tb_gpu_advisor.constants import MAX_PLANES
from tb_gpu_advisor.testing import TraceBuilder
from tb_gpu_advisor.readers.xplane import schema
from tb_gpu_advisor.readers.xplane.reader import parse_space

INT64_MAX, INT64_MIN = 2**63 - 1, -(2**63)


def small_space():
    builder = TraceBuilder(hostname="h")
    thread, gpu = builder.thread("python"), builder.gpu(0)
    for index in range(3):
        thread.step(index, 1_000 + index * 10_000, 10_000)
        gpu.kernel("k", 2_000 + index * 10_000, 3_000, launch=(thread, 1_500 + index * 10_000, 10))
    return builder.xspace()


def _event(line, name_id):
    return next(event for event in line.events if event.metadata_id == name_id)


def mutated(kind):
    space = small_space()
    host, gpu = space.planes[0], space.planes[1]
    launch_id = next(key for key, meta in host.event_metadata.items() if meta.name == "k")
    if kind == "gpu_offset_max":
        gpu.lines[0].events[0].offset_ps = INT64_MAX
    elif kind == "host_duration_max":
        _event(host.lines[0], launch_id).duration_ps = INT64_MAX
    elif kind == "host_offset_max":
        _event(host.lines[0], launch_id).offset_ps = INT64_MAX
    elif kind == "host_offset_min":
        _event(host.lines[0], launch_id).offset_ps = INT64_MIN
    elif kind == "line_timestamp_min":
        gpu.lines[0].timestamp_ns = INT64_MIN
    elif kind == "marker_offset_min":
        host.lines[0].events[0].offset_ps = INT64_MIN
    return space.SerializeToString()


KINDS = [
    "gpu_offset_max",
    "host_duration_max",
    "host_offset_max",
    "host_offset_min",
    "line_timestamp_min",
    "marker_offset_min",
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("reference", [False, True])
def test_times_beyond_a_profile_are_an_error_on_both_paths(kind, reference):
    with pytest.raises(ProfileError) as caught:
        build_model(parse_space(mutated(kind), "bad.xplane.pb"), reference=reference)
    assert caught.value.path == "bad.xplane.pb"
    assert "corrupt or not a profile" in caught.value.problem and "\n" not in caught.value.problem


@pytest.mark.parametrize("kind", KINDS)
def test_streamed_from_disk_the_same(tmp_path, kind):
    path = tmp_path / "bad.xplane.pb"
    path.write_bytes(mutated(kind))
    with pytest.raises(ProfileError, match="corrupt or not a profile"):
        load_model(str(path))


def test_a_profile_within_the_bounds_is_unchanged():
    model = build_model(parse_space(small_space().SerializeToString(), "ok.xplane.pb"))
    assert len(model.gpus[0].activity) == 3


def test_more_planes_than_any_machine_is_refused():
    space = schema.XSpace(hostnames=["h"])
    for index in range(MAX_PLANES + 1):
        space.planes.add(id=index, name=f"/device:GPU:{index}")
    with pytest.raises(ProfileError, match="more than 4,096 planes"):
        build_model(parse_space(space.SerializeToString(), "planes.xplane.pb"))


def test_device_properties_no_gpu_has_are_left_out_with_a_warning(tmp_path):
    builder = TraceBuilder()
    builder.gpu(0, sm_count=10**6, clock_mhz=10**7, compute_capability=(99, 0)).kernel("k", 10, 5)
    builder.gpu(1).kernel("k", 10, 5)
    model = load_model(builder.write(str(tmp_path / "w.xplane.pb")))
    odd, fine = (gpu.capabilities for gpu in model.gpus)
    assert (odd.sm_count, odd.clock_mhz, odd.compute_capability, odd.arch) == (None, None, None, None)
    assert odd.memory_bytes == fine.memory_bytes == 80 * 2**30 and fine.sm_count == 108
    assert fine.compute_capability == (8, 0) and fine.arch == "sm_80"
    assert len(model.trace_warnings) == 3 and all(w.startswith("/device:GPU:0: ") for w in model.trace_warnings)


def test_the_profiler_s_own_warnings_are_capped_with_a_count_of_the_rest(tmp_path):
    from tb_gpu_advisor.readers.xplane.reader import MAX_MESSAGES

    builder = TraceBuilder()
    builder.gpu(0).kernel("k", 10, 5)
    for index in range(MAX_MESSAGES + 5_000):
        builder.profiler_warning(f"warning {index}")
        builder.profiler_error(f"error {index}")
    model = load_model(builder.write(str(tmp_path / "w.xplane.pb")))
    assert model.trace_warnings[:2] == ("warning 0", "warning 1") and len(model.trace_warnings) == MAX_MESSAGES + 1
    assert model.trace_warnings[-1] == "5,000 more warnings of the profiler not shown"
    assert model.trace_errors[-1] == "5,000 more errors of the profiler not shown"


def test_copy_byte_totals_are_exact_past_int64():
    import numpy as np

    from tb_gpu_advisor.model.details import MAX_COPY_BYTES, byte_total, parse_copy_details

    assert byte_total(np.array([2**62, 2**62, 2**62], dtype=np.int64)) == 3 * 2**62
    assert byte_total(np.array([5, 7], dtype=np.int64)) == 12 and byte_total(np.zeros(0, np.int64)) == 0
    assert parse_copy_details(f"size:{MAX_COPY_BYTES + 1} dest:0 async:1").size_bytes == 0  # corrupt: unknown
    assert parse_copy_details(f"size:{MAX_COPY_BYTES} dest:0 async:1").size_bytes == MAX_COPY_BYTES


def test_the_whole_file_parse_caps_the_profiler_s_messages_too(tmp_path):
    from tb_gpu_advisor.readers.xplane.reader import MAX_MESSAGES

    builder = TraceBuilder()
    builder.gpu(0).kernel("k", 10, 5)
    for index in range(MAX_MESSAGES + 7):
        builder.profiler_warning(f"warning {index}")
    with open(builder.write(str(tmp_path / "w.xplane.pb")), "rb") as handle:
        space = parse_space(handle.read())
    assert len(space.warnings) == MAX_MESSAGES + 1 and space.warnings[-1] == "7 more warnings of the profiler not shown"
