"""The assistant's tools without the MCP SDK: confinement to the logdirs, small paged answers, the SDK imported
only when the server starts."""

import os
import subprocess
import sys

import pytest

from tb_gpu_advisor.assistant import answers
from tb_gpu_advisor.assistant.advisor import Advisor, one_line
from tb_gpu_advisor.assistant.confine import AdvisorError, Logdirs
from tb_gpu_advisor.files.discovery import discover_runs
from tb_gpu_advisor.testing import TraceBuilder
from tests.data import real_trace


def _trace(path):
    builder = TraceBuilder()
    builder.gpu(0).kernel("k", 1_000, 50)
    return builder.write(str(path))


@pytest.fixture
def tree(tmp_path):
    served, outside = tmp_path / "served", tmp_path / "outside"
    _trace(served / "plugins" / "profile" / "2026_01_01_00_00_00" / "host.xplane.pb")
    secret = _trace(outside / "secret.xplane.pb")
    _trace(outside / "run" / "other.xplane.pb")
    os.symlink(secret, served / "plugins" / "profile" / "2026_01_01_00_00_00" / "linked.xplane.pb")
    os.symlink(outside / "run", served / "plugins" / "profile" / "2026_01_02_00_00_00")
    os.symlink(outside, served / "door")
    return served, outside


def test_paths_outside_the_logdirs_are_refused(tree):
    served, outside = tree
    logdirs = Logdirs([str(served)])
    assert logdirs.locate(None) == str(served) and logdirs.locate(str(served)) == str(served)
    assert logdirs.locate("plugins/profile") == os.path.join(str(served), "plugins/profile")
    for path in (
        str(outside),
        str(outside / "secret.xplane.pb"),
        "..",
        "../outside",
        "door",
        "door/secret.xplane.pb",
        "/",
        "s3://bucket/logs",
    ):
        with pytest.raises(AdvisorError, match="outside the logdirs this server was started with"):
            logdirs.locate(path)
    assert logdirs.check_host(str(served / "plugins" / "profile" / "2026_01_01_00_00_00" / "linked.xplane.pb"))
    assert logdirs.check_host(str(served / "plugins" / "profile" / "2026_01_01_00_00_00" / "host.xplane.pb")) is None
    with pytest.raises(AdvisorError, match="no such directory"):
        Logdirs([str(served / "missing")])


def test_remote_logdirs_confine_by_prefix():
    logdirs = Logdirs(["s3://bucket/logs/"])
    assert logdirs.locate("s3://bucket/logs/run1") == "s3://bucket/logs/run1"
    for path in ("s3://bucket/logs2", "s3://bucket/logs/../other", "s3://bucket", "gs://bucket/logs"):
        with pytest.raises(AdvisorError):
            logdirs.locate(path)


def test_a_confined_listing_does_not_enter_a_run_directory_linked_from_outside(tree):
    served, _ = tree
    assert [r.run for r in discover_runs(str(served))] == ["2026_01_02_00_00_00", "2026_01_01_00_00_00"]
    confined = discover_runs(str(served), confined=True)
    assert [r.run for r in confined] == ["2026_01_01_00_00_00"]
    assert {h.host: bool(h.problem) for h in confined[0].hosts} == {"host": False, "linked": True}


def test_a_linked_host_is_an_error_of_the_run_and_the_others_are_analyzed(tree):
    served, _ = tree
    report = Advisor([str(served)]).report()
    assert [h["host"] for h in report["hosts"]] == ["host"]
    assert report["errors"][0]["host"] == "linked" and "symbolic link" in report["errors"][0]["error"]


def test_pages_and_the_size_budget():
    rows, paging = answers.page(list(range(7)), 5, 5)
    assert rows == [5, 6] and paging == {"total": 7, "offset": 5, "next_offset": None}
    rows, paging = answers.page(list(range(7)), 0, 3)
    assert rows == [0, 1, 2] and paging["next_offset"] == 3
    advisor = Advisor([str(real_trace("gpu_multi_worker_v100x8.xplane.pb").parent)])
    report = advisor.report(logdir="gpu_multi_worker_v100x8.xplane.pb")
    big = {**report, "hosts": [{**report["hosts"][0], "findings": report["hosts"][0]["findings"] * 20}]}
    answer = answers.verdict_answer(big, limit=100)
    assert answers.size(answer) <= answers.MAX_ANSWER_BYTES
    shown = len(answer["findings"])
    assert 1 <= shown < 80 and answer["findings_page"]["next_offset"] == shown  # the rest is a page away
    assert "kernels" not in answer and answer["step_time_ms"] == report["hosts"][0]["summary"]["step_time_ms"]


def test_errors_are_one_short_line():
    assert one_line(AdvisorError("x: refused")) == "x: refused"
    long = one_line(AdvisorError("runs: " + ", ".join(f"run{i}" for i in range(500))))
    assert len(long) < 700 and "\n" not in long and long.endswith("(list_runs pages the runs)")
    assert one_line(KeyError("k")).startswith("internal error: KeyError")


def test_the_package_and_the_cli_do_not_import_the_sdk_and_say_how_to_get_it(tmp_path):
    code = (
        "import sys; sys.modules['mcp'] = None\n"  # as if the SDK were not installed
        "import tb_gpu_advisor.cli, tb_gpu_advisor.assistant.server\n"
        "from tb_gpu_advisor.cli import main\n"
        f"sys.exit(main(['mcp', {str(tmp_path)!r}]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        "error: the mcp command needs the Model Context Protocol SDK 2 or newer: pip "
        "install 'tb-gpu-advisor[mcp]' (or: pip install 'mcp>=2')"
    )


def test_the_file_size_limit_applies_as_in_the_cli(tree):
    served, _ = tree
    report = Advisor([str(served)], max_bytes=100).report()
    assert report["hosts"] == [] and "--max-file-mb" in report["errors"][0]["error"]
    with pytest.raises(AdvisorError, match="could be analyzed"):
        Advisor([str(served)], max_bytes=100).verdict()


def test_a_remote_logdir_is_served_and_confined_by_its_prefix(monkeypatch, tmp_path):
    import uuid

    fsspec = pytest.importorskip("fsspec")
    monkeypatch.setenv("TB_GPU_ADVISOR_CACHE", str(tmp_path / "cache"))
    fs, root = fsspec.filesystem("memory"), f"/{uuid.uuid4().hex}"
    builder = TraceBuilder()
    builder.gpu(0).kernel("k", 1_000, 50)
    for name in (
        "logs/train/plugins/profile/2026_01_01_00_00_00/w0.xplane.pb",
        "other/plugins/profile/2026_01_01_00_00_00/secret.xplane.pb",
    ):
        fs.pipe(f"{root}/{name}", builder.to_bytes())
    try:
        advisor = Advisor([f"memory://{root}/logs"])
        assert [r["run"] for r in advisor.list_runs()["runs"]] == ["train/2026_01_01_00_00_00"]
        assert advisor.verdict(run="train/2026_01_01_00_00_00")["host"] == "w0"
        for path in (f"memory://{root}/other", f"memory://{root}/logs/../other", f"memory://{root}/logsX"):
            with pytest.raises(AdvisorError):
                advisor.list_runs(path)
    finally:
        fs.rm(root, recursive=True)


def test_a_finding_with_long_evidence_is_explained_a_page_at_a_time_under_the_budget(tree):
    served, _ = tree
    report = Advisor([str(served)]).report()
    finding = {
        "id": "x.long",
        "severity": "high",
        "title": "t",
        "summary": "s",
        "estimated_speedup": 1.5,
        "speedup_kind": "bound",
        "fix_summary": "f",
        "fix": "code\n" * 2000,
        "docs": [],
        "evidence": {
            "metrics": {"a_ms": 1.0},
            "threshold": {"metric": "a_ms", "value": 1.0},
            "pointers": {
                "time_ranges_ms": [[i * 1.5, i * 1.5 + 1.0] for i in range(3000)],
                "steps": [
                    {"step": f"train step {i} of the profile", "time_ms": 10.0, "overlap_ms": 5.0} for i in range(3000)
                ],
            },
        },
    }
    report = {**report, "hosts": [{**report["hosts"][0], "findings": [finding]}]}
    answer = answers.finding_answer(report, "x.long", limit=100)
    assert answers.size(answer) <= answers.MAX_ANSWER_BYTES
    shown = len(answer["pointers"]["steps"])
    assert 1 <= shown < 100 and answer["pointers_page"]["next_offset"] == shown
    assert answer["pointers_page"]["totals"] == {"time_ranges_ms": 3000, "steps": 3000}
    assert answer["fix"].endswith("explain_finding with full_text=true]")
    assert answers.finding_answer(report, "x.long", full_text=True)["fix"] == finding["fix"]


def test_the_verdict_of_a_multi_host_run_names_the_slowest_host_and_keeps_notes_short(tmp_path):
    run = tmp_path / "logs" / "plugins" / "profile" / "2026_01_01_00_00_00"
    for host, kernel_us in (("w0", 500), ("w1", 900)):
        builder = TraceBuilder()
        python, gpu = builder.thread("python"), builder.gpu(0)
        for step in range(3):
            python.step(step, 1000 + step * 2000, 1000 + kernel_us)
            gpu.kernel("k", 1100 + step * 2000, kernel_us, launch=(python, 1050 + step * 2000, 10))
        builder.write(str(run / f"{host}.xplane.pb"))
    report = Advisor([str(tmp_path / "logs")]).report()
    report["hosts"][0]["notes"] = ["x" * 5000] + report["hosts"][0]["notes"] + ["a", "b", "c"]
    answer = answers.verdict_answer(report)
    assert answer["hosts"] == ["w0", "w1"] and answer["multi_host"]["host_count"] == 2
    assert answer["multi_host"]["slowest_host"] == "w1" and answer["multi_host"]["imbalance_pct"] > 0
    assert len(answer["notes"]) == 3 and answer["notes_total"] >= 4
    assert answer["notes"][0].endswith("more characters: tb-gpu-advisor analyze --format json]")
