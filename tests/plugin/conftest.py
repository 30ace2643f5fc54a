"""Fixtures of the plugin tests: a multi-run logdir, the plugin, and a werkzeug client over TensorBoardWSGI."""

import json
import os
from pathlib import Path

import pytest

pytest.importorskip("tensorboard")

from tensorboard.backend import application  # noqa: E402
from tensorboard.plugins import base_plugin  # noqa: E402
from werkzeug import test as werkzeug_test  # noqa: E402

from scenarios import write_plugin_logdir  # noqa: E402
from tb_gpu_advisor.plugin.plugin import GpuAdvisorPlugin  # noqa: E402

PREFIX = "/data/plugin/gpu_advisor"
REPO = Path(__file__).resolve().parents[2]
SHARED_TRACES = REPO / ".." / "shared" / "traces"
REAL_V100 = SHARED_TRACES / "gpu_multi_worker_v100x8.xplane.pb"
REAL_CORRUPT = SHARED_TRACES / "tpu_inference_utf8_mangled.xplane.pb"


def shared_traces():
    """The real traces write_plugin_logdir takes, those of ../shared/traces that exist."""
    return {"real_v100_trace": str(REAL_V100) if REAL_V100.is_file() else None,
            "real_corrupt_trace": str(REAL_CORRUPT) if REAL_CORRUPT.is_file() else None}


@pytest.fixture(scope="session")
def plugin_logdir(tmp_path_factory):
    """The scenario logdir (plus the real 8xV100 trace when ../shared is there); returns (path, runs)."""
    logdir = tmp_path_factory.mktemp("plugin_logdir")
    runs = write_plugin_logdir(str(logdir), **shared_traces())
    return str(logdir), runs


def make_plugin(logdir, **flags):
    context = base_plugin.TBContext(logdir=logdir, flags=type("Flags", (), flags)() if flags else None)
    return GpuAdvisorPlugin(context)


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
    return response, (json.loads(response.get_data(as_text=True)) if response.mimetype == "application/json"
                      else None)
