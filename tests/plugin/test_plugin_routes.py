"""The plugin's HTTP routes through TensorBoardWSGI: listing, every route, headers, errors, caching."""

import io
import json
import threading
import time

import pytest

from tb_gpu_advisor.plugin.run_index import MIN_RELIST_S
from tests.plugin.conftest import PREFIX, get, make_plugin, snapshot, with_service
from tests.plugin.scenarios import CORRUPT, CPU_ONLY, MULTI_HOST, QUICKSTART, REAL_V100, XSS
from tb_gpu_advisor import cli
from tb_gpu_advisor.report import kernel_page
from tb_gpu_advisor.service import AnalysisService


def cli_host_report(path, run, host):
    """What `tb-gpu-advisor analyze PATH --run R --host H --format json` prints under hosts[]."""
    out = io.StringIO()
    assert (
        cli.main(["analyze", path, "--run", run, "--host", host, "--format", "json"], out=out, err=io.StringIO()) == 0
    )
    return json.loads(out.getvalue())["hosts"][0]


def test_listing_entry(client):
    response = client.get("/data/plugins_listing")
    entry = json.loads(response.get_data(as_text=True))["gpu_advisor"]
    assert entry == {
        "disable_reload": True,
        "enabled": True,
        "remove_dom": False,
        "tab_name": "GPU Advisor",
        "loading_mechanism": {"type": "IFRAME", "module_path": f"{PREFIX}/static/index.js"},
    }


def test_listing_inactive_without_profiles(tmp_path):
    empty = make_plugin(str(tmp_path))
    assert empty.is_active() is False
    assert make_plugin("").is_active() is False


def test_is_active_is_cached(plugin_logdir, monkeypatch):
    instance = make_plugin(plugin_logdir[0])
    assert instance.is_active() is True
    calls = []
    monkeypatch.setattr("tb_gpu_advisor.plugin.run_index.discover_runs", lambda logdir: calls.append(logdir) or ())
    assert all(instance.is_active() for _ in range(50))
    assert calls == []


def test_inactive_answer_is_rechecked_only_after_a_while(tmp_path, monkeypatch):
    from tb_gpu_advisor.plugin import run_index

    now = [100.0]
    index = run_index.RunIndex(str(tmp_path), clock=lambda: now[0])
    calls = []
    monkeypatch.setattr(run_index, "discover_runs", lambda logdir, **_: calls.append(logdir) or ())
    assert index.is_active() is False
    assert index.is_active() is False
    assert len(calls) == 1
    now[0] += run_index.INACTIVE_RECHECK_S + 1
    assert index.is_active() is False
    assert len(calls) == 2


def test_runs_lists_the_profile_tab_names_newest_first(client, plugin_logdir):
    response, body = get(client, "/runs")
    assert response.status_code == 200
    expected = [{"run": run, "hosts": hosts} for run, hosts in plugin_logdir[1].items()]
    assert [{"run": r["run"], "hosts": r["hosts"]} for r in body] == sorted(
        expected, key=lambda r: r["run"].rsplit("/", 1)[-1], reverse=True
    )
    assert {r["format"] for r in body} == {"xplane"} and all(set(r["files"]) == set(r["hosts"]) for r in body)


def test_headers_are_tensorboards(client):
    response, _ = get(client, "/runs")
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Content-Type"] == "application/json"
    assert "no-cache" in response.headers["Cache-Control"]
    script = client.get(f"{PREFIX}/static/index.js")
    assert script.status_code == 200
    assert script.headers["Content-Type"].startswith("text/javascript")
    assert script.headers["X-Content-Type-Options"] == "nosniff"
    assert b"export async function render()" in script.get_data()
    style = client.get(f"{PREFIX}/static/style.css")
    assert style.headers["Content-Type"].startswith("text/css")
    nested = client.get(f"{PREFIX}/static/views/findings.js")
    assert nested.status_code == 200


@pytest.mark.parametrize(
    "run, host",
    [(QUICKSTART, "localhost"), (MULTI_HOST, "worker0"), (MULTI_HOST, "worker1"), (CPU_ONLY, "cpu"), (XSS, "xss")],
)
def test_report_equals_the_cli_host_report(client, plugin_logdir, run, host):
    response, body = get(client, "/report", run=run, host=host)
    assert response.status_code == 200
    expected = cli_host_report(plugin_logdir[0], run, host)
    # run-relative `file`: not the server's path; `schema_version` as in the run report
    assert body == {"schema_version": 1, **expected, "file": f"{host}.xplane.pb"}


def test_report_of_the_real_v100_trace_equals_the_cli(client, plugin_logdir):
    response, body = get(client, "/report", run=REAL_V100, host="v100x8")
    assert response.status_code == 200
    assert body == {
        "schema_version": 1,
        **cli_host_report(plugin_logdir[0], REAL_V100, "v100x8"),
        "file": "v100x8.xplane.pb",
    }
    assert body["summary"]["gpu_count"] == 8


def test_corrupt_host_is_a_clear_error_and_others_keep_working(client):
    response, body = get(client, "/report", run=MULTI_HOST, host="worker2")
    assert response.status_code == 422
    assert body["error"].startswith("cannot analyze worker2.xplane.pb: not a valid XSpace protobuf")
    status, state = get(client, "/status", run=MULTI_HOST, host="worker2")
    assert status.status_code == 200 and state["state"] == "error" and "XSpace" in state["error"]
    assert get(client, "/report", run=MULTI_HOST, host="worker0")[0].status_code == 200
    assert get(client, "/report", run=CORRUPT, host="broken")[0].status_code == 422
    assert get(client, "/kernels", run=CORRUPT, host="broken")[0].status_code == 422
    assert get(client, "/timeline", run=CORRUPT, host="broken")[0].status_code == 422


def test_the_real_mangled_trace_is_a_clear_error(client, plugin_logdir):
    response, body = get(client, "/report", run=CORRUPT, host="tpu_mangled")
    assert response.status_code == 422
    assert body == {
        "error": "cannot analyze tpu_mangled.xplane.pb: not a valid XSpace protobuf: the wire "
        "format is corrupt or the file is truncated"
    }
    assert get(client, "/report", run=QUICKSTART, host="localhost")[0].status_code == 200


def test_status_moves_from_idle_to_done(client):
    _, before = get(client, "/status", run=XSS, host="xss")
    assert before == {"run": XSS, "host": "xss", "state": "idle", "error": None, "elapsed_s": None}
    get(client, "/report", run=XSS, host="xss")
    _, after = get(client, "/status", run=XSS, host="xss")
    assert after["state"] == "done" and after["error"] is None


def test_report_answers_202_while_the_analysis_runs(plugin_logdir, monkeypatch):
    from werkzeug import test as werkzeug_test
    from tensorboard.backend import application

    release = threading.Event()
    real = AnalysisService._report_job
    monkeypatch.setattr(AnalysisService, "_report_job", lambda self, *job: release.wait(30) and real(self, *job))
    instance = with_service(make_plugin(plugin_logdir[0]), AnalysisService(isolated=False))
    instance.wait_s = 0.05
    client = werkzeug_test.Client(application.TensorBoardWSGI([instance]))
    response, body = get(client, "/report", run=QUICKSTART, host="localhost")
    assert response.status_code == 202
    assert body["state"] == "running" and body["run"] == QUICKSTART and body["host"] == "localhost"
    assert get(client, "/kernels", run=QUICKSTART, host="localhost")[0].status_code == 202
    release.set()
    instance.wait_s = 30
    assert get(client, "/report", run=QUICKSTART, host="localhost")[0].status_code == 200
    instance.service.shutdown()


def test_concurrent_requests_for_one_uncached_report_compute_it_once(plugin_logdir, monkeypatch):
    from werkzeug import test as werkzeug_test
    from tensorboard.backend import application
    import tb_gpu_advisor.service as service_module

    calls = []
    release = threading.Event()
    real = service_module.analyze_host_file

    def counted(path, **options):
        calls.append(path)
        release.wait(30)
        return real(path, **options)

    monkeypatch.setattr(service_module, "analyze_host_file", counted)
    instance = with_service(make_plugin(plugin_logdir[0]), service_module.AnalysisService(isolated=False))
    app = application.TensorBoardWSGI([instance])
    results = []

    def request(route):
        response, body = get(werkzeug_test.Client(app), route, run=MULTI_HOST, host="worker1")
        results.append((response.status_code, body))

    threads = [threading.Thread(target=request, args=("/report" if i % 2 else "/kernels",)) for i in range(8)]
    for thread in threads:
        thread.start()
    host_file = instance.index.lookup(MULTI_HOST, "worker1")[1]
    for _ in range(3000):  # until the first request has started the analysis (at most ~30 s)
        if calls:
            break
        threading.Event().wait(0.01)
    assert instance.service.status(host_file)["state"] == "running"
    release.set()
    for thread in threads:
        thread.join(60)
    assert len(calls) == 1
    assert sorted(code for code, _ in results) == [200] * 8
    reports = [body for code, body in results if "summary" in body]
    assert len(reports) == 4 and all(r == reports[0] for r in reports)
    instance.service.shutdown()


def test_kernels_are_paged_sorted_and_filtered_server_side(client):
    response, page = get(client, "/kernels", run=MULTI_HOST, host="worker1", limit=10, offset=5)
    assert response.status_code == 200
    assert (page["total"], page["total_unfiltered"], page["offset"], page["limit"]) == (60, 60, 5, 10)
    assert [row["name"] for row in page["rows"]] == [f"kernel_{i:03d}" for i in range(54, 44, -1)]
    _, ascending = get(
        client, "/kernels", run=MULTI_HOST, host="worker1", sort="registers_per_thread", order="asc", limit=3
    )
    assert [row["registers_per_thread"] for row in ascending["rows"]] == [16, 17, 18]
    _, by_name = get(client, "/kernels", run=MULTI_HOST, host="worker1", sort="name", order="desc", limit=1)
    assert by_name["rows"][0]["name"] == "kernel_059"
    _, filtered = get(client, "/kernels", run=MULTI_HOST, host="worker1", filter="KERNEL_05")
    assert filtered["total"] == 10 and filtered["filter"] == "KERNEL_05"
    _, beyond = get(client, "/kernels", run=MULTI_HOST, host="worker1", offset=1000)
    assert beyond["rows"] == [] and beyond["total"] == 60


def test_kernel_limit_is_clamped(client):
    _, huge = get(client, "/kernels", run=MULTI_HOST, host="worker1", limit=10**9)
    assert huge["limit"] == kernel_page.MAX_LIMIT and len(huge["rows"]) == 60
    _, tiny = get(client, "/kernels", run=MULTI_HOST, host="worker1", limit=-5)
    assert tiny["limit"] == 1 and len(tiny["rows"]) == 1


def test_kernels_match_the_report(client):
    _, report = get(client, "/report", run=QUICKSTART, host="localhost")
    _, page = get(client, "/kernels", run=QUICKSTART, host="localhost", limit=500)
    assert [{k: v for k, v in row.items() if k != "op_type"} for row in page["rows"]] == report["kernels"]
    assert [row["op_type"] for row in page["rows"]] == ["matmul_conv", "elementwise"]
    assert page["kernel_time_us"] == sum(row["total_us"] for row in report["kernels"])
    _, gemms = get(client, "/kernels", run=QUICKSTART, host="localhost", op_type="matmul_conv")
    assert [row["name"] for row in gemms["rows"]] == ["ampere_sgemm_128x64_tn"] and gemms["op_type"] == "matmul_conv"
    response, error = get(client, "/kernels", run=QUICKSTART, host="localhost", op_type="bogus")
    assert response.status_code == 400 and "op_type" in error["error"]


def test_fonts_are_tensorboards_roboto(client):
    response = client.get("/data/plugin/gpu_advisor/fonts.css")
    assert response.status_code == 200 and response.headers["Content-Type"].startswith("text/css")
    assert response.headers["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize(
    "params, message",
    [
        ({"sort": "name; drop"}, "parameter 'sort' must be one of"),
        ({"order": "sideways"}, "parameter 'order' must be one of"),
        ({"offset": "-1"}, "parameter 'offset' must be between"),
        ({"offset": "ten"}, "parameter 'offset' must be an integer"),
        ({"limit": "1e3"}, "parameter 'limit' must be an integer"),
        ({"filter": "x" * 201}, "parameter 'filter' must be at most 200"),
    ],
)
def test_bad_kernel_parameters_are_400(client, params, message):
    response, body = get(client, "/kernels", run=MULTI_HOST, host="worker1", **params)
    assert response.status_code == 400
    assert body["error"].startswith(message)


def test_timeline_bins_gpu_activity(client):
    response, body = get(client, "/timeline", run=QUICKSTART, host="localhost", bins=16)
    assert response.status_code == 200
    assert body["bins"] == 16 and (body["start_ms"], body["end_ms"]) == (1.0, 81.0)
    assert body["devices"][0]["busy"] == [0.0, 0.27] * 8
    assert body["input_wait"] == [0.99, 0.21] * 8
    _, clamped = get(client, "/timeline", run=QUICKSTART, host="localhost", bins=10**6)
    assert clamped["bins"] == 1000


@pytest.mark.parametrize("route", ["/report", "/status", "/kernels", "/timeline"])
def test_missing_parameters_are_400(client, route):
    response, body = get(client, route, run=QUICKSTART)
    assert response.status_code == 400 and body == {"error": "missing query parameter 'host'"}
    response, body = get(client, route, host="localhost")
    assert response.status_code == 400 and body == {"error": "missing query parameter 'run'"}


@pytest.mark.parametrize("route", ["/report", "/status", "/kernels", "/timeline"])
def test_unknown_run_or_host_is_404(client, route):
    response, body = get(client, route, run="nope/2026_01_01_00_00_00", host="localhost")
    assert response.status_code == 404 and body == {"error": "no run 'nope/2026_01_01_00_00_00' in this logdir"}
    response, body = get(client, route, run=QUICKSTART, host="worker9")
    assert response.status_code == 404 and "has no host 'worker9'" in body["error"]


def test_only_get_is_allowed(client):
    response = client.post(f"{PREFIX}/report", query_string={"run": QUICKSTART, "host": "localhost"})
    assert response.status_code == 405
    assert response.headers["Allow"] == "GET, HEAD"
    assert json.loads(response.get_data(as_text=True)) == {"error": "method POST not allowed"}
    assert client.delete(f"{PREFIX}/static/index.js").status_code == 405


def test_nothing_is_written_into_the_logdir(client, plugin_logdir):
    before = snapshot(plugin_logdir[0])
    for run, hosts in plugin_logdir[1].items():
        for host in hosts:
            for route in ("/report", "/kernels", "/timeline", "/status"):
                get(client, route, run=run, host=host)
    assert snapshot(plugin_logdir[0]) == before


def test_a_new_run_is_found_without_restart(tmp_path):
    from werkzeug import test as werkzeug_test
    from tensorboard.backend import application
    from tb_gpu_advisor.testing.quickstart import write_quickstart

    instance = make_plugin(str(tmp_path))
    client = werkzeug_test.Client(application.TensorBoardWSGI([instance]))
    assert get(client, "/runs")[1] == []
    write_quickstart(str(tmp_path))
    deadline = time.monotonic() + MIN_RELIST_S + 60  # an unknown id relists at most every MIN_RELIST_S
    while True:
        response, body = get(client, "/report", run=QUICKSTART, host="localhost")
        if response.status_code != 404 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert response.status_code == 200 and body["host"] == "localhost"
    instance.service.shutdown()


def test_a_changed_file_is_analyzed_again(tmp_path):
    from werkzeug import test as werkzeug_test
    from tensorboard.backend import application
    from tb_gpu_advisor.testing.builder import TraceBuilder
    from tb_gpu_advisor.testing.quickstart import write_quickstart

    path = write_quickstart(str(tmp_path))
    instance = make_plugin(str(tmp_path))
    client = werkzeug_test.Client(application.TensorBoardWSGI([instance]))
    first = get(client, "/report", run=QUICKSTART, host="localhost")[1]
    builder = TraceBuilder(hostname="quickstart")
    builder.gpu(0).kernel("only_kernel", 1000, 5000)
    builder.write(path)
    second = get(client, "/report", run=QUICKSTART, host="localhost")[1]
    assert [k["name"] for k in second["kernels"]] == ["only_kernel"]
    assert first["kernels"] != second["kernels"]
    instance.service.shutdown()


def test_file_size_flag_is_applied(plugin_logdir):
    from werkzeug import test as werkzeug_test
    from tensorboard.backend import application

    instance = make_plugin(plugin_logdir[0], gpu_advisor_max_file_mb=0.0001, gpu_advisor_cache_entries=4)
    client = werkzeug_test.Client(application.TensorBoardWSGI([instance]))
    response, body = get(client, "/report", run=QUICKSTART, host="localhost")
    assert response.status_code == 422
    assert body["error"].startswith("cannot analyze localhost.xplane.pb:")
    instance.service.shutdown()


def test_routes_work_under_a_path_prefix(plugin):
    from werkzeug import test as werkzeug_test
    from tensorboard.backend import application

    client = werkzeug_test.Client(application.TensorBoardWSGI([plugin], path_prefix="/tb"))
    assert client.get(f"/tb{PREFIX}/static/views/gpus.js").status_code == 200
    assert client.get(f"/tb{PREFIX}/static/../plugin.py").status_code == 404
    response = client.get(f"/tb{PREFIX}/runs")
    assert response.status_code == 200 and json.loads(response.get_data(as_text=True))
    listing = json.loads(client.get("/tb/data/plugins_listing").get_data(as_text=True))
    assert listing["gpu_advisor"]["loading_mechanism"]["module_path"] == f"/tb{PREFIX}/static/index.js"
