"""The /compare route through TensorBoardWSGI: the Comparison of two hosts, host defaults, errors, 202, dedup."""

import threading

import pytest
from tensorboard.backend import application
from werkzeug import test as werkzeug_test

from tests.plugin.conftest import PREFIX, get, make_plugin, snapshot, with_service
from tests.plugin.scenarios import CORRUPT, INPUT_BOUND, MULTI_HOST, PREFETCH, QUICKSTART
from tests.plugin.test_plugin_routes import cli_host_report
import tb_gpu_advisor.service as service_module
from tb_gpu_advisor.comparison.diff import compare_reports
from tb_gpu_advisor.service import AnalysisService

IDS = ("run", "host", "baseline_run", "baseline_host")


def _compare(client, run, host, baseline_run, baseline_host=None):
    params = {"run": run, "host": host, "baseline_run": baseline_run}
    if baseline_host is not None:
        params["baseline_host"] = baseline_host
    return get(client, "/compare", **params)


def test_compare_is_compare_reports_of_the_two_host_reports(client, plugin_logdir):
    response, body = _compare(client, PREFETCH, "localhost", INPUT_BOUND, "localhost")
    assert response.status_code == 200
    assert {key: body[key] for key in IDS} == {
        "run": PREFETCH,
        "host": "localhost",
        "baseline_run": INPUT_BOUND,
        "baseline_host": "localhost",
    }
    expected = compare_reports(
        cli_host_report(plugin_logdir[0], INPUT_BOUND, "localhost"),
        cli_host_report(plugin_logdir[0], PREFETCH, "localhost"),
    )
    assert {key: value for key, value in body.items() if key not in IDS} == expected
    host = body["hosts"][0]
    assert host["change"] == "faster" and host["driver"]["category"] == "input_wait"
    assert body["verdict"].startswith(f"{host['speedup']:.2f}× faster (mean step ")
    assert "input wait fell from" in body["verdict"]


def test_the_reverse_is_slower_and_a_run_against_itself_is_within_noise(client):
    _, reverse = _compare(client, INPUT_BOUND, "localhost", PREFETCH)
    assert reverse["hosts"][0]["change"] == "slower" and "× slower" in reverse["verdict"]
    assert reverse["hosts"][0]["driver"]["category"] == "input_wait"
    _, same = _compare(client, PREFETCH, "localhost", PREFETCH)
    assert same["hosts"][0]["change"] == "within_noise" and same["verdict"].startswith("Within noise")


def test_the_baseline_host_defaults_to_the_same_name_else_the_only_host(client):
    _, same_name = _compare(client, MULTI_HOST, "worker1", MULTI_HOST)
    assert (same_name["baseline_host"], same_name["hosts"][0]["baseline_host"]) == ("worker1", "worker1")
    _, only = _compare(client, MULTI_HOST, "worker0", QUICKSTART)
    assert only["baseline_host"] == "localhost" and only["hosts"][0]["baseline_host"] == "localhost"
    _, named = _compare(client, MULTI_HOST, "worker0", MULTI_HOST, "worker1")
    assert named["baseline_host"] == "worker1"
    assert named["hosts"][0]["kernels"]["counts"]["new"] > 0 and named["hosts"][0]["kernels"]["counts"]["gone"] > 0


def test_a_baseline_with_several_hosts_and_none_of_that_name_is_400(client):
    response, body = _compare(client, QUICKSTART, "localhost", MULTI_HOST)
    assert response.status_code == 400
    assert body == {
        "error": f"run '{MULTI_HOST}' has no host 'localhost': name one with baseline_host (worker0, worker1, worker2)"
    }


@pytest.mark.parametrize("missing", ["run", "host", "baseline_run"])
def test_missing_parameters_are_400(client, missing):
    params = {"run": PREFETCH, "host": "localhost", "baseline_run": INPUT_BOUND}
    del params[missing]
    response, body = get(client, "/compare", **params)
    assert response.status_code == 400 and body == {"error": f"missing query parameter {missing!r}"}


@pytest.mark.parametrize(
    "params, message",
    [
        ({"baseline_run": "nope/2026_01_01_00_00_00"}, "no run 'nope/2026_01_01_00_00_00' in this logdir"),
        ({"baseline_host": "worker9"}, f"run '{INPUT_BOUND}' has no host 'worker9'"),
        ({"run": "nope/2026_01_01_00_00_00"}, "no run 'nope/2026_01_01_00_00_00' in this logdir"),
        ({"host": "worker9"}, f"run '{PREFETCH}' has no host 'worker9'"),
    ],
)
def test_unknown_ids_are_404(client, params, message):
    query = {"run": PREFETCH, "host": "localhost", "baseline_run": INPUT_BOUND, "baseline_host": "localhost", **params}
    response, body = get(client, "/compare", **query)
    assert response.status_code == 404 and body == {"error": message}


def test_a_corrupt_side_is_422_naming_its_file(client):
    response, body = _compare(client, PREFETCH, "localhost", CORRUPT, "broken")
    assert response.status_code == 422
    assert body["error"].startswith("cannot analyze broken.xplane.pb: not a valid XSpace protobuf")
    response, body = _compare(client, MULTI_HOST, "worker2", MULTI_HOST, "worker0")
    assert response.status_code == 422 and body["error"].startswith("cannot analyze worker2.xplane.pb")
    assert _compare(client, PREFETCH, "localhost", INPUT_BOUND)[0].status_code == 200


def _client(instance):
    return werkzeug_test.Client(application.TensorBoardWSGI([instance]))


def test_compare_answers_202_with_both_sides_while_they_are_analyzed(plugin_logdir, monkeypatch):
    release = threading.Event()
    real = AnalysisService._report_job
    monkeypatch.setattr(AnalysisService, "_report_job", lambda self, *job: release.wait(30) and real(self, *job))
    instance = with_service(make_plugin(plugin_logdir[0]), AnalysisService(isolated=False))
    instance.wait_s = 0.05
    client = _client(instance)
    response, body = _compare(client, PREFETCH, "localhost", INPUT_BOUND)
    assert response.status_code == 202
    assert {key: body[key] for key in IDS} == {
        "run": PREFETCH,
        "host": "localhost",
        "baseline_run": INPUT_BOUND,
        "baseline_host": "localhost",
    }
    assert body["state"] == "running" and body["error"] is None and body["elapsed_s"] >= 0
    assert body["baseline"]["state"] == "running" and body["candidate"]["state"] == "running"
    release.set()
    instance.wait_s = 30
    response, body = _compare(client, PREFETCH, "localhost", INPUT_BOUND)
    assert response.status_code == 200 and body["hosts"][0]["change"] == "faster"
    assert get(client, "/status", run=INPUT_BOUND, host="localhost")[1]["state"] == "done"
    instance.service.shutdown()


def test_concurrent_requests_share_the_analyses_and_the_comparison(plugin_logdir, monkeypatch):
    analyzed, compared = [], []
    release = threading.Event()
    real_analyze, real_compare = service_module.analyze_host_file, service_module.compare_reports

    def slow_analyze(path, **options):
        analyzed.append(path)
        release.wait(30)
        return real_analyze(path, **options)

    monkeypatch.setattr(service_module, "analyze_host_file", slow_analyze)
    monkeypatch.setattr(service_module, "compare_reports", lambda b, c: compared.append(1) or real_compare(b, c))
    instance = with_service(make_plugin(plugin_logdir[0]), service_module.AnalysisService(isolated=False))
    app = application.TensorBoardWSGI([instance])
    results = []

    def request(index):
        if index % 3 == 2:
            response, body = get(werkzeug_test.Client(app), "/report", run=INPUT_BOUND, host="localhost")
        else:
            response, body = _compare(werkzeug_test.Client(app), PREFETCH, "localhost", INPUT_BOUND)
        results.append((response.status_code, body))

    threads = [threading.Thread(target=request, args=(i,)) for i in range(9)]
    for thread in threads:
        thread.start()
    for _ in range(3000):  # until an analysis has started (at most ~30 s)
        if analyzed:
            break
        threading.Event().wait(0.01)
    release.set()
    for thread in threads:
        thread.join(60)
    assert sorted(analyzed) == sorted(
        instance.index.lookup(run, "localhost")[1].path for run in (INPUT_BOUND, PREFETCH)
    )
    assert len(compared) == 1
    assert [code for code, _ in results] == [200] * 9
    comparisons = [body for _, body in results if body.get("kind") == "comparison"]
    assert len(comparisons) == 6 and all(body == comparisons[0] for body in comparisons)
    instance.service.shutdown()


def test_comparing_writes_nothing_into_the_logdir(client, plugin_logdir):
    before = snapshot(plugin_logdir[0])
    for baseline in (INPUT_BOUND, QUICKSTART, CORRUPT):
        _compare(client, PREFETCH, "localhost", baseline)
    assert snapshot(plugin_logdir[0]) == before


def test_only_get_and_head_are_allowed(client):
    query = {"run": PREFETCH, "host": "localhost", "baseline_run": INPUT_BOUND}
    response = client.post(f"{PREFIX}/compare", query_string=query)
    assert response.status_code == 405 and response.headers["Allow"] == "GET, HEAD"
    assert client.head(f"{PREFIX}/compare", query_string=query).status_code == 200
