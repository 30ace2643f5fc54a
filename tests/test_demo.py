"""`tb-gpu-advisor demo`: the demo logdir is written (or reused) as TensorBoard lays it out."""

import io
import os
from pathlib import Path

import pytest

from tb_gpu_advisor.cli import main
from tb_gpu_advisor.demo import DEMO_TIMESTAMP, demo_timestamp, write_demo_logdir
from tb_gpu_advisor.files.discovery import discover_runs
from tb_gpu_advisor.scenarios import SCENARIOS

REPO_DEMO_LOGS = Path(__file__).resolve().parents[1] / "demo_logs"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    directory = tmp_path_factory.mktemp("demo") / "logs"
    return directory, write_demo_logdir(str(directory))


def _traces(directory):
    """The traces under `directory` (TensorBoard's Profile tab may have left its caches beside them)."""
    return {
        str(path.relative_to(directory)): path.read_bytes() for path in sorted(Path(directory).rglob("*.xplane.pb"))
    }


def test_writes_one_run_per_scenario_laid_out_for_tensorboard(demo):
    directory, runs = demo
    assert [run["name"] for run in runs] == list(SCENARIOS)
    assert all(run["written"] for run in runs)
    run = runs[0]
    assert run["run"] == f"input_bound/{DEMO_TIMESTAMP}"
    assert run["path"] == os.path.join(
        str(directory), "input_bound", "plugins", "profile", DEMO_TIMESTAMP, "v100-train-01.xplane.pb"
    )
    discovered = discover_runs(str(directory))
    assert sorted(r.run for r in discovered) == sorted(r["run"] for r in runs)


def test_every_run_has_its_own_time_and_the_newest_is_a_problem(demo):
    _, runs = demo
    stamps = [run["run"].split("/")[1] for run in runs]
    assert len(set(stamps)) == len(stamps) and stamps == sorted(stamps, reverse=True)
    newest = SCENARIOS[runs[0]["name"]]
    assert stamps[0] == DEMO_TIMESTAMP and newest.fixed_variant_of is None and newest.expected_bottleneck != "none"
    assert demo_timestamp("healthy") == "2026_01_15_09_16_00"


def test_runs_vary_from_step_to_step_as_the_library_seeds_them(demo):
    _, runs = demo
    for run in runs:
        assert Path(run["path"]).read_bytes() == SCENARIOS[run["name"]].build_realistic().to_bytes()


def test_reuses_an_up_to_date_logdir_and_repairs_a_stale_file(tmp_path):
    names = ["low_occupancy", "low_occupancy_fixed"]
    first = write_demo_logdir(str(tmp_path), names)
    stale = first[0]["path"]
    with open(stale, "ab") as handle:
        handle.write(b"\0")
    untouched = os.stat(first[1]["path"]).st_mtime_ns
    second = write_demo_logdir(str(tmp_path), names)
    assert [run["written"] for run in second] == [True, False]
    assert os.stat(first[1]["path"]).st_mtime_ns == untouched
    assert Path(stale).read_bytes() == SCENARIOS["low_occupancy"].build_realistic().to_bytes()


def test_cli_demo_lists_the_runs_and_how_to_open_them(demo):
    directory, _ = demo
    out, err = io.StringIO(), io.StringIO()
    assert main(["demo", str(directory), "--no-serve"], out=out, err=err) == 0
    text = out.getvalue()
    assert text.startswith(f"Demo logdir {directory}: 22 runs (0 written, 22 up to date)\n")
    assert "  multi_gpu_straggler         4x A100-PCIe data parallel" in text
    assert f"tb-gpu-advisor analyze {directory} --run input_bound/{DEMO_TIMESTAMP}" in text
    assert err.getvalue() == ""


def test_cli_analyzes_a_demo_run(demo):
    directory, _ = demo
    out = io.StringIO()
    assert main(["analyze", str(directory), "--run", f"input_bound/{DEMO_TIMESTAMP}"], out=out, err=io.StringIO()) == 0
    assert "GPU busy: 28.0%   input wait: 72.0%" in out.getvalue()


def test_committed_demo_logs_are_up_to_date(demo):
    """Regenerate with `tb-gpu-advisor demo demo_logs` (docs/scenarios.md) when this fails."""
    directory, _ = demo
    committed = _traces(REPO_DEMO_LOGS)
    generated = _traces(directory)
    assert sorted(committed) == sorted(generated)
    stale = [name for name in generated if committed[name] != generated[name]]
    assert stale == []
    assert sum(len(data) for data in committed.values()) < 6 * 2**20
