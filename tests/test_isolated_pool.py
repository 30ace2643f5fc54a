"""The server's analyses run in worker processes: a stalled or greedy file is stopped at its budget and reported in
one line naming it and the budget, while small runs are answered; the cache is bounded in bytes."""

import os
import shutil
import time

import pytest

from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.files.runs import HostFile
from tb_gpu_advisor.service import AnalysisService
from tb_gpu_advisor.testing.builder import TraceBuilder
from tb_gpu_advisor.testing.quickstart import write_quickstart
from tb_gpu_advisor.testing.stalling_jobs import misbehaving_host_report

HANG_S = 60  # a wait this long means the server hung: the failure these tests look for


@pytest.fixture
def files(tmp_path):
    """{name: HostFile}: the quickstart run and copies of it whose names make the test job misbehave."""
    good = write_quickstart(str(tmp_path))
    found = {"good": HostFile("localhost", good)}
    for name in ("stall1", "stall2", "stall3", "sleep", "hog"):
        path = str(tmp_path / f"{name}.xplane.pb")
        shutil.copy(good, path)
        found[name] = HostFile(name, path)
    return found


def _service(**options):
    return AnalysisService(report_job=misbehaving_host_report, **options)


def test_a_file_holding_the_gil_does_not_delay_a_small_run(files):
    service = _service(time_budget_s=HANG_S)
    try:
        stalled = service.submit("run", files["stall1"])
        time.sleep(0.5)  # the stall holds its worker's GIL by now
        started = time.monotonic()
        assert service.submit("run", files["good"]).result(HANG_S)["host"] == "localhost"
        assert time.monotonic() - started < HANG_S / 2
        assert not stalled.done()
        assert service.status(files["stall1"])["state"] == "running"
    finally:
        service.shutdown(wait=True)


def test_three_stuck_files_do_not_stall_every_analysis(files):
    service = _service(time_budget_s=HANG_S)
    try:
        stuck = [service.submit("run", files[name]) for name in ("stall1", "stall2", "stall3")]
        time.sleep(0.5)
        assert service.submit("run", files["good"]).result(HANG_S / 2)["host"] == "localhost"  # a spare slot
        assert not any(future.done() for future in stuck)
    finally:
        service.shutdown(wait=True)


def test_a_file_over_the_time_budget_is_one_line_naming_it_and_the_budget(files):
    service = _service(time_budget_s=2)
    try:
        for name in ("stall1", "sleep"):
            with pytest.raises(ProfileError) as raised:
                service.submit("run", files[name]).result(HANG_S)
            assert raised.value.path == files[name].path
            assert raised.value.problem == (
                "over the time budget: analysis stopped after 2 s (raise --gpu_advisor_time_budget_s)"
            )
            assert "\n" not in str(raised.value)
            assert service.status(files[name])["state"] == "error"
        assert service.submit("run", files["good"]).result(HANG_S)["host"] == "localhost"  # workers replaced
    finally:
        service.shutdown(wait=True)


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="the memory budget is enforced on Linux")
def test_a_file_over_the_memory_budget_is_one_line_naming_it_and_the_budget(files):
    service = _service(memory_budget_bytes=256 * 2**20, time_budget_s=HANG_S)
    try:
        with pytest.raises(ProfileError) as raised:
            service.submit("run", files["hog"]).result(HANG_S)
        assert raised.value.path == files["hog"].path
        assert raised.value.problem == (
            "over the memory budget: analysis needed more than 256 MB (raise --gpu_advisor_memory_budget_mb)"
        )
        assert service.submit("run", files["good"]).result(HANG_S)["host"] == "localhost"
    finally:
        service.shutdown(wait=True)


def test_shutdown_stops_a_busy_worker(files):
    service = _service(time_budget_s=HANG_S)
    stalled = service.submit("run", files["stall1"])
    time.sleep(0.5)
    workers = [slot.worker.process for slot in service._pool._slots if slot.worker is not None]
    assert workers
    started = time.monotonic()
    service.shutdown(wait=True)
    assert time.monotonic() - started < HANG_S / 2
    assert not any(process.is_alive() for process in workers)
    with pytest.raises(ProfileError, match="cancelled"):
        stalled.result(1)


def _sized(tmp_path, name, kernels):
    builder = TraceBuilder()
    for index in range(kernels):
        builder.gpu(0).kernel(f"{name}_kernel_{index:05d}_" + "x" * 200, 1000 + 100 * index, 50)
    return HostFile(name, builder.write(str(tmp_path / f"{name}.xplane.pb")))


def test_the_cache_is_bounded_by_the_bytes_of_its_reports(tmp_path):
    service = AnalysisService(max_entries=100, cache_bytes=1)
    try:
        big = [_sized(tmp_path, f"h{i}", 300) for i in range(3)]
        reports = [service.submit("run", host_file).result(HANG_S) for host_file in big]
        size = service._entries[next(iter(service._entries))].size
        assert size > 50_000 and all(len(r["kernels"]) == 300 for r in reports)
        assert len(service._entries) == 1  # the last one used stays, however big
        assert service.status(big[-1])["state"] == "done" and service.status(big[0])["state"] == "idle"
    finally:
        service.shutdown()
    service = AnalysisService(max_entries=100, cache_bytes=int(size * 2.5))
    try:
        for host_file in big + [big[0]]:
            service.submit("run", host_file).result(HANG_S)
        assert len(service._entries) == 2 and service.cached_bytes() <= size * 2.5
        assert [service.status(f)["state"] for f in big] == ["done", "idle", "done"]
    finally:
        service.shutdown()


def test_a_workers_progress_reaches_the_status(files):
    service = _service(time_budget_s=HANG_S)
    try:
        service.submit("run", files["sleep"])
        deadline = time.monotonic() + HANG_S
        while service.status(files["sleep"]).get("progress") != 0.225 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert service.status(files["sleep"])["progress"] == 0.225  # a quarter of the bytes: 0.9 x 1/4
    finally:
        service.shutdown(wait=True)
