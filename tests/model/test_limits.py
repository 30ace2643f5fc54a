"""Times beyond what a profile can hold, values beyond int64 and too many planes: one clear error per file."""

import pytest

from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.model.build import build_model, load_model
from tb_gpu_advisor.constants import MAX_PLANES
from tb_gpu_advisor.testing import TraceBuilder
from tb_gpu_advisor.xplane import schema
from tb_gpu_advisor.xplane.reader import parse_space

INT64_MAX, INT64_MIN = 2**63 - 1, -2**63


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


KINDS = ["gpu_offset_max", "host_duration_max", "host_offset_max", "host_offset_min", "line_timestamp_min",
         "marker_offset_min"]


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
