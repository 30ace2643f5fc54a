import pytest

from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.remote import is_remote_url
from tb_gpu_advisor.remote.filesystem import open_url, remote_errors


@pytest.mark.parametrize(
    "path,remote",
    [
        ("s3://b/logs", True),
        ("gs://b", True),
        ("memory://x", True),
        ("file:///tmp/x", True),
        ("/tmp/logs", False),
        ("logs", False),
        ("C:\\logs", False),
        ("./s3:/x", False),
    ],
)
def test_is_remote_url(path, remote):
    assert is_remote_url(path) is remote


def test_unknown_protocol_is_a_one_line_error():
    pytest.importorskip("fsspec")
    with pytest.raises(ProfileError, match=r"^nosuch://b/x: not a usable URL: Protocol not known: nosuch$"):
        open_url("nosuch://b/x")


@pytest.mark.parametrize(
    "raised,expected",
    [
        (FileNotFoundError("k"), "u: no such file or directory"),
        (PermissionError("denied by policy"), "u: cannot list: access denied (denied by policy)"),
        (ConnectionError("refused\nmore detail"), "u: cannot list: ConnectionError: refused"),
        (RuntimeError(), "u: cannot list: RuntimeError"),
    ],
)
def test_remote_failures_become_one_line_profile_errors(raised, expected):
    with pytest.raises(ProfileError) as error:
        with remote_errors("u", "list"):
            raise raised
    assert str(error.value) == expected
