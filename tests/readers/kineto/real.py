"""The committed real Kineto traces; tests/conftest.py makes `kineto_models` a fixture of every test module."""

import pytest

from tests.data import real_trace

REAL_TRACES = ("a100_8rank_control", "v100_2rank_test", "a100_2rank_nccl", "a100_alexnet_sync", "mi250_minitoy_train")


def real_kineto(name):
    return real_trace(f"kineto/{name}.pt.trace.json.gz")


@pytest.fixture(scope="session")
def kineto_models():
    """name -> TraceModel of each committed real trace, read once per session."""
    from tb_gpu_advisor.readers.kineto.build import load_kineto_model

    return {name: load_kineto_model(real_kineto(name)) for name in REAL_TRACES}
