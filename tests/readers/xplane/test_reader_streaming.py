"""read_space streams planes from the file and agrees with parse_space, errors included."""

import pytest

from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.testing import TraceBuilder
from tb_gpu_advisor.testing.encode import len_prefixed
from tb_gpu_advisor.readers.xplane.reader import FilePlane, parse_space, read_space
from tests.data import real_trace


def _outcome(read):
    try:
        space = read()
    except ProfileError as err:
        return str(err)
    return [(p.id, p.name, p.read_bytes()) for p in space.planes], space.hostnames, space.errors, space.warnings


def _builder_bytes():
    builder = TraceBuilder(hostname="h")
    builder.gpu(3).kernel("k", 10, 5, launch=(builder.thread("python"), 1, 2))
    return builder.to_bytes()


def test_planes_are_read_on_demand_and_match_parse_space(tmp_path):
    data = _builder_bytes() + len_prefixed(2, "error é".encode()) + len_prefixed(3, b"warned") + b"\x28\x05"
    path = tmp_path / "h.xplane.pb"
    path.write_bytes(data)
    space = read_space(path)
    assert all(isinstance(plane, FilePlane) for plane in space.planes)
    assert _outcome(lambda: space) == _outcome(lambda: parse_space(data, str(path)))
    assert space.errors == ("error é",) and space.hostnames == ("h",)


@pytest.mark.parametrize("damage", ["truncated", "group", "bad_plane_name", "no_planes", "bad_hostname"])
def test_damaged_files_give_the_same_errors(tmp_path, damage):
    data = _builder_bytes()
    if damage == "truncated":
        data = data[:-7]
    elif damage == "group":
        data = data + b"\x2b\x2c"  # an unknown group 5, which upb skips
    elif damage == "bad_plane_name":
        data = len_prefixed(1, b"\x12\x02\xff\xfe") + data
    elif damage == "no_planes":
        data = len_prefixed(4, b"host")
    else:
        data = data + len_prefixed(4, b"\xff")
    path = tmp_path / "h.xplane.pb"
    path.write_bytes(data)
    assert _outcome(lambda: read_space(path)) == _outcome(lambda: parse_space(data, str(path)))


def test_real_traces_stream_like_parse_space(v100_trace):
    mangled = real_trace("tpu_inference_utf8_mangled.xplane.pb")
    for path in (v100_trace, mangled):
        assert _outcome(lambda p=path: read_space(p)) == _outcome(lambda p=path: parse_space(p.read_bytes(), str(p)))


def _sparse(tmp_path, size):
    """A file of `size` bytes that takes no disk space (the limit is checked before reading)."""
    path = tmp_path / "huge.xplane.pb"
    with open(path, "wb") as handle:
        handle.truncate(size)
    return path


def test_size_limit_names_the_file_and_the_option(tmp_path):
    path = tmp_path / "big.xplane.pb"
    path.write_bytes(_builder_bytes())
    size = len(path.read_bytes())
    with pytest.raises(
        ProfileError,
        match=rf"big\.xplane\.pb: file is {size:,} bytes, above the 100 bytes limit "
        r"\(raise it with --max-file-mb\)",
    ):
        read_space(path, max_bytes=100)
    with pytest.raises(ProfileError, match=r"file is 5,000 MB, above the 4,096 MB limit"):
        read_space(_sparse(tmp_path, 5000 * 2**20), max_bytes=4096 * 2**20)
    assert read_space(path, max_bytes=len(path.read_bytes())).planes
