"""`pip wheel .` packs what a user runs: the package with its static files and schemas, the console script and the
TensorBoard plugin entry points; no tests, tools (capture, calibration), benchmarks or scripts. The wheel, unpacked
apart from the checkout, analyzes a trace and loads the tab's plugin class (the `package` tier: it runs pip)."""

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tracked(prefix):
    listed = subprocess.run(["git", "ls-files", prefix], cwd=ROOT, capture_output=True, text=True, check=True)
    return {line for line in listed.stdout.splitlines() if line}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """Built from a copy of the sources, so no earlier build/ folder of the checkout slips into it."""
    source, out = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("wheel")
    for name in ("setup.py", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "tb_gpu_advisor", source / "tb_gpu_advisor", ignore=shutil.ignore_patterns("__pycache__"))
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (path,) = out.glob("tb_gpu_advisor-*.whl")
    return path


def test_the_wheel_holds_the_package_and_nothing_else(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    tops = {name.split("/")[0] for name in names}
    assert tops == {"tb_gpu_advisor", next(t for t in tops if t.endswith(".dist-info"))}, sorted(tops)
    assert not [name for name in names if "__pycache__" in name or name.endswith(".pyc")]
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the tracked files cannot be listed")
    shipped = {name for name in _tracked("tb_gpu_advisor") if not name.endswith(".md")}
    assert sorted(shipped - names) == [], "tracked package files missing from the wheel"
    assert sorted(n for n in names - shipped if not n.split("/")[0].endswith(".dist-info")) == []


def test_the_wheel_names_the_console_script_and_the_tensorboard_plugin(wheel):
    archive = zipfile.ZipFile(wheel)
    (entry_points,) = [n for n in archive.namelist() if n.endswith(".dist-info/entry_points.txt")]
    text = archive.read(entry_points).decode()
    assert "tb-gpu-advisor = tb_gpu_advisor.cli:main_exit" in text
    assert "gpu_advisor = tb_gpu_advisor.plugin.loader:GpuAdvisorLoader" in text


def test_the_unpacked_wheel_analyzes_a_trace_and_loads_the_plugin(wheel, tmp_path):
    """Run from outside the checkout with only the unpacked wheel on the path (the dependencies are this
    interpreter's), so a module left out of the wheel fails here."""
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    trace = ROOT / "tests" / "data" / "real" / "kineto" / "v100_2rank_test.pt.trace.json.gz"
    script = (
        "import sys, tb_gpu_advisor\n"
        f"assert tb_gpu_advisor.__file__.startswith({str(site)!r}), tb_gpu_advisor.__file__\n"
        "from importlib.metadata import entry_points\n"
        "(plugin,) = [e for e in entry_points(group='tensorboard_plugins') if e.name == 'gpu_advisor']\n"
        "print(plugin.load().__name__)\n"
        "from tb_gpu_advisor.cli import main\n"
        f"sys.exit(main(['analyze', {str(trace)!r}]))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.startswith("GpuAdvisorLoader\n") and "v100_2rank_test" in run.stdout, run.stdout[:2000]
