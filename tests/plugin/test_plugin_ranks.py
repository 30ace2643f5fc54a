"""GET /ranks: the run report's `ranks` object, from the rank summaries kept beside the cached host reports."""

import json
import shutil

import pytest
from tensorboard.backend import application
from werkzeug import test as werkzeug_test

import tb_gpu_advisor
from tests.data import REAL
from tests.plugin.conftest import get, make_plugin
from tests.readers.kineto.real import real_kineto


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    logdir = tmp_path_factory.mktemp("ranks_route")
    shutil.copytree(REAL / "ddp_cpu" / "slow_input", logdir / "slow_input")
    (logdir / "one").mkdir()
    shutil.copy(real_kineto("a100_alexnet_sync"), logdir / "one" / "worker0.1.pt.trace.json.gz")
    (logdir / "two").mkdir()
    for worker in ("worker0", "worker1"):
        shutil.copy(real_kineto("mi250_minitoy_train"), logdir / "two" / f"{worker}.1.pt.trace.json.gz")
    plugin = make_plugin(str(logdir))
    yield logdir, werkzeug_test.Client(application.TensorBoardWSGI([plugin]))
    plugin.service.shutdown()


def test_the_ranks_of_a_run_are_the_cli_run_reports(served):
    logdir, client = served
    response, body = get(client, "/ranks", run="slow_input")
    assert response.status_code == 200, body
    expected = tb_gpu_advisor.analyze(str(logdir / "slow_input"), executor="inline")["ranks"]
    assert json.loads(json.dumps(body["ranks"])) == json.loads(json.dumps(expected))
    assert body["ranks"]["slowest"]["rank"] == 2 and body["ranks"]["slowest"]["cause"] == "input"
    assert (body["hosts"], body["reason"], body["failed_hosts"]) == (4, None, [])


def test_a_run_without_ranks_says_why(served):
    _, client = served
    _, one = get(client, "/ranks", run="one")
    assert one["ranks"] is None and "one host" in one["reason"]
    _, two = get(client, "/ranks", run="two")
    assert two["ranks"] is None and "names its rank in a distributed job" in two["reason"]


def test_an_unknown_run_is_404(served):
    _, client = served
    response, body = get(client, "/ranks", run="nope")
    assert response.status_code == 404 and "no run 'nope'" in body["error"]
    assert get(client, "/ranks")[0].status_code == 400


def test_a_run_of_more_hosts_than_the_cache_holds_is_analyzed_once(served, monkeypatch):
    """The client polls while the ranks are analyzed: the hosts the cache let go are not analyzed again."""
    from tb_gpu_advisor import service as service_module
    from tb_gpu_advisor.service import AnalysisService
    from tests.plugin.conftest import with_service

    logdir, _ = served
    calls = []
    real = service_module.analyze_host_file
    monkeypatch.setattr(service_module, "analyze_host_file", lambda path, **k: calls.append(path) or real(path, **k))
    plugin = with_service(make_plugin(str(logdir)), AnalysisService(isolated=False, max_entries=2, max_workers=1))
    try:
        client = werkzeug_test.Client(application.TensorBoardWSGI([plugin]))
        plugin.wait_s = 0.05
        codes = []
        for _ in range(600):
            response, body = get(client, "/ranks", run="slow_input")
            codes.append(response.status_code)
            if response.status_code == 200:
                break
        assert codes[0] == 202 and codes[-1] == 200 and body["ranks"]["rank_count"] == 4
        assert len(calls) == 4
        assert get(client, "/ranks", run="slow_input")[1] == body and len(calls) == 4
    finally:
        plugin.service.shutdown()
