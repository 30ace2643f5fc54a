import io
import json
import os
import shutil
import subprocess
import sys

import pytest

from tb_gpu_advisor.cli import main
from tb_gpu_advisor.testing import TraceBuilder
from tests.conftest import REPO_ROOT
from tests.data import real_trace


def run_cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def _gpu_trace(path):
    builder = TraceBuilder()
    python = builder.thread()
    python.step(0, 0, 1000)
    builder.gpu(0).kernel(
        "void Eigen::internal::EigenMetaKernel<Eigen::TensorAssignOp<x>, long>(int)", 100, 400, launch=(python, 50, 5)
    )
    return builder.write(str(path))


def test_json_is_the_machine_contract(tmp_path):
    path = _gpu_trace(tmp_path / "worker0.xplane.pb")
    code, out, err = run_cli("analyze", path, "--format", "json")
    assert code == 0 and err == ""
    report = json.loads(out)
    assert report["schema_version"] == 1
    (host,) = report["hosts"]
    assert host["host"] == "worker0"
    for key in ("host", "summary", "devices", "kernels", "launch", "transfers", "steps", "findings"):
        assert key in host
    for key in ("gpu_busy_pct", "input_wait_pct", "step_time_ms"):
        assert key in host["summary"]
    assert set(host["summary"]["step_time_ms"]) == {"mean", "median", "stdev", "count"}
    kernel = host["kernels"][0]
    assert set(kernel) >= {
        "name",
        "occurrences",
        "total_us",
        "avg_us",
        "min_us",
        "max_us",
        "occupancy_pct",
        "registers_per_thread",
        "shared_memory_bytes",
        "grid",
        "block",
        "uses_tensor_cores",
        "tensor_core_eligible",
        "op_name",
    }
    assert set(host["launch"]) >= {"count", "latency_us", "tiny_kernel_pct", "per_step"}
    assert set(host["launch"]["latency_us"]) >= {"p50", "p95"}
    for direction in ("h2d", "d2h", "d2d"):
        assert set(host["transfers"][direction]) >= {
            "count",
            "bytes",
            "time_us",
            "gbps",
            "pageable_count",
            "sync_count",
        }
    assert set(host["steps"][0]) >= {"name", "time_ms", "breakdown_ms"}


def test_text_report_fits_80_columns_and_has_units(tmp_path):
    path = _gpu_trace(tmp_path / "h.xplane.pb")
    code, out, _ = run_cli("analyze", path)
    assert code == 0
    assert all(len(line) <= 80 for line in out.splitlines())
    assert "GPU busy: 40.0%" in out
    assert "400.0 µs" in out


def test_markdown_escapes_kernel_names(tmp_path):
    path = _gpu_trace(tmp_path / "h.xplane.pb")
    code, out, _ = run_cli("analyze", path, "--format", "markdown")
    assert code == 0
    assert out.startswith("# GPU Advisor report")
    assert "&lt;" in out and "<Eigen" not in out
    assert "| kernel |" in out


def test_corrupt_file_exits_2_with_one_line(tmp_path):
    path = tmp_path / "bad.xplane.pb"
    path.write_bytes(b"\x0a\xff\xff")
    code, out, err = run_cli("analyze", str(path))
    assert code == 2 and out == ""
    assert err == f"error: {path}: not a valid XSpace protobuf: the wire format is corrupt or the file is truncated\n"


def test_run_dir_with_one_good_and_one_corrupt_host_reports_the_good_one(tmp_path):
    run_dir = tmp_path / "logs" / "plugins" / "profile" / "2026_01_01_00_00_00"
    run_dir.mkdir(parents=True)
    _gpu_trace(run_dir / "good.xplane.pb")
    corrupt = real_trace("tpu_inference_utf8_mangled.xplane.pb")
    shutil.copy(corrupt, run_dir / "bad.xplane.pb")
    code, out, err = run_cli("analyze", str(tmp_path / "logs"), "--format", "json")
    assert code == 0
    report = json.loads(out)
    assert [h["host"] for h in report["hosts"]] == ["good"]
    assert report["errors"] == [
        {
            "host": "bad",
            "file": str(run_dir / "bad.xplane.pb"),
            "error": "not a valid XSpace protobuf: the wire format is corrupt or the file is truncated",
        }
    ]
    assert "error: " in err and "bad.xplane.pb" in err


def test_real_corrupt_file_never_prints_a_traceback():
    path = real_trace("tpu_inference_utf8_mangled.xplane.pb")
    result = subprocess.run(
        [sys.executable, "-m", "tb_gpu_advisor", "analyze", str(path)], capture_output=True, text=True, cwd=REPO_ROOT
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert (
        result.stderr.strip() == f"error: {path}: not a valid XSpace protobuf: the wire format is corrupt "
        "or the file is truncated"
    )


def test_cpu_trace_says_there_is_no_gpu():
    path = real_trace("tf221_cpu_keras_input_bound.xplane.pb")
    code, out, _ = run_cli("analyze", str(path))
    assert code == 0
    assert "No GPU in this profile" in out
    assert "Steps: 21 (host markers)" in out


def test_usage_errors_exit_2(tmp_path):
    assert run_cli()[0] == 2
    code, _, err = run_cli("analyze", str(tmp_path / "missing"))
    assert code == 2 and "no such file or directory" in err
    with pytest.raises(SystemExit) as caught:
        run_cli("analyze")
    assert caught.value.code == 2


def test_demo_logdir_is_analyzed_by_the_readme_command():
    demo = REPO_ROOT / "demo_logs"
    assert demo.is_dir()
    code, out, err = run_cli("analyze", str(demo))
    assert code == 0 and err == ""
    assert "GPU busy" in out


def test_console_script_and_module_behave_the_same(tmp_path):
    path = _gpu_trace(tmp_path / "h.xplane.pb")
    module = subprocess.run(
        [sys.executable, "-m", "tb_gpu_advisor", "analyze", path, "--format", "json"],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
    )
    script = shutil.which("tb-gpu-advisor", path=os.path.dirname(sys.executable))
    if script is None:
        pytest.skip("the tb-gpu-advisor console script is not installed in this environment")
    console = subprocess.run([script, "analyze", path, "--format", "json"], capture_output=True, text=True)
    assert module.returncode == console.returncode == 0
    assert module.stdout == console.stdout


def test_markdown_carries_each_findings_full_fix_and_text_points_to_it():
    demo = str(REPO_ROOT / "demo_logs")
    code, out, _ = run_cli("analyze", demo, "--run", "input_bound/2026_01_15_09_30_00", "--format", "markdown")
    assert code == 0
    assert "<details><summary>1. Fix: The GPU waits for the input pipeline</summary>" in out
    assert "num_parallel_calls=tf.data.AUTOTUNE" in out and "Fixes with code to paste" not in out
    code, text, _ = run_cli("analyze", demo, "--run", "input_bound/2026_01_15_09_30_00")
    assert "Fixes with code to paste: --format markdown" in text
    assert text.index("Verdict: Input-bound") < text.index("Findings\n===") < text.index("Steps\n===")


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0", "lots"])
@pytest.mark.parametrize(
    "command",
    [["analyze", "x"], ["report", "x"], ["compare", "a", "b"], ["check", "--baseline", "a", "--candidate", "b"]],
)
def test_max_file_mb_must_be_a_finite_number_above_zero(command, value, capsys):
    with pytest.raises(SystemExit) as stopped:
        main([*command, f"--max-file-mb={value}"])
    assert stopped.value.code == 2
    assert "--max-file-mb" in capsys.readouterr().err
