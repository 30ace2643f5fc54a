"""The tab on a bucket logdir: the plugin's routes against a real S3-compatible server process (moto) on
loopback, `tb-gpu-advisor serve s3://...` and plain TensorBoard with --gpu_advisor_logdir; a changed object is
analyzed again, a deleted one is a clear error, and nothing is written to the bucket."""

import json
import time
import urllib.request

import pytest

pytest.importorskip("s3fs", reason="s3:// logdirs need s3fs (pip install -e '.[remote]')")
pytest.importorskip("moto.server", reason="the S3 test server is moto (pip install -e '.[test]')")

from tensorboard.backend import application  # noqa: E402
from werkzeug import test as werkzeug_test  # noqa: E402

from tb_gpu_advisor.plugin.run_index import RUNS_TTL_S  # noqa: E402
from tb_gpu_advisor.testing.pairs import write_input_pair  # noqa: E402
from tests.plugin.conftest import get, make_plugin  # noqa: E402
from tests.plugin.tb_process import TensorBoardProcess, serve_command, tensorboard_command  # noqa: E402
from tests.remote.s3_server import bucket_client, client_environment, objects, s3_server  # noqa: E402

BUCKET = "team-profiles"
LOGDIR = f"s3://{BUCKET}/logs"
BOUND, FIXED = "input_bound/2026_01_01_00_00_00", "prefetch/2026_01_01_00_00_00"
WAIT_S = 120


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    """(endpoint, bucket filesystem, local upload dir); the process environment points at the server."""
    with s3_server(tmp_path_factory.mktemp("moto") / "server.log") as endpoint, pytest.MonkeyPatch.context() as env:
        for name, value in client_environment(endpoint, tmp_path_factory.mktemp("cache"), base={}).items():
            env.setenv(name, value)
        from tests.remote.s3_server import FOREIGN_AWS_VARIABLES

        for name in FOREIGN_AWS_VARIABLES:
            env.delenv(name, raising=False)
        local = tmp_path_factory.mktemp("upload")
        write_input_pair(str(local), fixed=False)
        write_input_pair(str(local), fixed=True, seed=1)
        second = local / "input_bound" / "plugins" / "profile" / "2026_01_01_00_00_00" / "worker1.xplane.pb"
        second.write_bytes((second.parent / "localhost.xplane.pb").read_bytes())
        fs = bucket_client(endpoint)
        fs.mkdir(BUCKET)
        fs.put(str(local) + "/", f"{BUCKET}/logs", recursive=True)
        yield endpoint, fs, local


@pytest.fixture
def client(s3):
    plugin = make_plugin("", gpu_advisor_logdir=LOGDIR)
    yield werkzeug_test.Client(application.TensorBoardWSGI([plugin]))
    plugin.service.shutdown()


def _result(client, route, **params):
    """(response, body) once the route stops answering 202."""
    deadline = time.monotonic() + WAIT_S
    while True:
        response, body = get(client, route, **params)
        if response.status_code != 202 or time.monotonic() > deadline:
            return response, body
        time.sleep(0.2)


def _host_key(run, host):
    return f"{BUCKET}/logs/{run.replace('/', '/plugins/profile/')}/{host}.xplane.pb"


def test_runs_reports_timelines_and_comparisons_of_a_bucket(s3, client):
    before = objects(s3[1], BUCKET)
    response, runs = get(client, "/runs")
    assert response.status_code == 200
    assert [{key: entry[key] for key in ("run", "hosts", "format")} for entry in runs] == [
        {"run": FIXED, "hosts": ["localhost"], "format": "xplane"},
        {"run": BOUND, "hosts": ["localhost", "worker1"], "format": "xplane"},
    ]
    assert runs[1]["files"]["worker1"] == _host_key(BOUND, "worker1").split("/", 2)[2]  # relative to the logdir
    response, report = _result(client, "/report", run=BOUND, host="worker1")
    assert response.status_code == 200 and report["file"] == "worker1.xplane.pb"
    assert report["summary"]["step_time_ms"]["count"] == 16
    response, timeline = _result(client, "/timeline", run=BOUND, host="worker1", bins=50)
    assert response.status_code == 200 and timeline["bins"] == 50
    response, comparison = _result(client, "/compare", run=FIXED, host="localhost", baseline_run=BOUND)
    assert response.status_code == 200
    assert comparison["baseline_run"] == BOUND and "× faster" in comparison["verdict"]
    assert objects(s3[1], BUCKET) == before


def test_a_changed_object_is_analyzed_again(s3, client):
    endpoint, fs, local = s3
    key = _host_key(BOUND, "localhost")
    original = fs.cat(key)
    _, first = _result(client, "/report", run=BOUND, host="localhost")
    try:
        fixed = local / "prefetch" / "plugins" / "profile" / "2026_01_01_00_00_00" / "localhost.xplane.pb"
        fs.pipe(key, fixed.read_bytes())
        deadline = time.monotonic() + WAIT_S  # the listing, and the versions it saw, are refreshed in the background
        while True:
            time.sleep(RUNS_TTL_S + 0.5)
            _, second = _result(client, "/report", run=BOUND, host="localhost")
            if second["summary"]["step_time_ms"] != first["summary"]["step_time_ms"] or time.monotonic() > deadline:
                break
        assert second["summary"]["step_time_ms"] != first["summary"]["step_time_ms"]
        _, again = _result(client, "/report", run=FIXED, host="localhost")
        assert second["summary"]["step_time_ms"] == again["summary"]["step_time_ms"]
    finally:
        fs.pipe(key, original)


def test_a_deleted_object_is_a_clear_error(s3, client):
    fs = s3[1]
    key = _host_key(BOUND, "worker1")
    original = fs.cat(key)
    assert get(client, "/runs")[0].status_code == 200  # listed while the object is there
    try:
        fs.rm(key)
        response, body = _result(client, "/report", run=BOUND, host="worker1")
        assert (response.status_code, body) == (
            422,
            {"error": "cannot analyze worker1.xplane.pb: no such file or directory"},
        )
        deadline = time.monotonic() + WAIT_S  # until the background relisting drops the host
        while True:
            time.sleep(RUNS_TTL_S + 0.5)
            response, body = _result(client, "/report", run=BOUND, host="worker1")
            if response.status_code == 404 or time.monotonic() > deadline:
                break
        assert (response.status_code, body) == (404, {"error": f"run {BOUND!r} has no host 'worker1'"})
        assert _result(client, "/report", run=BOUND, host="localhost")[0].status_code == 200
    finally:
        fs.pipe(key, original)


def test_the_environment_says_when_the_profile_tab_reads_another_logdir(client, tmp_path):
    response, body = get(client, "/environment")
    assert response.status_code == 200 and body["profile_tab"]["available"] is False
    assert "Profile tab cannot show these runs" in body["profile_tab"]["note"]
    assert "--" not in body["profile_tab"]["note"]  # what the tab shows names no command-line flag
    local = werkzeug_test.Client(application.TensorBoardWSGI([make_plugin(str(tmp_path))]))
    assert get(local, "/environment")[1] == {"profile_tab": {"available": True, "note": None}}


def _json(url):
    with urllib.request.urlopen(url, timeout=180) as response:  # a loaded machine: TensorBoard starts slowly
        return json.load(response)


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(lambda: serve_command(LOGDIR), id="serve"),
        pytest.param(
            lambda: [
                *tensorboard_command(LOGDIR)[:1],
                "--gpu_advisor_logdir",
                LOGDIR,
                *tensorboard_command("/nonexistent-local-logdir")[1:],
            ],
            id="tensorboard",
        ),
    ],
)
def test_serve_and_plain_tensorboard_read_a_bucket(s3, command):
    with TensorBoardProcess(command()) as board:
        listing = _json(board.url + "data/plugins_listing")
        assert listing["gpu_advisor"]["enabled"] is True
        assert [run["run"] for run in _json(board.url + "data/plugin/gpu_advisor/runs")] == [FIXED, BOUND]
    assert board.process.returncode == 0


def test_serve_refuses_a_missing_bucket_prefix_in_one_line(s3):
    import io

    from tb_gpu_advisor import cli

    err = io.StringIO()
    assert cli.main(["serve", f"s3://{BUCKET}/nothing"], out=io.StringIO(), err=err) == 2
    assert err.getvalue() == f"error: s3://{BUCKET}/nothing: no such file or directory\n"


def test_the_overview_of_a_bucket_fills_in_without_waiting(s3, client):
    started = time.monotonic()
    response, first = get(client, "/overview")
    assert response.status_code == 200 and time.monotonic() - started < 5
    deadline = time.monotonic() + WAIT_S
    while (first["scanning"] or first["pending"]) and time.monotonic() < deadline:
        time.sleep(0.2)
        first = get(client, "/overview")[1]
    assert [row["run"] for row in first["runs"]] == [FIXED, BOUND] and first["total"] == 2
    rows = {row["run"]: row for row in first["runs"]}
    assert rows[BOUND]["summary"]["bottleneck"] == "input" and rows[BOUND]["hosts"] == 2
    assert rows[FIXED]["summary"]["step_time_ms"] < rows[BOUND]["summary"]["step_time_ms"]
