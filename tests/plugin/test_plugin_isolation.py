"""The tab while a file stalls its analysis: other runs are answered, the file is a 422 naming it and the budget
once over it, and a real TensorBoard still stops promptly on SIGTERM."""

import json
import os
import shutil
import signal
import sys
import threading
import time
import urllib.request

from tensorboard.backend import application
from werkzeug import test as werkzeug_test

from tb_gpu_advisor.service import AnalysisService
from tb_gpu_advisor.testing.quickstart import write_quickstart
from tb_gpu_advisor.testing.stalling_jobs import misbehaving_host_report
from tests.plugin.conftest import get, make_plugin, with_service
from tests.plugin.tb_process import TensorBoardProcess

QUICKSTART = "quickstart_input_bound/2026_01_01_00_00_00"
STALLED = "stall_run/2026_01_01_00_00_00"
HANG_S = 60


def _logdir(root):
    good = write_quickstart(str(root))
    stalled = root / "stall_run" / "plugins" / "profile" / "2026_01_01_00_00_00"
    stalled.mkdir(parents=True)
    shutil.copy(good, stalled / "stall.xplane.pb")
    return str(root)


def test_a_stalled_file_is_a_422_naming_the_budget_and_other_runs_answer(tmp_path):
    service = AnalysisService(report_job=misbehaving_host_report, time_budget_s=3)
    instance = with_service(make_plugin(_logdir(tmp_path)), service)
    instance.wait_s = 0.2
    client = werkzeug_test.Client(application.TensorBoardWSGI([instance]))
    try:
        response, body = get(client, "/report", run=STALLED, host="stall")
        assert response.status_code == 202 and body["state"] == "running"
        instance.wait_s = HANG_S
        started = time.monotonic()
        response, body = get(client, "/report", run=QUICKSTART, host="localhost")
        assert response.status_code == 200 and body["host"] == "localhost"
        assert time.monotonic() - started < HANG_S / 2
        response, body = get(client, "/report", run=STALLED, host="stall")
        assert response.status_code == 422
        assert body == {
            "error": "cannot analyze stall.xplane.pb: over the time budget: analysis stopped after "
            "3 s (raise --gpu_advisor_time_budget_s)"
        }
    finally:
        service.shutdown(wait=True)


_STALLING_TENSORBOARD = (
    "import sys; import tb_gpu_advisor.worker_jobs as jobs; "
    "from tb_gpu_advisor.testing.stalling_jobs import misbehaving_host_report; "
    "jobs.host_report = misbehaving_host_report; "
    "from tensorboard.main import run_main; sys.argv = ['tensorboard'] + sys.argv[1:]; run_main()"
)


def test_tensorboard_stops_promptly_on_sigterm_while_a_file_stalls(tmp_path):
    logdir = _logdir(tmp_path / "logs")
    command = [sys.executable, "-c", _STALLING_TENSORBOARD, "--logdir", logdir, "--port", "0", "--host", "127.0.0.1"]
    with TensorBoardProcess(command) as board:
        base = board.url + "data/plugin/gpu_advisor/report?"
        stalled = threading.Thread(target=lambda: _fetch(base + f"run={STALLED}&host=stall"), daemon=True)
        stalled.start()
        time.sleep(1)
        status, body = _fetch(base + f"run={QUICKSTART}&host=localhost")
        assert status == 200 and body["host"] == "localhost"
        workers = _children(board.process.pid)
        assert len(workers) >= 3  # the forkserver and at least the two workers it started
        board.process.send_signal(signal.SIGTERM)
        started = time.monotonic()
        board.process.wait(HANG_S)
        assert time.monotonic() - started < 30  # TensorBoard alone takes ~7 s here; a stall kept it for ever
    deadline = time.monotonic() + 15
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(_alive(pid) for pid in workers)


def _fetch(url):
    try:
        with urllib.request.urlopen(url, timeout=HANG_S) as response:
            return response.status, json.load(response)
    except Exception as err:  # the stalled request may be cut off when TensorBoard stops
        return None, str(err)


def _children(pid):
    """Process ids whose parent is `pid` or one of its children (the forkserver's workers), from /proc."""
    parents = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    parents[int(entry)] = int(handle.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
