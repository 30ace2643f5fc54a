"""AnalysisService: one computation per file version, cached errors, bounded cache, status, no disk writes."""

import os
import threading

import pytest

import tb_gpu_advisor.service as service_module
from tb_gpu_advisor.profile_files import HostFile
from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.model.build import report_progress
from tb_gpu_advisor.pipeline import analyze_host_file
from tb_gpu_advisor.service import AnalysisService
from tb_gpu_advisor.testing.builder import TraceBuilder
from tb_gpu_advisor.testing.quickstart import write_quickstart


@pytest.fixture
def service():
    instance = AnalysisService(max_entries=3)
    yield instance
    instance.shutdown()


@pytest.fixture
def quickstart(tmp_path):
    return HostFile("localhost", write_quickstart(str(tmp_path)))


def _trace(path, kernel):
    builder = TraceBuilder()
    builder.gpu(0).kernel(kernel, 1000, 50)
    return HostFile(os.path.basename(path).split(".")[0], builder.write(path))


def test_the_report_is_the_host_report_with_the_host_name(service, quickstart):
    report = service.get_host_report("run", quickstart, timeout=30)
    expected = analyze_host_file(quickstart.path)
    expected["host"] = "localhost"
    assert report == expected


def test_a_result_is_computed_once_and_then_cached(service, quickstart, monkeypatch):
    calls = []
    real = service_module.analyze_host_file
    monkeypatch.setattr(service_module, "analyze_host_file", lambda p, max_bytes=None: calls.append(p) or real(p))
    first = service.get_host_report("run", quickstart, timeout=30)
    assert service.submit("run", quickstart).result(30) is first
    assert len(calls) == 1


def test_concurrent_submits_share_one_future(service, quickstart, monkeypatch):
    release = threading.Event()
    calls = []
    real = service_module.analyze_host_file

    def slow(path, max_bytes=None):
        calls.append(path)
        report_progress(1, 4)  # as load_model does after each plane
        release.wait(30)
        return real(path)

    monkeypatch.setattr(service_module, "analyze_host_file", slow)
    futures = [service.submit("run", quickstart) for _ in range(5)]
    assert len({id(f) for f in futures}) == 1
    assert service.status(quickstart)["state"] == "running"
    assert service.status(quickstart)["progress"] == 0.225  # a quarter of the bytes: 0.9 x 1/4
    release.set()
    assert futures[0].result(30)["host"] == "localhost"
    assert len(calls) == 1
    assert service.status(quickstart) == {"state": "done", "error": None, "elapsed_s": None}


def test_a_changed_file_is_a_new_version(service, tmp_path):
    path = str(tmp_path / "h.xplane.pb")
    first = service.get_host_report("run", _trace(path, "first_kernel"), timeout=30)
    stat = os.stat(path)
    host_file = _trace(path, "second_kernel_with_a_longer_name")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    second = service.get_host_report("run", host_file, timeout=30)
    assert [k["name"] for k in first["kernels"]] == ["first_kernel"]
    assert [k["name"] for k in second["kernels"]] == ["second_kernel_with_a_longer_name"]


def test_a_corrupt_file_raises_and_its_error_is_cached(service, tmp_path, monkeypatch):
    path = tmp_path / "bad.xplane.pb"
    path.write_bytes(b"\xff\xff\xff\xff not protobuf")
    host_file = HostFile("bad", str(path))
    assert service.status(host_file)["state"] == "idle"
    with pytest.raises(ProfileError) as raised:
        service.get_host_report("run", host_file, timeout=30)
    assert raised.value.path == str(path) and "XSpace" in raised.value.problem
    monkeypatch.setattr(service_module, "analyze_host_file", lambda *a, **k: pytest.fail("recomputed"))
    with pytest.raises(ProfileError):
        service.get_host_report("run", host_file, timeout=30)
    status = service.status(host_file)
    assert status["state"] == "error" and "XSpace" in status["error"]


def test_a_missing_file_is_a_profile_error(service, tmp_path):
    host_file = HostFile("gone", str(tmp_path / "gone.xplane.pb"))
    with pytest.raises(ProfileError, match="cannot read"):
        service.get_host_report("run", host_file, timeout=30)
    assert service.status(host_file)["state"] == "error"


def test_a_bug_becomes_this_files_error_not_a_crash(service, quickstart, monkeypatch):
    monkeypatch.setattr(service_module, "analyze_host_file", lambda *a, **k: {}["boom"])
    with pytest.raises(ProfileError, match="internal error: KeyError"):
        service.get_host_report("run", quickstart, timeout=30)


def test_the_cache_is_bounded(service, tmp_path):
    files = [_trace(str(tmp_path / f"h{i}.xplane.pb"), f"k{i}") for i in range(6)]
    for host_file in files:
        service.get_host_report("run", host_file, timeout=30)
    assert len(service._entries) == 3
    assert service.status(files[0])["state"] == "idle"
    assert service.status(files[-1])["state"] == "done"


def test_max_bytes_is_applied(tmp_path):
    small = AnalysisService(max_bytes=10)
    host_file = HostFile("localhost", write_quickstart(str(tmp_path)))
    with pytest.raises(ProfileError):
        small.get_host_report("run", host_file, timeout=30)
    small.shutdown()


def test_timeline_is_cached_per_bin_count(service, quickstart):
    sixteen = service.get_timeline("run", quickstart, bins=16, timeout=30)
    assert sixteen["bins"] == 16
    assert service.submit_timeline("run", quickstart, 16).result(30) is sixteen
    assert service.get_timeline("run", quickstart, bins=8, timeout=30)["bins"] == 8


def test_nothing_is_written_next_to_the_profile(service, quickstart):
    directory = os.path.dirname(quickstart.path)
    before = sorted(os.listdir(directory))
    service.get_host_report("run", quickstart, timeout=30)
    service.get_timeline("run", quickstart, timeout=30)
    assert sorted(os.listdir(directory)) == before


def _pair(tmp_path):
    from tb_gpu_advisor.testing.pairs import write_input_pair

    return (HostFile("localhost", write_input_pair(str(tmp_path / "a"), fixed=False, seed=0)),
            HostFile("localhost", write_input_pair(str(tmp_path / "b"), fixed=True, seed=1)))


def test_a_comparison_is_compare_reports_of_the_cached_reports(tmp_path):
    from tb_gpu_advisor.compare.diff import compare_reports

    service = AnalysisService(max_entries=8)  # one worker: the comparison job must not wait behind itself
    baseline, candidate = _pair(tmp_path)
    assert service.comparison_status(baseline, candidate)["state"] == "idle"
    future = service.submit_comparison(baseline, candidate)
    result = future.result(60)
    base_report = service.get_host_report("run", baseline, timeout=1)
    cand_report = service.get_host_report("run", candidate, timeout=1)
    assert result == compare_reports(base_report, cand_report)
    assert result["hosts"][0]["change"] == "faster"
    assert service.submit_comparison(baseline, candidate) is future
    assert service.comparison_status(baseline, candidate) == {"state": "done", "error": None, "elapsed_s": None}
    reverse = service.submit_comparison(candidate, baseline).result(60)
    assert reverse["hosts"][0]["change"] == "slower"
    assert len(service._entries) == 4  # two reports, two comparisons
    service.shutdown()


def test_a_comparison_is_redone_when_a_file_changes(service, tmp_path):
    baseline, candidate = _pair(tmp_path)
    first = service.submit_comparison(baseline, candidate).result(60)
    stat = os.stat(candidate.path)
    os.utime(candidate.path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    again = service.submit_comparison(baseline, candidate)
    assert again.result(60) == first and again.result(60) is not first


def test_a_comparison_with_a_corrupt_side_is_its_files_error(service, tmp_path):
    path = tmp_path / "bad.xplane.pb"
    path.write_bytes(b"\xff\xff\xff\xff not protobuf")
    bad = HostFile("bad", str(path))
    good = HostFile("localhost", write_quickstart(str(tmp_path)))
    with pytest.raises(ProfileError) as raised:
        service.submit_comparison(bad, good).result(60)
    assert raised.value.path == str(path) and "XSpace" in raised.value.problem
    assert service.comparison_status(bad, good)["state"] == "error"
    missing = HostFile("gone", str(tmp_path / "gone.xplane.pb"))
    with pytest.raises(ProfileError, match="cannot read"):
        service.submit_comparison(good, missing).result(1)
    assert service.comparison_status(good, missing)["state"] == "error"


def _gpu_host(path, step_us):
    builder = TraceBuilder()
    python = builder.thread("python")
    for step in range(3):
        python.step(step, step * step_us, step_us)
        builder.gpu(0).kernel("k", step * step_us + 10, step_us // 2, launch=(python, step * step_us + 2, 3))
    return builder.write(str(path))


def test_a_run_report_is_run_report_from_the_cache(service, tmp_path, monkeypatch):
    from tb_gpu_advisor.pipeline import run_report

    bad = tmp_path / "c.xplane.pb"
    bad.write_bytes(b"\x0a\x05abc")
    hosts = [HostFile("a", _gpu_host(tmp_path / "a.xplane.pb", 100)),
             HostFile("b", _gpu_host(tmp_path / "b.xplane.pb", 130)), HostFile("c", str(bad))]
    report = service.get_report("run1", hosts, timeout=60)
    assert report == run_report("run1", hosts, executor="inline")
    assert report["multi_host"]["slowest_host"] == "b" and report["errors"][0]["host"] == "c"
    assert service.run_status("run1", hosts)["state"] == "done"
    report["hosts"][0]["summary"] = "changed by a caller"
    monkeypatch.setattr(service_module, "analyze_host_file", lambda *a, **k: pytest.fail("recomputed"))
    again = service.get_report("run1", hosts, timeout=60)
    assert again["hosts"][0]["summary"] != "changed by a caller"
    assert service.get_report("run1", [], timeout=1) == {"schema_version": 1, "run": "run1", "hosts": [],
                                                          "errors": []}


def test_run_status_while_hosts_are_analyzed(service, tmp_path, monkeypatch):
    release, started = threading.Event(), threading.Event()
    real = service_module.analyze_host_file

    def slow(path, max_bytes=None):
        report_progress(1, 2)
        started.set()
        release.wait(30)
        return real(path)

    monkeypatch.setattr(service_module, "analyze_host_file", slow)
    hosts = [HostFile("a", _gpu_host(tmp_path / "a.xplane.pb", 100))]
    assert service.run_status("r", hosts)["state"] == "idle"
    pending = service.submit_run("r", hosts)
    try:
        assert started.wait(30)
        status = service.run_status("r", hosts)
        assert (status["state"], status["progress"], status["hosts"][0]["host"]) == ("running", 0.45, "a")
        assert not pending.done()
    finally:
        release.set()
    assert pending.result(30)["hosts"][0]["host"] == "a"
    assert service.run_status("r", hosts)["progress"] == 1.0
