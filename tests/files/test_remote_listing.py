"""Remote listing and fetching on fsspec's in-memory filesystem (the S3 server tests run the same end to end)."""

import uuid

import pytest

fsspec = pytest.importorskip("fsspec", reason="remote logdirs need fsspec (pip install -e '.[remote]')")

from tb_gpu_advisor.files.discovery import discover_runs, resolve_target  # noqa: E402
from tb_gpu_advisor.errors import ProfileError  # noqa: E402
from tb_gpu_advisor.files.remote_listing import remote_runs  # noqa: E402
from tb_gpu_advisor.pipeline import run_report  # noqa: E402
from tb_gpu_advisor.testing.builder import TraceBuilder  # noqa: E402


def _trace_bytes():
    builder = TraceBuilder()
    python, gpu = builder.thread("python"), builder.gpu(0)
    for step in range(3):
        python.step(step, 1000 + step * 1000, 900)
        gpu.kernel("k", 1100 + step * 1000, 500, launch=(python, 1050 + step * 1000, 10))
    return builder.to_bytes()


@pytest.fixture
def memory_logdir(monkeypatch, tmp_path):
    """memory://<unique>/logs with two TB runs; the cache goes to tmp_path."""
    monkeypatch.setenv("TB_GPU_ADVISOR_CACHE", str(tmp_path / "cache"))
    fs = fsspec.filesystem("memory")
    root = f"/{uuid.uuid4().hex}"
    data = _trace_bytes()
    for name in (
        "train/plugins/profile/2026_01_01_00_00_00/w0.xplane.pb",
        "train/plugins/profile/2026_01_02_00_00_00/w0.xplane.pb",
        "train/plugins/profile/2026_01_02_00_00_00/w1.xplane.pb",
        "eval/sub/plugins/profile/2026_01_01_12_00_00/w0.xplane.pb",
        "plugins/profile/2025_12_31_00_00_00/root.xplane.pb",
        "train/events.out.tfevents.1",
        "train/plugins/profile/2026_01_02_00_00_00/notes.txt",
    ):
        fs.pipe(f"{root}/logs/{name}", data)
    fs.pipe(f"{root}/empty/plugins/profile/2026_01_01_00_00_00/w0.xplane.pb", b"")
    yield f"memory://{root}"
    fs.rm(root, recursive=True)


def test_runs_are_named_and_ordered_like_the_profile_tab(memory_logdir):
    runs = remote_runs(f"{memory_logdir}/logs")
    assert [r.run for r in runs] == [
        "train/2026_01_02_00_00_00",
        "eval/sub/2026_01_01_12_00_00",
        "train/2026_01_01_00_00_00",
        "2025_12_31_00_00_00",
    ]
    assert [h.host for h in runs[0].hosts] == ["w0", "w1"]
    assert runs[0].hosts[1].path == f"{memory_logdir}/logs/train/plugins/profile/2026_01_02_00_00_00/w1.xplane.pb"
    assert discover_runs(f"{memory_logdir}/logs") == runs


def test_resolve_a_logdir_a_run_directory_and_a_file(memory_logdir):
    logs = f"{memory_logdir}/logs"
    run, files = resolve_target(logs)
    assert run == "train/2026_01_02_00_00_00" and [f.host for f in files] == ["w0", "w1"]
    run, files = resolve_target(logs, run="eval/sub/2026_01_01_12_00_00")
    assert [f.path for f in files] == [f"{logs}/eval/sub/plugins/profile/2026_01_01_12_00_00/w0.xplane.pb"]
    run, files = resolve_target(f"{logs}/train/plugins/profile/2026_01_02_00_00_00", host="w1")
    assert run == "train/2026_01_02_00_00_00" and [f.host for f in files] == ["w1"]  # named as in its logdir
    single = f"{logs}/train/plugins/profile/2026_01_02_00_00_00/w1.xplane.pb"
    assert resolve_target(single) == (None, [files[0].__class__(host="w1", path=single)])


@pytest.mark.parametrize(
    "suffix,kwargs,message",
    [
        ("/nothing", {}, "no such file or directory"),
        ("/logs", {"run": "nope"}, "no run 'nope'; runs: train/2026_01_02_00_00_00, eval/sub/"),
        ("/logs", {"host": "w9"}, "no host 'w9'; hosts: w0, w1"),
        ("/logs/train/plugins/profile/2026_01_02_00_00_00", {"run": "x"}, "is a run directory"),
        ("/logs/train/events.out.tfevents.1", {"run": "x"}, "--run applies to a logdir"),
        ("/logs/train/plugins/profile", {}, "no profiles found"),
    ],
)
def test_bad_targets_are_one_line_errors(memory_logdir, suffix, kwargs, message):
    with pytest.raises(ProfileError) as error:
        resolve_target(memory_logdir + suffix, **kwargs)
    assert str(error.value).startswith(memory_logdir)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_only_the_chosen_host_is_downloaded_and_reports_name_the_url(memory_logdir, tmp_path):
    run, files = resolve_target(f"{memory_logdir}/logs", host="w1")
    report = run_report(run, files)
    assert report["errors"] == [] and report["hosts"][0]["file"] == files[0].path
    cached = [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    assert [p.name for p in cached] == ["w1.xplane.pb"]


def test_bad_remote_files_are_errors_naming_the_url(memory_logdir):
    run, files = resolve_target(f"{memory_logdir}/empty")
    report = run_report(run, files)
    assert report["hosts"] == []
    assert report["errors"] == [
        {"host": "w0", "file": files[0].path, "error": "file is empty (the profiler wrote nothing)"}
    ]
    run, files = resolve_target(f"{memory_logdir}/logs")
    report = run_report(run, files, max_bytes=10)
    assert [e["error"] for e in report["errors"]] == [
        f"file is {_size(f.path):,} bytes, above the 10 bytes limit (raise it with --max-file-mb)" for f in files
    ]


def _size(url):
    fs, path = fsspec.core.url_to_fs(url)
    return fs.size(path)


def test_corrupt_remote_file_error_names_the_url(memory_logdir):
    url = f"{memory_logdir}/bad/plugins/profile/2026_01_01_00_00_00/w0.xplane.pb"
    fsspec.filesystem("memory").pipe(url[len("memory://") :], b"\xff\xff\xff garbage")
    report = run_report(*resolve_target(url))
    assert report["errors"][0]["file"] == url
    assert report["errors"][0]["error"].startswith("not a valid XSpace protobuf")


def test_pytorch_runs_are_listed_and_analyzed_from_object_storage(monkeypatch, tmp_path):
    from tests.readers.kineto.real import real_kineto

    monkeypatch.setenv("TB_GPU_ADVISOR_CACHE", str(tmp_path / "cache"))
    fs = fsspec.filesystem("memory")
    root = f"/{uuid.uuid4().hex}"
    data = real_kineto("mi250_minitoy_train").read_bytes()
    fs.pipe(f"{root}/logs/toy/node0.1700000000000.pt.trace.json.gz", data)
    fs.pipe(f"{root}/logs/toy/node1.1700000000004.pt.trace.json.gz", data)
    fs.pipe(f"{root}/logs/train/plugins/profile/2026_01_01_00_00_00/w0.xplane.pb", _trace_bytes())
    try:
        runs = {run.run: run for run in remote_runs(f"memory://{root}/logs")}
        assert sorted(runs) == ["toy", "train/2026_01_01_00_00_00"]
        assert [h.host for h in runs["toy"].hosts] == ["node0", "node1"]
        report = run_report("toy", runs["toy"].hosts, executor="inline")
        assert [host["trace_format"] for host in report["hosts"]] == ["kineto", "kineto"]
        assert report["hosts"][0]["file"] == f"memory://{root}/logs/toy/node0.1700000000000.pt.trace.json.gz"
    finally:
        fs.rm(root, recursive=True)
