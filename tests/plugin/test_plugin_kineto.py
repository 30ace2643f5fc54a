"""The tab's routes on a logdir holding both kinds of profile: an XPlane run and PyTorch (Kineto) runs."""

import json
import shutil
import time

import pytest
from werkzeug import test as werkzeug_test

from tests.plugin.conftest import PREFIX, make_plugin, snapshot
from tb_gpu_advisor.demo import write_demo_logdir
from tests.readers.kineto.real import real_kineto

application = pytest.importorskip("tensorboard.backend.application")


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    logdir = tmp_path_factory.mktemp("mixed_logdir")
    write_demo_logdir(str(logdir), names=["healthy"])
    ddp = logdir / "ddp"
    ddp.mkdir()
    shutil.copy(real_kineto("a100_2rank_nccl"), ddp / "rank0.1716398122000.pt.trace.json.gz")
    shutil.copy(real_kineto("v100_2rank_test"), ddp / "rank1.1716398122007.pt.trace.json.gz")
    spans = logdir / "toy"
    spans.mkdir()
    shutil.copy(real_kineto("mi250_minitoy_train"), spans / "node7.1700000000000.pt.trace.json.gz")
    shutil.copy(real_kineto("a100_alexnet_sync"), spans / "node7.1700000099000.pt.trace.json.gz")
    plugin = make_plugin(str(logdir))
    yield str(logdir), werkzeug_test.Client(application.TensorBoardWSGI([plugin]))
    plugin.service.shutdown()


def _get(client, route, **params):
    response = client.get(f"{PREFIX}{route}", query_string=params)
    return response.status_code, json.loads(response.get_data(as_text=True))


def test_runs_list_both_kinds_each_span_its_own_run(mixed):
    _, client = mixed
    status, runs = _get(client, "/runs")
    assert status == 200
    listed = {entry["run"]: entry["hosts"] for entry in runs}
    assert listed["ddp"] == ["rank0", "rank1"]
    assert listed["toy/1700000000000"] == ["node7"] and listed["toy/1700000099000"] == ["node7"]
    assert "healthy/2026_01_15_09_16_00" in listed


def test_runs_say_which_the_profile_tab_can_show_and_where_each_file_is(mixed):
    """The tab links to the Profile tab only for XPlane runs; a PyTorch run names its trace files, relative to
    the logdir (never the server's path), for Perfetto or chrome://tracing."""
    logdir, client = mixed
    runs = {entry["run"]: entry for entry in _get(client, "/runs")[1]}
    assert runs["ddp"]["format"] == "kineto"
    assert runs["ddp"]["files"] == {
        "rank0": "ddp/rank0.1716398122000.pt.trace.json.gz",
        "rank1": "ddp/rank1.1716398122007.pt.trace.json.gz",
    }
    assert runs["toy/1700000099000"]["files"] == {"node7": "toy/node7.1700000099000.pt.trace.json.gz"}
    xplane = runs["healthy/2026_01_15_09_16_00"]
    assert xplane["format"] == "xplane"
    assert all(path.startswith("healthy/plugins/profile/2026_01_15_09_16_00/") for path in xplane["files"].values())
    assert not any(logdir in path for entry in runs.values() for path in entry["files"].values())


def _ready(client, route, **params):
    """The route's answer once the analysis behind it has finished (202 while it runs)."""
    for _ in range(600):
        status, body = _get(client, route, **params)
        if status != 202:
            return status, body
        time.sleep(0.1)
    raise AssertionError(f"{route} still running")


def test_kineto_report_kernels_and_timeline(mixed):
    logdir, client = mixed
    before = snapshot(logdir)
    status, report = _ready(client, "/report", run="ddp", host="rank0")
    assert status == 200
    assert report["trace_format"] == "kineto" and report["summary"]["framework"] == "pytorch"
    assert report["summary"]["step_time_ms"]["count"] == 3
    assert _get(client, "/kernels", run="ddp", host="rank0")[0] == 200
    assert _get(client, "/timeline", run="ddp", host="rank0")[0] == 200
    assert snapshot(logdir) == before  # nothing written into the logdir


def test_compare_across_pytorch_runs(mixed):
    _, client = mixed
    status, body = _ready(client, "/compare", run="ddp", host="rank1", baseline_run="ddp", baseline_host="rank0")
    assert status == 200, body
    assert (body["baseline_host"], body["host"]) == ("rank0", "rank1")
