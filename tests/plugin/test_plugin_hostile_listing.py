"""The tab's listing and limits on odd logdirs: a tiny --gpu_advisor_max_file_mb is a limit (never none), two runs
under one id are listed apart, and a Kineto trace linked from outside the logdir is refused like an XPlane one."""

import os

import pytest

pytest.importorskip("tensorboard")

from tensorboard.backend import application  # noqa: E402
from werkzeug import test as werkzeug_test  # noqa: E402

from tb_gpu_advisor.testing import TraceBuilder  # noqa: E402
from tb_gpu_advisor.testing.kineto_trace import kernel, trace_text  # noqa: E402
from tests.plugin.conftest import get, make_plugin  # noqa: E402

RUN = "a/2026_01_01_00_00_00"


@pytest.fixture
def logdir(tmp_path):
    builder = TraceBuilder()
    builder.gpu(0).kernel("k", 0, 10)
    builder.write_run(str(tmp_path / "logdir"), run="a", timestamp="2026_01_01_00_00_00", host="xhost")
    torch = tmp_path / "logdir" / "a" / "2026_01_01_00_00_00"  # a Kineto directory listed under the same id
    torch.mkdir(parents=True)
    (torch / "inside.1.pt.trace.json").write_text(trace_text([kernel("k", 1_700_000_000_000_000, 10, 1)]))
    (tmp_path / "secret.1.pt.trace.json").write_text(trace_text([kernel("k", 1_700_000_000_000_000, 10, 1)]))
    os.symlink(tmp_path / "secret.1.pt.trace.json", torch / "linked.1.pt.trace.json")
    return str(tmp_path / "logdir")


def _client(logdir, **flags):
    instance = make_plugin(logdir, **flags)
    return instance, werkzeug_test.Client(application.TensorBoardWSGI([instance]))


def test_runs_under_one_id_are_listed_apart_and_each_is_served(logdir):
    instance, client = _client(logdir)
    try:
        _, runs = get(client, "/runs")
        assert sorted((r["run"], tuple(r["hosts"])) for r in runs) == [
            (RUN, ("xhost",)),
            (f"{RUN} (2)", ("inside", "linked")),
        ]  # the Profile tab's run keeps its id
        response, body = get(client, "/report", run=f"{RUN} (2)", host="inside")
        assert response.status_code == 200 and body["host"] == "inside"
        response, body = get(client, "/report", run=f"{RUN} (2)", host="linked")
        assert response.status_code == 422 and "outside the logdir" in body["error"]
    finally:
        instance.service.shutdown()


def test_a_tiny_file_size_flag_is_one_byte_not_no_limit(logdir):
    instance, client = _client(logdir, gpu_advisor_max_file_mb=1e-9, gpu_advisor_cache_entries=4)
    try:
        response, body = get(client, "/report", run=f"{RUN} (2)", host="inside")
        assert response.status_code == 422
        assert "bytes, above the 1 byte limit" in body["error"], body["error"]
    finally:
        instance.service.shutdown()
