"""Security of the plugin's routes: path tricks in ids and static paths, HTML sinks, names as data."""

import json

import pytest

from tests.plugin.conftest import PREFIX, get
from tests.plugin.scenarios import INPUT_BOUND, PREFETCH, QUICKSTART, XSS, XSS_KERNEL


TRAVERSAL_IDS = [
    "..",
    "../..",
    "../../etc/passwd",
    "quickstart_input_bound/../corrupt",
    "/etc/passwd",
    "\\etc\\passwd",
    "..\\..\\windows",
    "a\x00b",
    "quickstart_input_bound/./2026_01_01_00_00_00",
    "quickstart_input_bound//x",
    "x" * 513,
    "run\nname",
]


@pytest.mark.parametrize("value", TRAVERSAL_IDS)
def test_path_tricks_in_run_or_host_are_refused(client, value):
    for params in ({"run": value, "host": "localhost"}, {"run": QUICKSTART, "host": value}):
        response, body = get(client, "/report", **params)
        assert response.status_code == 400, (value, params)
        assert "error" in body


@pytest.mark.parametrize(
    "raw_query",
    [
        "run=%2e%2e&host=localhost",
        "run=%2e%2e%2f%2e%2e%2fetc&host=passwd",
        "run=quickstart_input_bound%2f..%2fcorrupt%2f2026_01_05_00_00_00&host=broken",
        "run=%5c..%5cetc&host=localhost",
        "run=quickstart_input_bound/2026_01_01_00_00_00&host=..%2flocalhost",
        "run=quickstart_input_bound/2026_01_01_00_00_00&host=%00",
        "run=%252e%252e&host=localhost",
    ],
)
def test_encoded_path_tricks_are_refused(client, raw_query):
    response = client.get(f"{PREFIX}/report?{raw_query}")
    assert response.status_code in (400, 404)
    assert "summary" not in json.loads(response.get_data(as_text=True))


@pytest.mark.parametrize("value", TRAVERSAL_IDS)
def test_path_tricks_in_compare_ids_are_refused_before_any_lookup(client, value):
    valid = {"run": PREFETCH, "host": "localhost", "baseline_run": INPUT_BOUND, "baseline_host": "localhost"}
    for name in valid:
        response, body = get(client, "/compare", **{**valid, name: value})
        assert response.status_code == 400, (value, name)
        assert set(body) == {"error"}
        unknown = {**valid, "run": "nope/2026_01_01_00_00_00", name: value} if name != "run" else None
        if unknown:  # the bad id is refused even when another id is unknown
            assert get(client, "/compare", **unknown)[0].status_code == 400, (value, name)


@pytest.mark.parametrize(
    "raw_query",
    [
        "baseline_run=%2e%2e&baseline_host=localhost",
        "baseline_run=input_bound%2f..%2fcorrupt%2f2026_01_05_00_00_00&baseline_host=broken",
        "baseline_run=%5c..%5cetc&baseline_host=localhost",
        "baseline_run=input_bound/2026_01_07_00_00_00&baseline_host=..%2flocalhost",
        "baseline_run=input_bound/2026_01_07_00_00_00&baseline_host=%00",
        "baseline_run=%252e%252e",
    ],
)
def test_encoded_path_tricks_in_compare_are_refused(client, raw_query):
    response = client.get(f"{PREFIX}/compare?run={PREFETCH}&host=localhost&{raw_query}")
    assert response.status_code in (400, 404)
    assert "hosts" not in json.loads(response.get_data(as_text=True))


@pytest.mark.parametrize(
    "path",
    [
        "/static/../plugin.py",
        "/static/..%2fplugin.py",
        "/static/%2e%2e/plugin.py",
        "/static/%2e%2e%2fplugin.py",
        "/static/..%5cplugin.py",
        "/static/..\\plugin.py",
        "/static/views/../../plugin.py",
        "/static//etc/passwd",
        "/static/%2fetc%2fpasswd",
        "/static/index.js%00.css",
        "/static/",
        "/static/index.html",
        "/static2/index.js",
        "/static/./index.js",
        "/static/INDEX.JS",
        "/static/" + "a" * 600 + ".js",
    ],
)
def test_static_serves_only_the_allow_list(client, path):
    response = client.get(f"{PREFIX}{path}")
    assert response.status_code == 404
    assert b"import" not in response.get_data()


def test_static_files_have_no_html_sink_and_no_inline_script():
    from tb_gpu_advisor.plugin.static_files import allowed_files

    allowed = allowed_files()
    assert "index.js" in allowed and "style.css" in allowed
    assert all(name.endswith((".js", ".css", ".svg")) for name in allowed)
    for path in allowed.values():
        text = open(path, encoding="utf-8").read()
        for sink in (
            "innerHTML",
            "outerHTML",
            "insertAdjacentHTML",
            "document.write",
            "eval(",
            "new Function",
            "<script",
        ):
            assert sink not in text, (path, sink)


def test_html_in_kernel_names_is_data(client):
    _, page = get(client, "/kernels", run=XSS, host="xss")
    assert XSS_KERNEL in [row["name"] for row in page["rows"]]


@pytest.mark.parametrize("follow", [False, True])
def test_a_host_linked_from_outside_the_logdir_is_refused_unless_the_flag_allows(tmp_path, follow):
    import os

    from werkzeug import test as werkzeug_test
    from tensorboard.backend import application

    from tests.plugin.conftest import make_plugin
    from tb_gpu_advisor.testing import TraceBuilder

    builder = TraceBuilder()
    builder.gpu(0).kernel("k", 1_000, 50)
    secret = builder.write(str(tmp_path / "elsewhere" / "secret.xplane.pb"))
    run = tmp_path / "logdir" / "plugins" / "profile" / "2026_01_01_00_00_00"
    builder.write(str(run / "inside.xplane.pb"))
    os.symlink(secret, run / "linked.xplane.pb")
    instance = make_plugin(str(tmp_path / "logdir"), gpu_advisor_follow_symlinks=follow)
    client = werkzeug_test.Client(application.TensorBoardWSGI([instance]))
    response, body = get(client, "/report", run="2026_01_01_00_00_00", host="linked")
    if follow:
        assert response.status_code == 200 and body["file"] == "linked.xplane.pb"
    else:
        assert response.status_code == 422 and "outside the logdir" in body["error"]
        assert str(tmp_path) not in body["error"]
    assert get(client, "/report", run="2026_01_01_00_00_00", host="inside")[0].status_code == 200
    instance.service.shutdown()
