"""Runs the frontend's pure-helper unit tests (frontend/tests/*.test.mjs) with `node --test`."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_js_helpers(tmp_path):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the JS helper tests need `node --test` (Node 18 or newer)")
    # A mirror with a package.json of type "module", so any Node >= 18 loads the .js files as ES modules.
    shutil.copytree(REPO / "tb_gpu_advisor" / "static", tmp_path / "tb_gpu_advisor" / "static")
    shutil.copytree(REPO / "frontend" / "tests", tmp_path / "frontend" / "tests")
    (tmp_path / "package.json").write_text(json.dumps({"type": "module"}))
    files = sorted(str(p) for p in (tmp_path / "frontend" / "tests").glob("*.test.mjs"))
    assert len(files) >= 3
    result = subprocess.run([node, "--test", *files], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "# fail 0" in result.stdout
