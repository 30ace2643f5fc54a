"""The JAX capture script, run now on JAX's CPU backend with small sizes, writes runs the analyzer reads.

Runs `python -m tools.capture.jax_gpu` in a subprocess (about 20-40 s on 2 cores), then analyzes every
run: each has its step markers, the launch fix is clearly faster, the input-bound steps hold their loader, the
HLO protos JAX embeds are there. GPU-only checks (pinned copies, precision and transfer effects) skip with their
reason; they run against the H200 capture (scripts/h200_capture.sh).
"""

import importlib.util
import io
import json
import pathlib
import shutil
import subprocess
import sys

import pytest

from tools.capture import jax_gpu, trim
from tb_gpu_advisor.cli import main as cli_main
from tb_gpu_advisor.readers.xplane import schema

STEPS = 10
# Op-by-op dispatch of a 16-layer MLP step against one jitted call: measured 20-60x here; 3x leaves room for load.
LAUNCH_MIN_SPEEDUP = 3.0
CPU_SKIPS = {
    "precision": "precision effects need a GPU: the CPU backend has no bf16 matrix units, and fp32 'highest' "
    "is its normal path",
    "transfer": "host-to-device copies need a GPU: on the CPU backend device_put of a NumPy array is a host "
    "memcpy (or none)",
}

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("jax") is None,
    reason="JAX is not installed (pip install -e '.[jax]'; scripts/test.sh does)",
)


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    outdir = tmp_path_factory.mktemp("jax_capture")
    result = subprocess.run(
        [sys.executable, "-m", "tools.capture.jax_gpu", str(outdir), "--steps", str(STEPS), "--trim", "3"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads((outdir / "capture.json").read_text())
    return outdir, result.stdout, summary


def cli_json(*argv):
    """Runs the CLI with --format json in this process; returns its parsed output."""
    out, err = io.StringIO(), io.StringIO()
    code = cli_main([*argv, "--format", "json"], out=out, err=err)
    assert code == 0, err.getvalue()
    return json.loads(out.getvalue())


@pytest.fixture(scope="module")
def reports(capture):
    outdir, _, summary = capture
    return {name: cli_json("analyze", str(outdir / run["path"]))["hosts"][0] for name, run in summary["runs"].items()}


def test_every_cpu_run_is_written_and_the_pinned_run_skips_with_its_reason(capture):
    _, stdout, summary = capture
    gpu_only = {spec.name for spec in jax_gpu.RUNS if spec.gpu_only}
    assert sorted(summary["runs"]) == sorted(set(jax_gpu.RUN_NAMES) - gpu_only)
    assert summary["skipped"] == {"transfer_pinned": next(s.gpu_only for s in jax_gpu.RUNS if s.gpu_only)}
    assert "transfer_pinned: skipped: pinned vs pageable host memory exists only for a GPU" in stdout
    assert (summary["backend"], summary["sizes"]["name"]) == ("cpu", "small")
    for name, run in summary["runs"].items():
        assert f"{name}: {STEPS} steps" in stdout
        assert run["bytes"] <= 3 * 2**20 and run["steps"] == STEPS, (name, run)
    assert summary["runs"]["input_prefetch"]["fix_of"] == "input_bound"


def test_the_analyzer_finds_every_runs_steps(reports):
    for name, report in reports.items():
        summary = report["summary"]
        assert (summary["step_source"], summary["step_time_ms"]["count"]) == ("host", STEPS), name
        first = jax_gpu.WARMUP_STEPS
        assert [step["name"] for step in report["steps"]] == [f"train {n}" for n in range(first, first + STEPS)]
        assert summary["gpu_count"] == 0


def test_jit_fixes_the_op_by_op_step(capture):
    outdir, _, _ = capture
    comparison = cli_json("compare", str(outdir / "launch_bound"), str(outdir / "launch_jit"))
    host = comparison["hosts"][0]
    assert host["change"] == "faster"
    assert host["speedup"] >= LAUNCH_MIN_SPEEDUP, host["speedup"]
    assert comparison["verdict"].startswith(f"{host['speedup']:.2f}× faster")


def test_input_bound_steps_hold_their_loader(capture, reports):
    _, _, summary = capture
    read_s, _units = summary["loader_read_s_and_units"]
    # The loader sleeps read_s inside every step marker before the step runs: no step can be shorter.
    # Within one trace, so the machine's load cannot reorder it (comparing against the healthy run's steps,
    # captured at another moment, failed under load).
    assert min(step["time_ms"] for step in reports["input_bound"]["steps"]) >= read_s * 1e3


def test_the_hlo_protos_of_the_step_are_embedded(capture):
    outdir, _, summary = capture
    space = schema.XSpace.FromString((outdir / summary["runs"]["healthy"]["path"]).read_bytes())
    metadata = next(plane for plane in space.planes if plane.name == "/host:metadata")
    proto_stat = next(key for key, meta in metadata.stat_metadata.items() if meta.name == "Hlo Proto")
    modules = {meta.name: meta for meta in metadata.event_metadata.values()}
    step_modules = [name for name in modules if name.startswith("jit_step(")]
    assert step_modules
    assert all(
        len(next(s.bytes_value for s in modules[name].stats if s.metadata_id == proto_stat)) > 1000
        for name in step_modules
    )


def test_trim_keeps_the_leading_steps_and_the_modules_that_ran(capture, tmp_path):
    outdir, _, summary = capture
    path = tmp_path / "launch_bound.xplane.pb"
    shutil.copy(outdir / summary["runs"]["launch_bound"]["path"], path)
    before = schema.XSpace.FromString(path.read_bytes())
    used, used_names = trim.referenced_modules(before)
    assert used and "jit_tanh" in used_names
    limit_mb = before.ByteSize() / 2**20 * 0.4
    result = trim.trim_file(str(path), limit_mb)
    after = schema.XSpace.FromString(path.read_bytes())
    assert result.bytes_after <= limit_mb * 2**20 < result.bytes_before
    assert trim.MIN_STEPS_KEPT <= result.steps_after < result.steps_before == STEPS
    assert [m.step_num for m in trim.step_markers(after)] == [m.step_num for m in trim.step_markers(before)][
        : result.steps_after
    ]
    kept = {
        meta.name for plane in after.planes if plane.name == "/host:metadata" for meta in plane.event_metadata.values()
    }
    assert all(int(name.rsplit("(", 1)[1][:-1]) in used or name.rsplit("(", 1)[0] in used_names for name in kept)
    assert trim.referenced_modules(after)[0] <= {int(name.rsplit("(", 1)[1][:-1]) for name in kept}
    assert not any(name.startswith("jit__normal(") for name in kept)  # parameter init ran before the profile
    report = cli_json("analyze", str(path))["hosts"][0]
    assert report["summary"]["step_time_ms"]["count"] == result.steps_after


def test_trim_refuses_a_file_without_step_markers(tmp_path):
    path = tmp_path / "no_steps.xplane.pb"
    space = schema.XSpace()
    plane = space.planes.add(name="/host:CPU")
    plane.lines.add(name="x").events.add(metadata_id=1, offset_ps=0, duration_ps=1)
    path.write_bytes(space.SerializeToString())
    with pytest.raises(ValueError, match="step markers"):
        trim.trim_file(str(path), max_mb=1e-6)


@pytest.mark.parametrize("pair", sorted(CPU_SKIPS))
def test_gpu_only_pairs(pair, capture):
    """Precision and transfer effects exist only on a GPU; the H200 capture carries them."""
    outdir, _, summary = capture
    assert any(name.startswith(pair) for name in summary["runs"])  # the CPU run itself is written and read
    pytest.skip(CPU_SKIPS[pair])


def test_device_script_is_valid_bash_and_runs_the_capture_under_a_timeout():
    script = pathlib.Path(__file__).parents[2] / "scripts" / "h200_capture.sh"
    assert subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode == 0
    text = script.read_text()
    assert "timeout" in text and "-m tools.capture.jax_gpu" in text and "--trim" in text


def test_the_pinned_copy_path_runs_on_this_backend():
    """Its timing means something only on a GPU, but its calls (pinned_host memory, copies to the device) must
    not be what fails on the device machine."""
    import jax
    import jax.numpy as jnp

    work = jax_gpu.Workload(jax, jnp, jax_gpu.SIZES["small"])
    closers = []
    step = jax_gpu._run_step_fn(work, "transfer_pinned", closers)
    step(0)
    step(1)
    assert closers == []
