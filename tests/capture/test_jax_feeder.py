"""capture.jax_feeder writes the blocked-feeder pair committed under tests/data/real/feeder (what it finds there is
pinned in tests/findings/rules/test_feeder_blocked.py)."""

import importlib.util
import json
import subprocess
import sys

import pytest

from tb_gpu_advisor.analysis.steps import find_steps
from tools.capture import jax_feeder
from tb_gpu_advisor.readers.load import load_model
from tests.data import REAL


def test_the_committed_pair_is_the_scripts_record():
    record = json.loads((REAL / "feeder" / "feeder.json").read_text(encoding="utf-8"))
    assert [(side["side"], side["loaders"]) for side in record["sides"]] == list(jax_feeder.SIDES)
    for side in record["sides"]:
        path = REAL / "feeder" / side["file"]
        assert path.stat().st_size < jax_feeder.DEFAULT_MAX_MB * 2**20
        assert len(find_steps(load_model(path)).steps) == jax_feeder.DEFAULT_STEPS


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="JAX is not installed (pip install -e '.[jax]')")
def test_the_script_captures_both_sides_with_the_step_thread_in_queue_get(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "tools.capture.jax_feeder", str(tmp_path / "out"), "--steps", "4"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    for side, _ in jax_feeder.SIDES:
        path = next((tmp_path / "out" / f"feeder_{side}").glob("plugins/profile/*/*.xplane.pb"))
        model = load_model(path)
        assert len(find_steps(model).steps) == 4
        feeder = [thread for thread in model.host_activity.thread_waits if thread.feeds_device]
        assert [thread.thread for thread in feeder] == ["python"] and "queue" in feeder[0].waits
