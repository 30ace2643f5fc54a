"""The command line's options for big inputs: the file size limit and Dask."""

import io
import os

from tb_gpu_advisor.cli import build_parser, main
from tb_gpu_advisor.testing import TraceBuilder


def test_max_file_mb_refuses_larger_files_with_a_clear_message(tmp_path):
    builder = TraceBuilder()
    builder.gpu(0).kernel("k", 10, 5, launch=(builder.thread(), 1, 2))
    path = builder.write(str(tmp_path / "w.xplane.pb"))
    out, err = io.StringIO(), io.StringIO()
    assert main(["analyze", path, "--max-file-mb", "0.0001"], out=out, err=err) == 2
    assert (
        err.getvalue()
        == f"error: {path}: file is {os.path.getsize(path):,} bytes, above the 104 bytes limit (raise it with --max-file-mb)\n"
    )
    assert out.getvalue() == ""
    assert main(["analyze", path, "--max-file-mb", "1"], out=io.StringIO(), err=io.StringIO()) == 0


def test_analyze_report_compare_and_check_take_a_dask_address():
    address = "tcp://10.0.0.5:8786"
    for argv in (
        ["analyze", "logs"],
        ["report", "logs"],
        ["compare", "a", "b"],
        ["check", "--baseline", "a", "--candidate", "b"],
    ):
        assert build_parser().parse_args(argv + ["--dask", address]).dask == address
        assert build_parser().parse_args(argv).dask is None


def test_a_tiny_max_file_mb_is_a_one_byte_limit_not_no_limit(tmp_path):
    builder = TraceBuilder()
    builder.gpu(0).kernel("k", 10, 5, launch=(builder.thread(), 1, 2))
    path = builder.write(str(tmp_path / "w.xplane.pb"))
    out, err = io.StringIO(), io.StringIO()
    assert main(["analyze", path, "--max-file-mb", "1e-9"], out=out, err=err) == 2
    assert err.getvalue() == (
        f"error: {path}: file is {os.path.getsize(path):,} bytes, above the 1 byte limit "
        "(raise it with --max-file-mb)\n"
    )
