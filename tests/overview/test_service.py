"""The overview service: rows fill in as analyses finish, a few at a time; summaries persist, so a restart
analyzes nothing that has not changed; a changed file is analyzed again; a bad one is a row's error."""

import os
import time

import pytest

import tb_gpu_advisor.service as service_module
from tb_gpu_advisor.discovery import discover_runs
from tb_gpu_advisor.overview.service import OverviewService
from tb_gpu_advisor.overview.store import SummaryStore
from tb_gpu_advisor.service import AnalysisService
from tb_gpu_advisor.testing.pairs import write_input_pair

WAIT_S = 120


@pytest.fixture
def counted(monkeypatch):
    """Counts the analyses the service runs."""
    calls = []
    real = service_module.analyze_host_file

    def counting(path, **options):
        calls.append(path)
        return real(path, **options)

    monkeypatch.setattr(service_module, "analyze_host_file", counting)
    return calls


def _logdir(tmp_path):
    for index in range(4):
        write_input_pair(str(tmp_path / "logs" / f"2026_01_0{index + 1}_00_00_00"), fixed=index % 2 == 1,
                         seed=index, run="train")
    (tmp_path / "logs" / "bad" / "plugins" / "profile" / "2026_01_09_00_00_00").mkdir(parents=True)
    (tmp_path / "logs" / "bad" / "plugins" / "profile" / "2026_01_09_00_00_00" / "h.xplane.pb").write_bytes(b"junk")
    return str(tmp_path / "logs")


def _until_done(overview, logdir):
    deadline = time.monotonic() + WAIT_S
    while True:
        answer = overview.overview(discover_runs(logdir))
        if answer["pending"] == 0 or time.monotonic() > deadline:
            return answer
        time.sleep(0.1)


def test_rows_fill_in_and_a_restart_analyzes_nothing_unchanged(tmp_path, counted):
    logdir = _logdir(tmp_path)
    store_root = str(tmp_path / "summaries")
    analysis = AnalysisService(isolated=False)
    try:
        overview = OverviewService(analysis, SummaryStore(store_root), in_flight=1)
        first = overview.overview(discover_runs(logdir))
        assert first["total"] == 5 and first["done"] == 0 and first["pending"] >= 4
        assert {row["state"] for row in first["runs"]} <= {"queued", "running", "error"}
        done = _until_done(overview, logdir)
    finally:
        analysis.shutdown()
    assert (done["done"], done["errors"], done["pending"]) == (4, 1, 0)
    assert len(counted) == 5  # each file once
    bad = next(row for row in done["runs"] if row["run"].startswith("bad/"))
    assert bad["state"] == "error" and "not a valid XSpace" in bad["error"]
    names = [row["run"] for row in done["runs"]]
    assert all(row["summary"]["verdict"] for row in done["runs"] if row["state"] == "done"), names

    restarted = AnalysisService(isolated=False)
    try:
        answer = OverviewService(restarted, SummaryStore(store_root)).overview(discover_runs(logdir))
        assert (answer["done"], answer["errors"], answer["pending"]) == (4, 1, 0)
        assert len(counted) == 5  # nothing analyzed again
        changed = next(row for row in answer["runs"] if row["state"] == "done")
        path = next(h.path for r in discover_runs(logdir) if r.run == changed["run"] for h in r.hosts)
        stat = os.stat(path)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # a new version of that file
        again = _until_done(OverviewService(restarted, SummaryStore(store_root)), logdir)
        assert again["done"] == 4 and len(counted) == 6
    finally:
        restarted.shutdown()
