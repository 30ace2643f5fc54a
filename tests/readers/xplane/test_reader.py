import pytest

from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.testing import TraceBuilder
from tb_gpu_advisor.readers.xplane import schema
from tb_gpu_advisor.readers.xplane.reader import parse_space, read_space
from tests.data import real_trace


def _valid_bytes():
    builder = TraceBuilder()
    builder.gpu(0).kernel("k", 10, 5, launch=(builder.thread(), 1, 2))
    return builder.to_bytes()


def test_splits_planes_without_decoding_them(tmp_path):
    path = tmp_path / "h.xplane.pb"
    path.write_bytes(_valid_bytes())
    space = read_space(path)
    assert [p.name for p in space.planes] == ["/host:CPU", "/device:GPU:0", "Task Environment"]
    assert space.hostnames == ("localhost",)
    assert space.planes[1].decode().name == "/device:GPU:0"


@pytest.mark.parametrize(
    "content, problem",
    [
        (b"", "file is empty"),
        (b"hello, this is plain text and not a protobuf", "not a valid XSpace protobuf"),
        (b"\x0a\x05\x01\x02", "not a valid XSpace protobuf"),
    ],
)
def test_bad_bytes_name_the_file_and_the_problem(tmp_path, content, problem):
    path = tmp_path / "bad.xplane.pb"
    path.write_bytes(content)
    with pytest.raises(ProfileError) as caught:
        read_space(path)
    assert str(caught.value).startswith(str(path) + ": ")
    assert problem in str(caught.value)
    assert "\n" not in str(caught.value)


def test_truncated_file_is_refused(tmp_path):
    path = tmp_path / "cut.xplane.pb"
    data = _valid_bytes()
    path.write_bytes(data[: len(data) - 7])
    with pytest.raises(ProfileError, match="corrupt or the file is truncated"):
        read_space(path)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(ProfileError, match="no such file"):
        read_space(tmp_path / "nope.xplane.pb")
    with pytest.raises(ProfileError, match="directory"):
        read_space(tmp_path)


def test_a_message_that_is_not_an_xspace_has_no_planes():
    # A valid protobuf of another kind (an XStatMetadata) parses but holds no planes.
    other = schema.XStatMetadata(id=3, name="x").SerializeToString()
    with pytest.raises(ProfileError, match="holds no planes"):
        parse_space(other, "other.pb")


def test_size_limit(tmp_path):
    path = tmp_path / "big.xplane.pb"
    path.write_bytes(_valid_bytes())
    with pytest.raises(ProfileError, match="above the .* limit"):
        read_space(path, max_bytes=10)


def test_real_corrupt_file_gives_a_clear_error():
    path = real_trace("tpu_inference_utf8_mangled.xplane.pb")
    with pytest.raises(ProfileError) as caught:
        read_space(path)
    assert "tpu_inference_utf8_mangled.xplane.pb: not a valid XSpace protobuf" in str(caught.value)
