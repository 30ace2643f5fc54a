import os

import pytest

from tb_gpu_advisor.files.discovery import discover_runs, resolve_target
from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.testing import TraceBuilder


def _write(logdir, run, timestamp, host="localhost"):
    builder = TraceBuilder()
    builder.gpu(0).kernel("k", 0, 10)
    return builder.write_run(str(logdir), run=run, timestamp=timestamp, host=host)


def test_run_ids_match_the_profile_tab(tmp_path):
    _write(tmp_path, "train", "2026_01_01_00_00_00")
    _write(tmp_path, "train", "2026_01_02_00_00_00", host="worker1")
    _write(tmp_path, "train", "2026_01_02_00_00_00", host="worker0")
    _write(tmp_path, "exp/a", "2025_12_31_00_00_00")
    # plugins/profile at the logdir root: the run id is just the timestamp
    root = TraceBuilder()
    root.gpu(0).kernel("k", 0, 10)
    root.write(os.path.join(tmp_path, "plugins", "profile", "2024_06_01_00_00_00", "h.xplane.pb"))
    runs = discover_runs(tmp_path)
    assert [r.run for r in runs] == [
        "train/2026_01_02_00_00_00",
        "train/2026_01_01_00_00_00",
        "exp/a/2025_12_31_00_00_00",
        "2024_06_01_00_00_00",
    ]
    assert [h.host for h in runs[0].hosts] == ["worker0", "worker1"]


def test_resolve_logdir_run_dir_and_file(tmp_path):
    old = _write(tmp_path, "train", "2026_01_01_00_00_00")
    new = _write(tmp_path, "train", "2026_01_02_00_00_00")
    run, files = resolve_target(tmp_path)
    assert run == "train/2026_01_02_00_00_00" and [f.path for f in files] == [new]
    run, files = resolve_target(tmp_path, run="train/2026_01_01_00_00_00")
    assert [f.path for f in files] == [old]
    run, files = resolve_target(os.path.dirname(old))
    assert run == "train/2026_01_01_00_00_00" and [f.host for f in files] == ["localhost"]
    run, files = resolve_target(old)
    assert run is None and [f.host for f in files] == ["localhost"]


def test_unknown_run_or_host_lists_the_choices(tmp_path):
    _write(tmp_path, "train", "2026_01_01_00_00_00")
    with pytest.raises(ProfileError, match="no run 'nope'; runs: train/2026_01_01_00_00_00"):
        resolve_target(tmp_path, run="nope")
    with pytest.raises(ProfileError, match="no host 'x'; hosts: localhost"):
        resolve_target(tmp_path, host="x")


def test_empty_logdir_explains_the_expected_layout(tmp_path):
    with pytest.raises(ProfileError, match="no profiles found"):
        resolve_target(tmp_path)
    with pytest.raises(ProfileError, match="no such file or directory"):
        resolve_target(tmp_path / "missing")


def test_links_out_of_the_logdir_are_refused_unless_followed(tmp_path):
    from tb_gpu_advisor.files.discovery import discover_runs
    from tb_gpu_advisor.files.local_listing import OUTSIDE_LOGDIR
    from tb_gpu_advisor.testing import TraceBuilder

    outside = tmp_path / "elsewhere"
    builder = TraceBuilder()
    builder.gpu(0).kernel("k", 1_000, 50)
    secret = builder.write(str(outside / "secret.xplane.pb"))
    run = tmp_path / "logdir" / "plugins" / "profile"
    builder.write(str(run / "2026_01_01_00_00_00" / "inside.xplane.pb"))
    os.symlink(secret, run / "2026_01_01_00_00_00" / "linked.xplane.pb")
    os.symlink(outside, run / "2026_01_02_00_00_00")  # a whole run directory outside
    logdir = str(tmp_path / "logdir")
    refused = {(r.run, h.host): h.problem for r in discover_runs(logdir, follow_symlinks=False) for h in r.hosts}
    assert refused == {
        ("2026_01_02_00_00_00", "secret"): OUTSIDE_LOGDIR,
        ("2026_01_01_00_00_00", "inside"): None,
        ("2026_01_01_00_00_00", "linked"): OUTSIDE_LOGDIR,
    }
    followed = [h.problem for r in discover_runs(logdir) for h in r.hosts]
    assert followed == [None, None, None]


def _kineto(directory, name, ts=1_700_000_000_000_000):
    from tb_gpu_advisor.testing.kineto_trace import kernel, trace_text

    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, name)
    with open(path, "w") as handle:
        handle.write(trace_text([kernel("k", ts, 10, 1)]))
    return path


def test_kineto_links_out_of_the_logdir_are_refused_unless_followed(tmp_path):
    from tb_gpu_advisor.files.local_listing import OUTSIDE_LOGDIR

    secret = _kineto(tmp_path / "elsewhere", "secret.1.pt.trace.json")
    run = tmp_path / "logdir" / "torch"
    _kineto(run, "inside.1.pt.trace.json")
    os.symlink(secret, run / "linked.1.pt.trace.json")
    os.symlink(_kineto(run, "real.1.pt.trace.json"), run / "alias.1.pt.trace.json")  # a link inside: fine
    logdir = str(tmp_path / "logdir")
    refused = {h.host: h.problem for r in discover_runs(logdir, follow_symlinks=False) for h in r.hosts}
    assert refused == {"inside": None, "linked": OUTSIDE_LOGDIR, "alias": None, "real": None}
    assert [h.problem for r in discover_runs(logdir) for h in r.hosts] == [None] * 4


def test_two_runs_listed_under_one_id_get_unique_stable_ids(tmp_path):
    _write(tmp_path, "a", "2026_01_01_00_00_00")  # XPlane run a/2026_01_01_00_00_00
    _kineto(tmp_path / "a" / "2026_01_01_00_00_00", "w.1.pt.trace.json")  # a Kineto directory of the same id
    _kineto(tmp_path / "b", "w.1700000000000.pt.trace.json")
    _kineto(tmp_path / "b", "w.1700000001000.pt.trace.json")  # two spans: runs b/1700000000000, b/1700000001000
    _kineto(tmp_path / "b" / "1700000000000", "v.1.pt.trace.json")  # a directory named like one of them
    runs = discover_runs(tmp_path)
    ids = [r.run for r in runs]
    assert len(ids) == len(set(ids)) == 5
    assert {r.run: os.path.relpath(r.path, tmp_path) for r in runs if r.run.startswith("a/")} == {
        "a/2026_01_01_00_00_00": os.path.join("a", "plugins", "profile", "2026_01_01_00_00_00"),  # the Profile tab's
        "a/2026_01_01_00_00_00 (2)": os.path.join("a", "2026_01_01_00_00_00"),
    }
    assert {r.run for r in runs if r.run.startswith("b/")} == {
        "b/1700000000000",
        "b/1700000000000 (2)",
        "b/1700000001000",
    }
    assert [r.run for r in discover_runs(tmp_path)] == ids  # the same at every listing


def test_the_newest_kineto_run_is_the_latest_capture_not_the_last_name(tmp_path):
    _kineto(tmp_path / "aaa", "w.1800000000000.pt.trace.json")  # named by tensorboard_trace_handler: 2027
    _kineto(tmp_path / "zzz", "w.1700000000000.pt.trace.json")  # 2023
    assert resolve_target(tmp_path)[0] == "aaa"
    _kineto(tmp_path / "mmm", "w.1900000000000000000.pt.trace.json")  # newer PyTorch: nanoseconds, 2030
    assert resolve_target(tmp_path)[0] == "mmm"
    other = tmp_path / "other"
    _kineto(other / "new_b", "w.pt.trace.json")  # no timestamp in the name: the file's modification time
    _kineto(other / "old_z", "w.pt.trace.json")
    os.utime(other / "old_z" / "w.pt.trace.json", (1_000_000_000, 1_000_000_000))
    assert [r.run for r in discover_runs(other)] == ["new_b", "old_z"]


def test_a_pytorch_trace_linked_from_outside_the_logdir_is_refused_unless_followed(tmp_path):
    import shutil

    from tb_gpu_advisor.files.discovery import discover_runs
    from tb_gpu_advisor.files.local_listing import OUTSIDE_LOGDIR
    from tests.data import real_trace

    outside = tmp_path / "elsewhere" / "rank0.1700000000000.pt.trace.json.gz"
    outside.parent.mkdir()
    shutil.copy(real_trace("kineto/a100_alexnet_sync.pt.trace.json.gz"), outside)
    (tmp_path / "logdir" / "torch").mkdir(parents=True)
    os.symlink(outside, tmp_path / "logdir" / "torch" / outside.name)
    logdir = str(tmp_path / "logdir")
    assert [h.problem for r in discover_runs(logdir, follow_symlinks=False) for h in r.hosts] == [OUTSIDE_LOGDIR]
    assert [h.problem for r in discover_runs(logdir) for h in r.hosts] == [None]


def test_a_series_is_a_run_directory(tmp_path):
    """The overview compares a run with the previous one of its series: an XPlane run's TensorBoard run, a
    PyTorch run's directory. Two PyTorch directories at the root are two series, not one."""
    _write(tmp_path, "train", "2026_01_01_00_00_00")
    _write(tmp_path, "train", "2026_01_02_00_00_00")
    _write(tmp_path, "", "2026_01_03_00_00_00")  # plugins/profile at the root: series ""
    _kineto(tmp_path / "resnet", "w.1700000000000.pt.trace.json")
    _kineto(tmp_path / "vit", "w.1800000000000.pt.trace.json")
    _kineto(tmp_path / "bert", "w.1700000000000.pt.trace.json")
    _kineto(tmp_path / "bert", "w.1700000005000.pt.trace.json")  # two spans: two profiles of one series
    series = {r.run: r.series for r in discover_runs(tmp_path)}
    assert series == {
        "train/2026_01_01_00_00_00": "train",
        "train/2026_01_02_00_00_00": "train",
        "2026_01_03_00_00_00": "",
        "resnet": "resnet",
        "vit": "vit",
        "bert/1700000000000": "bert",
        "bert/1700000005000": "bert",
    }
