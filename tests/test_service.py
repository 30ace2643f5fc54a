"""AnalysisService: one computation per file version, cached errors, a cache bounded in entries and bytes, status,
no disk writes. Tests that count or replace what an analysis calls use the in-process mode (isolated=False);
the others run the analyses in worker processes, as the server does."""

import os
import threading

import pytest

import tb_gpu_advisor.service as service_module
from tb_gpu_advisor.errors import ProfileError
import tb_gpu_advisor.readers.load as model_load
from tb_gpu_advisor.readers.progress import report_progress
from tb_gpu_advisor.pipeline import analyze_host_file, timeline_for_file
from tb_gpu_advisor.files.runs import HostFile
from tb_gpu_advisor.service import AnalysisService
from tb_gpu_advisor.testing.builder import TraceBuilder
from tb_gpu_advisor.testing.quickstart import write_quickstart


@pytest.fixture
def service():
    instance = AnalysisService(max_entries=3)
    yield instance
    instance.shutdown()


@pytest.fixture
def inproc():
    instance = AnalysisService(max_entries=3, isolated=False)
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
    report = service.submit("run", quickstart).result(30)
    expected = analyze_host_file(quickstart.path)
    expected["host"] = "localhost"
    assert report == expected


def test_a_result_is_computed_once_and_then_cached(inproc, quickstart, monkeypatch):
    calls = []
    real = service_module.analyze_host_file
    monkeypatch.setattr(service_module, "analyze_host_file", lambda p, max_bytes=None, **_: calls.append(p) or real(p))
    first = inproc.submit("run", quickstart).result(30)
    assert inproc.submit("run", quickstart).result(30) is first
    assert len(calls) == 1


def test_concurrent_submits_share_one_future(inproc, quickstart, monkeypatch):
    release, reported = threading.Event(), threading.Event()
    calls = []
    real = service_module.analyze_host_file

    def slow(path, max_bytes=None, **_):
        calls.append(path)
        report_progress(1, 4)  # as load_model does after each plane
        reported.set()
        release.wait(30)
        return real(path)

    monkeypatch.setattr(service_module, "analyze_host_file", slow)
    futures = [inproc.submit("run", quickstart) for _ in range(5)]
    assert len({id(f) for f in futures}) == 1
    assert reported.wait(30)  # the worker thread got as far as its first progress report
    assert inproc.status(quickstart)["state"] == "running"
    assert inproc.status(quickstart)["progress"] == 0.225  # a quarter of the bytes: 0.9 x 1/4
    release.set()
    assert futures[0].result(30)["host"] == "localhost"
    assert len(calls) == 1
    assert inproc.status(quickstart) == {"state": "done", "error": None, "elapsed_s": None}


def test_a_changed_file_is_a_new_version(service, tmp_path):
    path = str(tmp_path / "h.xplane.pb")
    first = service.submit("run", _trace(path, "first_kernel")).result(30)
    stat = os.stat(path)
    host_file = _trace(path, "second_kernel_with_a_longer_name")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    second = service.submit("run", host_file).result(30)
    assert [k["name"] for k in first["kernels"]] == ["first_kernel"]
    assert [k["name"] for k in second["kernels"]] == ["second_kernel_with_a_longer_name"]


def test_a_corrupt_file_raises_and_its_error_is_cached(service, tmp_path):
    path = tmp_path / "bad.xplane.pb"
    path.write_bytes(b"\xff\xff\xff\xff not protobuf")
    host_file = HostFile("bad", str(path))
    assert service.status(host_file)["state"] == "idle"
    first = service.submit("run", host_file)
    with pytest.raises(ProfileError) as raised:
        first.result(30)
    assert raised.value.path == str(path) and "XSpace" in raised.value.problem
    assert service.submit("run", host_file) is first  # the cached error, not a new analysis
    status = service.status(host_file)
    assert status["state"] == "error" and "XSpace" in status["error"]


def test_a_missing_file_is_a_profile_error(service, tmp_path):
    host_file = HostFile("gone", str(tmp_path / "gone.xplane.pb"))
    with pytest.raises(ProfileError, match="cannot read"):
        service.submit("run", host_file).result(30)
    assert service.status(host_file)["state"] == "error"


def test_a_bug_becomes_this_files_error_not_a_crash(inproc, quickstart, monkeypatch):
    monkeypatch.setattr(service_module, "analyze_host_file", lambda *a, **k: {}["boom"])
    with pytest.raises(ProfileError, match="internal error: KeyError"):
        inproc.submit("run", quickstart).result(30)


def test_the_cache_is_bounded(service, tmp_path):
    files = [_trace(str(tmp_path / f"h{i}.xplane.pb"), f"k{i}") for i in range(6)]
    for host_file in files:
        service.submit("run", host_file).result(30)
    assert len(service._entries) == 3
    assert service.status(files[0])["state"] == "idle"
    assert service.status(files[-1])["state"] == "done"


def test_finished_entries_never_exceed_the_limit_even_when_many_finish_together(tmp_path):
    service = AnalysisService(max_entries=4, max_workers=4)
    files = [_trace(str(tmp_path / f"h{i}.xplane.pb"), f"k{i}") for i in range(12)]
    futures = [service.submit("run", host_file) for host_file in files]
    for future in futures:
        future.result(30)
    assert sum(entry.future.done() for entry in service._entries.values()) <= 4
    assert len(service._entries) == 4
    service.shutdown()


def test_max_bytes_is_applied(tmp_path):
    small = AnalysisService(max_bytes=10)
    host_file = HostFile("localhost", write_quickstart(str(tmp_path)))
    with pytest.raises(ProfileError):
        small.submit("run", host_file).result(30)
    small.shutdown()


def test_timelines_of_any_bin_count_come_from_the_cached_analysis(inproc, quickstart, monkeypatch):
    loads = []
    real = model_load.read_space
    monkeypatch.setattr(model_load, "read_space", lambda *a, **k: loads.append(a) or real(*a, **k))
    inproc.submit("run", quickstart).result(30)
    for bins in range(100, 112):
        timeline = inproc.submit_timeline("run", quickstart, bins=bins).result(30)
        assert timeline == timeline_for_file(quickstart.path, bins=bins)
    assert len(loads) == 1 + 12  # the report's analysis, then only timeline_for_file's own reads above
    assert len(inproc._entries) == 1  # bin counts take no cache entries


def test_a_timeline_before_its_report_shares_the_one_analysis(inproc, quickstart, monkeypatch):
    calls = []
    real = service_module.analyze_host_file
    monkeypatch.setattr(service_module, "analyze_host_file", lambda p, **k: calls.append(p) or real(p, **k))
    assert inproc.submit_timeline("run", quickstart, bins=8).result(30)["bins"] == 8
    inproc.submit("run", quickstart).result(30)
    assert len(calls) == 1


def test_nothing_is_written_next_to_the_profile(service, quickstart):
    directory = os.path.dirname(quickstart.path)
    before = sorted(os.listdir(directory))
    service.submit("run", quickstart).result(30)
    service.submit_timeline("run", quickstart).result(30)
    assert sorted(os.listdir(directory)) == before


def _pair(tmp_path):
    from tb_gpu_advisor.testing.pairs import write_input_pair

    return (
        HostFile("localhost", write_input_pair(str(tmp_path / "a"), fixed=False, seed=0)),
        HostFile("localhost", write_input_pair(str(tmp_path / "b"), fixed=True, seed=1)),
    )


def test_a_comparison_is_compare_reports_of_the_cached_reports(tmp_path):
    from tb_gpu_advisor.comparison.diff import compare_reports

    service = AnalysisService(max_entries=8)  # one worker: the comparison job must not wait behind itself
    baseline, candidate = _pair(tmp_path)
    assert service.comparison_status(baseline, candidate)["state"] == "idle"
    future = service.submit_comparison(baseline, candidate)
    result = future.result(60)
    base_report = service.submit("run", baseline).result(1)
    cand_report = service.submit("run", candidate).result(1)
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
