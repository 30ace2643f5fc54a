"""mypy (mypy.ini) finds nothing in the core packages: model, analysis, findings, report, readers, files, remote."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def mypy(*args, cwd=ROOT):
    try:
        import mypy  # noqa: F401 (installed with the test extra: pip install -e '.[test]')
    except ImportError:
        raise AssertionError("mypy is not installed: pip install -e '.[test]'") from None
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "mypy.ini"), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_mypy_sees_a_defect(tmp_path):
    """A wrong return type and a misused core type are reported under the repository's configuration."""
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from tb_gpu_advisor.model.trace import TraceModel\n\n\n"
        "def count(model: TraceModel) -> str:\n    return len(model.no_such_field)\n"
    )
    result = mypy("--cache-dir", str(tmp_path / "cache"), str(bad), cwd=ROOT)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "[attr-defined]" in result.stdout and "[return-value]" in result.stdout, result.stdout


def test_mypy_finds_nothing_in_the_core_packages():
    result = mypy()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "tb_gpu_advisor" not in result.stdout, result.stdout
