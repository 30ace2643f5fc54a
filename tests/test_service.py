"""AnalysisService: the same reports as run_report, computed once per file version, off the caller's thread."""

import json
import threading

import pytest

from tb_gpu_advisor import service as service_module
from tb_gpu_advisor.discovery import HostFile
from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.report.run_report import run_report
from tb_gpu_advisor.service import AnalysisService
from tb_gpu_advisor.testing import TraceBuilder


def _trace(path, step_us):
    builder = TraceBuilder()
    python = builder.thread("python")
    for step in range(3):
        python.step(step, step * step_us, step_us)
        builder.gpu(0).kernel("k", step * step_us + 10, step_us // 2, launch=(python, step * step_us + 2, 3))
    return builder.write(str(path))


@pytest.fixture
def hosts(tmp_path):
    files = [HostFile("a", _trace(tmp_path / "a.xplane.pb", 100)), HostFile("b", _trace(tmp_path / "b.xplane.pb", 130)),
             HostFile("missing", str(tmp_path / "missing.xplane.pb"))]
    return files


@pytest.fixture
def counted(monkeypatch):
    calls = []
    real = service_module.analyze_host

    def counting(host, path, max_bytes=None, progress=None):
        calls.append(path)
        return real(host, path, max_bytes, progress=progress)

    monkeypatch.setattr(service_module, "analyze_host", counting)
    return calls


def test_same_report_as_run_report_and_cached(hosts, counted):
    svc = AnalysisService(max_workers=2)
    try:
        report = svc.get_report("run1", hosts, timeout=60)
        assert json.dumps(report, sort_keys=True) == json.dumps(run_report("run1", hosts, executor="inline"),
                                                                sort_keys=True)
        assert len(counted) == 3
        report["hosts"][0]["summary"] = "changed by a caller"
        again = svc.get_report("run1", hosts, timeout=60)
        assert len(counted) == 3 and again["hosts"][0]["summary"] != "changed by a caller"
        status = svc.status("run1", hosts)
        assert status["state"] == "done" and status["progress"] == 1.0
        assert [h["state"] for h in status["hosts"]] == ["done", "done", "error"]
        assert "no such file" in status["hosts"][2]["error"]
        with pytest.raises(ProfileError, match="missing.xplane.pb: no such file"):
            svc.get_host_report(hosts[2], timeout=60)
    finally:
        svc.shutdown(wait=True)


def test_in_flight_requests_share_one_analysis(hosts, monkeypatch):
    release, started = threading.Event(), threading.Event()
    real = service_module.analyze_host
    calls = []

    def slow(host, path, max_bytes=None, progress=None):
        calls.append(path)
        progress(1, 2)
        started.set()
        release.wait(30)
        return real(host, path, max_bytes, progress=progress)

    monkeypatch.setattr(service_module, "analyze_host", slow)
    svc = AnalysisService(max_workers=1)
    try:
        first, second = svc.submit_host(hosts[0]), svc.submit_host(hosts[0])
        assert first is second
        assert started.wait(30)
        assert svc.host_status(hosts[0]) == {"state": "running", "progress": 0.45, "error": None,
                                             "elapsed_s": svc.host_status(hosts[0])["elapsed_s"]}
        assert svc.host_status(hosts[1])["state"] == "idle"
        pending = svc.submit("run", hosts[:2])
        assert not pending.done() and svc.status("run", hosts[:2])["state"] == "running"
        release.set()
        assert len(pending.result(60)["hosts"]) == 2
        assert calls == [hosts[0].path, hosts[1].path]
    finally:
        release.set()
        svc.shutdown(wait=True)


def test_a_changed_file_is_analyzed_again_and_old_entries_are_dropped(hosts, counted, tmp_path):
    svc = AnalysisService(max_entries=2, max_workers=1)
    try:
        svc.get_report("r", hosts[:2], timeout=60)
        _trace(hosts[0].path, 250)  # same path, new content: a new version
        report = svc.get_host_report(hosts[0], timeout=60)
        assert report["summary"]["step_time_ms"]["mean"] == 0.25 and len(counted) == 3
        svc.get_host_report(hosts[0], timeout=60)
        assert len(counted) == 3
        third = HostFile("c", _trace(tmp_path / "c.xplane.pb", 90))
        svc.get_host_report(third, timeout=60)
        # two entries at most: the least recently used (b) is gone, the others stay cached
        assert [svc.host_status(h)["state"] for h in (hosts[0], hosts[1], third)] == ["done", "idle", "done"]
    finally:
        svc.shutdown(wait=True)


def test_a_crashing_analysis_becomes_an_error_entry(hosts, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(service_module, "analyze_host", broken)
    svc = AnalysisService()
    try:
        report = svc.get_report("r", hosts[:1], timeout=60)
        assert report["hosts"] == [] and report["errors"][0]["error"] == "internal error: RuntimeError: boom"
    finally:
        svc.shutdown(wait=True)


def test_fresh_processes_give_the_same_report(hosts):
    svc = AnalysisService(processes=True)
    try:
        assert svc.get_report("r", hosts, timeout=120) == run_report("r", hosts, executor="inline")
    finally:
        svc.shutdown(wait=True)
