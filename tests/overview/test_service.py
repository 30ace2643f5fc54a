"""The overview service: rows fill in as analyses finish, a few at a time; summaries persist, so a restart
analyzes nothing that has not changed; a changed file is analyzed again; a bad one is a row's error."""

import os
import time

import pytest

import tb_gpu_advisor.service as service_module
from tb_gpu_advisor.files.discovery import discover_runs
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
        write_input_pair(
            str(tmp_path / "logs" / f"2026_01_0{index + 1}_00_00_00"), fixed=index % 2 == 1, seed=index, run="train"
        )
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
    assert all(row["series"] == row["run"].rsplit("/", 1)[0] for row in done["runs"])  # the TensorBoard run
    assert all(row["captured_at"] for row in done["runs"])  # the profile runs' names are capture times

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


class _GatedStore(SummaryStore):
    """A store whose lookups past the first `free` block until `gate` is set (a slow disk)."""

    def __init__(self, root, free, gate):
        super().__init__(root)
        self.free, self.gate, self.lookups = free, gate, 0

    def get(self, path, version):
        self.lookups += 1
        if self.lookups > self.free:
            assert self.gate.wait(WAIT_S)
        return super().get(path, version)


def _many_runs(tmp_path, count):
    from tb_gpu_advisor.files.runs import HostFile, ProfileRun
    from tb_gpu_advisor.testing.quickstart import write_quickstart

    path = write_quickstart(str(tmp_path / "one"))
    return [
        ProfileRun(
            run=f"series/2026_01_01_00_00_{index:04d}", path=os.path.dirname(path), hosts=(HostFile("localhost", path),)
        )
        for index in range(count)
    ]


def test_the_overview_answers_before_its_background_scan_completes(tmp_path):
    import threading

    listed, gate = threading.Event(), threading.Event()
    runs = _many_runs(tmp_path, 500)

    def list_runs():
        assert listed.wait(WAIT_S)
        return runs

    analysis = AnalysisService(isolated=False)
    overview = OverviewService(analysis, _GatedStore(str(tmp_path / "s"), 300, gate), in_flight=1, list_runs=list_runs)
    try:
        started = time.monotonic()
        first = overview.overview()  # the listing itself has not finished
        assert time.monotonic() - started < 5
        assert first["runs"] == [] and first["scanning"] == {"done": 0, "total": None}
        listed.set()
        deadline = time.monotonic() + WAIT_S
        while overview.overview()["scanning"]["done"] < 200 and time.monotonic() < deadline:
            time.sleep(0.05)
        partial = overview.overview()  # 300 rows read, the next lookup blocks
        assert partial["scanning"]["total"] == 500 and 200 <= partial["scanning"]["done"] < 500
        assert len(partial["runs"]) == partial["scanning"]["done"] and partial["total"] == 500
        assert partial["pending"] == 500 - partial["done"] - partial["errors"]
        gate.set()
        while overview.overview()["scanning"] is not None and time.monotonic() < deadline:
            time.sleep(0.05)
        complete = overview.overview()
        assert complete["scanning"] is None and complete["total"] == 500 and len(complete["runs"]) == 500
    finally:
        gate.set()
        listed.set()
        overview.close()
        analysis.shutdown()
