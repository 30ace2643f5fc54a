"""Fixtures of the plugin tests: a multi-run logdir, the plugin, and a werkzeug client over TensorBoardWSGI."""

import json
import os

import pytest

pytest.importorskip("tensorboard")

from tensorboard.backend import application  # noqa: E402
from tensorboard.plugins import base_plugin  # noqa: E402
from werkzeug import test as werkzeug_test  # noqa: E402

from tests.plugin.scenarios import write_plugin_logdir  # noqa: E402
from tb_gpu_advisor.plugin.plugin import GpuAdvisorPlugin  # noqa: E402

PREFIX = "/data/plugin/gpu_advisor"


@pytest.fixture(scope="session")
def plugin_logdir(tmp_path_factory):
    """The scenario logdir with the real 8xV100 and corrupt TPU traces; returns (path, runs)."""
    logdir = tmp_path_factory.mktemp("plugin_logdir")
    runs = write_plugin_logdir(str(logdir))
    return str(logdir), runs


def make_plugin(logdir, **flags):
    context = base_plugin.TBContext(logdir=logdir, flags=type("Flags", (), flags)() if flags else None)
    return GpuAdvisorPlugin(context)


def with_service(instance, service):
    """`instance` analyzing on `service` (e.g. in-process, for tests that count or slow what an analysis calls)."""
    from tb_gpu_advisor.overview.service import OverviewService

    instance.service.shutdown()
    instance.service = service
    instance.overview = OverviewService(service, list_runs=instance.index.runs)
    return instance


@pytest.fixture
def plugin(plugin_logdir):
    instance = make_plugin(plugin_logdir[0])
    yield instance
    instance.service.shutdown()


@pytest.fixture
def client(plugin):
    return werkzeug_test.Client(application.TensorBoardWSGI([plugin]))


def snapshot(directory):
    """(relative path, size, mtime) of everything under `directory`: to prove nothing was written."""
    found = []
    for root, dirs, files in os.walk(directory):
        for name in dirs + files:
            path = os.path.join(root, name)
            stat = os.stat(path)
            found.append((os.path.relpath(path, directory), stat.st_size, stat.st_mtime_ns))
    return sorted(found)


def get(client, route, **params):
    """(response, parsed JSON body or None) of GET <plugin>/<route>?params."""
    response = client.get(f"{PREFIX}{route}", query_string=params)
    return response, (json.loads(response.get_data(as_text=True)) if response.mimetype == "application/json" else None)
