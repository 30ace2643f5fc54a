"""The CLI's progress bar: drawn on a terminal from bytes read and hosts done, silent when piped or short."""

import io
import os
import pty
import subprocess
import sys
from pathlib import Path

from tb_gpu_advisor.cli import main
from tb_gpu_advisor.commands import progress as progress_module
from tb_gpu_advisor.commands.progress import ProgressBar, is_terminal
from tb_gpu_advisor.files.runs import HostFile
from tb_gpu_advisor.testing.builder import TraceBuilder

REPO = Path(__file__).resolve().parents[2]
REAL = REPO / "tests" / "data" / "real" / "gpu_multi_worker_v100x8.xplane.pb"


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def _hosts(tmp_path, sizes):
    files = []
    for index, size in enumerate(sizes):
        path = tmp_path / f"h{index}.xplane.pb"
        path.write_bytes(b"\0" * size)
        files.append(HostFile(host=f"h{index}", path=str(path)))
    return files


def test_the_bar_follows_bytes_read_and_hosts_done(tmp_path):
    files = _hosts(tmp_path, [3_000_000, 1_000_000])
    out, clock = io.StringIO(), Clock()
    bar = ProgressBar(out, files, clock=clock)
    bar.read(1_500_000, 3_000_000)
    assert out.getvalue() == ""  # within the first second nothing is drawn
    clock.now = 1.5
    bar.read(3_000_000, 3_000_000)
    assert bar.fraction() == 3_000_000 / 8_000_000
    assert out.getvalue() == "\rAnalyzing [#########---------------]  38%  host 1/2  3/4 MB"
    bar.host_done(files[0])  # a host done is always drawn
    assert bar.fraction() == 6_000_000 / 8_000_000
    assert out.getvalue().endswith("75%  host 2/2  3/4 MB")
    clock.now = 1.55  # bytes read are redrawn at most every 0.1 s
    bar.read(500_000, 1_000_000)
    assert out.getvalue().endswith("75%  host 2/2  3/4 MB")
    clock.now = 2.0
    bar.host_done(files[1])
    assert bar.fraction() == 1.0 and out.getvalue().endswith("[########################] 100%  host 2/2  4/4 MB")
    width = len(bar.line())
    bar.close()
    assert out.getvalue().endswith("\r" + " " * width + "\r")


def test_hosts_without_a_known_size_count_by_hosts(tmp_path):
    files = [HostFile(host="a", path="gs://bucket/a.xplane.pb"), HostFile(host="b", path="gs://bucket/b.xplane.pb")]
    bar = ProgressBar(io.StringIO(), files, clock=Clock())
    bar.host_done(files[0])
    assert bar.fraction() == 0.5 and bar.line().endswith(" 50%  host 2/2")


def test_only_a_terminal_gets_a_bar():
    assert not is_terminal(io.StringIO())
    master, slave = pty.openpty()
    try:
        with os.fdopen(slave, "w", closefd=False) as stream:
            assert is_terminal(stream)
    finally:
        os.close(master)
        os.close(slave)


def _read_all(fd):
    """Everything written to the pty so far (it comes out in chunks)."""
    os.set_blocking(fd, False)
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode("utf-8")


def test_analyze_on_a_terminal_draws_the_bar_and_erases_it(monkeypatch):
    monkeypatch.setattr(progress_module, "DELAY_S", 0.0)
    master, slave = pty.openpty()
    try:
        out = io.StringIO()
        with os.fdopen(slave, "w", encoding="utf-8", closefd=False) as err:
            code = main(["analyze", str(REAL)], out=out, err=err)
        drawn = _read_all(master)
    finally:
        os.close(master)
        os.close(slave)
    assert code == 0 and "Verdict:" in out.getvalue() and "Analyzing" not in out.getvalue()
    frames = [frame for frame in drawn.split("\r") if frame.strip()]
    assert frames and all(frame.startswith("Analyzing [") for frame in frames)
    assert frames[-1].rstrip().endswith("100%  3/3 MB")  # the bar reached the end before it was erased
    assert drawn.endswith("\r")


def test_piped_stderr_gets_no_bar(tmp_path):
    builder = TraceBuilder()
    builder.gpu(0).kernel("k", 0, 10)
    path = builder.write(str(tmp_path / "h.xplane.pb"))
    result = subprocess.run(
        [sys.executable, "-m", "tb_gpu_advisor", "analyze", path],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
    )
    assert result.returncode == 0 and result.stderr == ""
