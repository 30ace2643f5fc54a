"""Odd entries in a run (directory, symlink loop, dangling symlink, FIFO, device) get one line saying what they
are, are never opened, and never hide the good host beside them; a file that changes while read is caught."""

import io
import os
import threading

import pytest

from tb_gpu_advisor import cli
from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.files.regular import FileChanged, kind_problem, open_regular
from tb_gpu_advisor.testing import TraceBuilder
from tb_gpu_advisor.readers.xplane.reader import read_space

ODD = {
    "dir": ("is a directory", lambda path: os.mkdir(path)),
    "loop": ("symbolic link loop", lambda path: os.symlink(os.path.basename(path), path)),
    "dangling": ("dangling symbolic link", lambda path: os.symlink("/nonexistent/target", path)),
    "fifo": ("named pipe (FIFO)", lambda path: os.mkfifo(path)),
    "device": ("symbolic link to a character device", lambda path: os.symlink("/dev/zero", path)),
}


def _trace(kernel="k"):
    builder = TraceBuilder()
    builder.gpu(0).kernel(kernel, 1_000, 50)
    return builder


@pytest.fixture
def odd_run(tmp_path):
    run = tmp_path / "logdir" / "plugins" / "profile" / "2026_01_01_00_00_00"
    _trace().write(str(run / "good.xplane.pb"))
    for name, (_, make) in ODD.items():
        make(str(run / f"{name}.xplane.pb"))
    return tmp_path / "logdir", run


def _run_cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["analyze", *map(str, argv), "--format", "json"], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_each_odd_entry_gets_one_line_and_the_good_host_is_reported(odd_run):
    logdir, run = odd_run
    code, out, err = _run_cli(logdir)
    assert code == 0 and '"host": "good"' in out
    lines = err.splitlines()
    assert len(lines) == len(ODD)
    for name, (what, _) in ODD.items():
        assert any(line.startswith(f"error: {run / name}.xplane.pb: ") and what in line for line in lines), name


@pytest.mark.parametrize("name", sorted(ODD))
def test_given_directly_it_says_what_it_is(odd_run, name):
    _, run = odd_run
    code, _, err = _run_cli(run / f"{name}.xplane.pb")
    assert code == 2 and ODD[name][0] in err and len(err.splitlines()) == 1


def test_a_fifo_is_never_opened(odd_run):
    _, run = odd_run
    fifo = str(run / "fifo.xplane.pb")
    done = threading.Event()

    def analyze():
        with pytest.raises(ProfileError, match="FIFO"):
            read_space(fifo)
        done.set()

    threading.Thread(target=analyze, daemon=True).start()
    assert done.wait(10), "reading a FIFO blocked"
    assert kind_problem(fifo).startswith("is a named pipe")


def test_a_regular_file_opens_with_its_identity(tmp_path):
    path = _trace().write(str(tmp_path / "h.xplane.pb"))
    handle, identity = open_regular(path)
    with handle:
        assert identity.size == os.path.getsize(path) and handle.read(1)


def test_a_file_replaced_while_read_is_read_again_from_the_new_version(tmp_path, monkeypatch):
    path = tmp_path / "h.xplane.pb"
    _trace("old_kernel").write(str(path))
    replacement = tmp_path / "new.xplane.pb"
    _trace("new_kernel_with_a_longer_name").write(str(replacement))
    import tb_gpu_advisor.readers.load as build

    real, calls = build.build_model, []

    def replace_then_build(space, **options):
        calls.append(space)
        if len(calls) == 1:
            os.replace(replacement, path)  # atomically, after the planes were listed and before they are read
        return real(space, **options)

    monkeypatch.setattr(build, "build_model", replace_then_build)
    model = load_model(str(path))
    assert len(calls) == 2
    assert model.gpus[0].activity.names == ("new_kernel_with_a_longer_name",)


def test_a_file_that_keeps_changing_fails_clearly(tmp_path, monkeypatch):
    path = tmp_path / "h.xplane.pb"
    _trace().write(str(path))
    import tb_gpu_advisor.readers.load as build

    real = build.build_model

    def touch_then_build(space, **options):
        status = os.stat(path)
        os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns + 1_000))
        return real(space, **options)

    monkeypatch.setattr(build, "build_model", touch_then_build)
    with pytest.raises(FileChanged, match="changed while it was being read"):
        load_model(str(path))


def test_a_file_replaced_after_its_first_plane_was_modelled_is_never_a_mix(tmp_path):
    path = tmp_path / "h.xplane.pb"
    _trace("old_kernel").write(str(path))
    replacement = tmp_path / "new.xplane.pb"
    new = TraceBuilder()
    new.thread("python").step(0, 0, 10_000)
    new.gpu(0).kernel("new_kernel", 1_000, 50)
    new.gpu(1).kernel("new_kernel_on_gpu1", 1_000, 50)
    new.write(str(replacement))
    replaced = []

    def replace_once(done, total):
        if not replaced:
            replaced.append(done)
            os.replace(replacement, path)  # mid-analysis, as a profiler rewriting its output would

    model = load_model(str(path), progress=replace_once)
    assert replaced and [gpu.activity.names for gpu in model.gpus] == [("new_kernel",), ("new_kernel_on_gpu1",)]


@pytest.fixture
def odd_kineto_run(tmp_path):
    from tb_gpu_advisor.testing.kineto_trace import kernel, trace_text

    run = tmp_path / "logdir" / "torch"
    run.mkdir(parents=True)
    (run / "good.1.pt.trace.json").write_text(trace_text([kernel("k", 1_700_000_000_000_000, 10, 1)]))
    for name, (_, make) in ODD.items():
        make(str(run / f"{name}.1.pt.trace.json"))
    return tmp_path / "logdir", run


def _bounded(function, seconds=20):
    """function()'s result, failing the test when it blocks (a FIFO opened for reading waits for a writer)."""
    found = []
    thread = threading.Thread(target=lambda: found.append(function()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert found, "blocked"
    return found[0]


def test_odd_kineto_entries_get_one_line_each_and_the_good_host_is_reported(odd_kineto_run):
    logdir, run = odd_kineto_run
    code, out, err = _bounded(lambda: _run_cli(logdir))
    assert code == 0 and '"host": "good"' in out
    lines = err.splitlines()
    assert len(lines) == len(ODD) - 1  # a directory named *.pt.trace.json is not a host
    for name, (what, _) in ODD.items():
        if name != "dir":
            assert any(line.startswith(f"error: {run / name}.1.pt.trace.json: ") and what in line for line in lines), (
                name
            )


@pytest.mark.parametrize("name", sorted(ODD))
def test_a_kineto_entry_given_directly_says_what_it_is(odd_kineto_run, name):
    _, run = odd_kineto_run
    code, _, err = _bounded(lambda: _run_cli(run / f"{name}.1.pt.trace.json"))
    assert code == 2 and ODD[name][0] in err and len(err.splitlines()) == 1


def test_a_fifo_of_any_name_is_never_opened_to_sniff_its_format(tmp_path):
    fifo = tmp_path / "copy_of_a_trace"
    os.mkfifo(fifo)
    code, _, err = _bounded(lambda: _run_cli(fifo))
    assert code == 2 and "named pipe (FIFO)" in err
