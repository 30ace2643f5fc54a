"""ruff (configured in ruff.toml) finds nothing in the repository; it runs with the fast tier, so in scripts/test.sh
and CI too."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def ruff(*args, cwd=ROOT, command="check"):
    try:
        import ruff  # noqa: F401 (installed with the test extra: pip install -e '.[test]')
    except ImportError:
        raise AssertionError("ruff is not installed: pip install -e '.[test]'") from None
    return subprocess.run(
        [sys.executable, "-m", "ruff", command, "--no-cache", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_lint_sees_a_defect(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import os\n\n\ndef f(items=[]):\n    return undefined_name\n")
    result = ruff("--config", str(ROOT / "ruff.toml"), str(bad), cwd=tmp_path)
    assert result.returncode == 1
    assert all(code in result.stdout for code in ("F401", "B006", "F821")), result.stdout


def test_ruff_finds_nothing_in_the_repository():
    result = ruff(".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_format_check_sees_unformatted_code(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("x = {  'a':1 }\n")
    result = ruff("--check", "--config", str(ROOT / "ruff.toml"), str(bad), cwd=tmp_path, command="format")
    assert result.returncode == 1, result.stdout + result.stderr


def test_the_repository_is_formatted():
    result = ruff("--check", ".", command="format")
    assert result.returncode == 0, result.stdout + result.stderr
