"""Builds each scenario once per test session and analyzes it."""

from types import SimpleNamespace

import pytest

from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.pipeline import host_report
from tb_gpu_advisor.scenarios import SCENARIOS


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    """`built(name)` -> namespace(path, model, report) of the scenario's trace, written to a temporary file."""
    cache = {}

    def get(name):
        if name not in cache:
            builder = SCENARIOS[name].build()
            path = str(tmp_path_factory.mktemp(name) / f"{builder.hostname}.xplane.pb")
            builder.write(path)
            model = load_model(path)
            cache[name] = SimpleNamespace(path=path, model=model, report=host_report(model), builder=builder)
        return cache[name]

    return get
