"""Fixtures for subcommand tests: a logdir with the scenario pairs as runs, the real TF pair, a CLI runner."""

import io
import pytest

from tb_gpu_advisor import cli
from tb_gpu_advisor.testing.pairs import write_input_pair
from tests.data import real_trace


@pytest.fixture(scope="session")
def input_logdir(tmp_path_factory):
    """A logdir with runs input_bound/<ts> and prefetch/<ts>, one host each."""
    logdir = tmp_path_factory.mktemp("logdir")
    write_input_pair(str(logdir), fixed=False)
    write_input_pair(str(logdir), fixed=True, seed=1)
    return logdir


@pytest.fixture(scope="session")
def real_pair():
    return [str(real_trace(f"tf221_cpu_keras_input_{kind}.xplane.pb")) for kind in ("bound", "fixed")]


@pytest.fixture
def run_cli():
    """Runs the CLI in-process: (exit code, stdout, stderr)."""

    def run(*argv):
        out, err = io.StringIO(), io.StringIO()
        code = cli.main([str(a) for a in argv], out=out, err=err)
        return code, out.getvalue(), err.getvalue()

    return run
