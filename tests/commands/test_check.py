import os
import subprocess
import sys

import pytest

BOUND, FIXED = "input_bound/2026_01_01_00_00_00", "prefetch/2026_01_01_00_00_00"


def test_improvement_passes_and_reverse_fails(run_cli, real_pair):
    bound, fixed = real_pair
    code, out, err = run_cli("check", "--baseline", bound, "--candidate", fixed)
    assert code == 0 and err == ""
    assert out.startswith("ok: mean step time 38.43 ms vs baseline 83.42 ms (-53.9%, 95% CI -55.8 to -52.1)")
    code, out, _ = run_cli("check", "--baseline", fixed, "--candidate", bound)
    assert code == 1
    assert out.startswith("regression: mean step time 83.42 ms vs baseline 38.43 ms (+117.1%")
    assert out.count("\n") == 1


def test_same_passes_with_zero_allowance(run_cli, real_pair):
    code, out, _ = run_cli("check", "--baseline", real_pair[0], "--candidate", real_pair[0],
                           "--max-regression", "0")
    assert code == 0 and "within the allowed +0.0%" in out


@pytest.mark.parametrize("metric,expected", [("input_wait", 1), ("step_time_median", 1), ("host", 0)])
def test_metrics_on_the_reverse(run_cli, real_pair, metric, expected):
    code, _, _ = run_cli("check", "--baseline", real_pair[1], "--candidate", real_pair[0], "--metric", metric)
    assert code == expected


def test_gpu_metric_on_runs_of_a_logdir(run_cli, input_logdir):
    args = ["check", "--baseline", input_logdir, "--candidate", input_logdir, "--metric", "gpu_busy"]
    assert run_cli(*args, "--baseline-run", BOUND, "--candidate-run", FIXED)[0] == 0
    code, out, _ = run_cli(*args, "--baseline-run", FIXED, "--candidate-run", BOUND)
    assert code == 1 and out.startswith("regression: GPU busy 14.9% vs baseline 78.4% (-63.4 points")


def test_unavailable_metric_is_exit_2(run_cli, real_pair):
    code, out, err = run_cli("check", "--baseline", real_pair[0], "--candidate", real_pair[1], "--metric", "gpu_busy")
    assert code == 2 and out == ""
    assert err == "error: gpu_busy: a side has no GPU activity, so GPU busy cannot be checked\n"


def _cli(*args):
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    return subprocess.run([sys.executable, "-m", "tb_gpu_advisor", *map(str, args)], capture_output=True,
                          text=True, timeout=120, env=env)


def test_exit_codes_as_a_ci_step(real_pair, tmp_path):
    bound, fixed = real_pair
    assert _cli("check", "--baseline", bound, "--candidate", fixed).returncode == 0
    assert _cli("check", "--baseline", fixed, "--candidate", bound).returncode == 1
    missing = _cli("check", "--baseline", tmp_path / "none", "--candidate", fixed)
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1
    usage = _cli("check", "--baseline", bound, "--candidate", fixed, "--max-regression", "-3")
    assert usage.returncode == 2 and "must be a finite number >= 0" in usage.stderr
    assert _cli("check", "--baseline", bound).returncode == 2



def test_check_reads_pytorch_traces(run_cli, tmp_path):
    """HTA's trace_diff pair (an A100 control rank, a V100 test rank): the slower V100 steps are a regression."""
    import shutil

    from tests.kineto.real import real_kineto

    control, test = tmp_path / "control", tmp_path / "test"
    control.mkdir(), test.mkdir()
    shutil.copy(real_kineto("a100_8rank_control"), control / "rank3.1661203462000.pt.trace.json.gz")
    shutil.copy(real_kineto("v100_2rank_test"), test / "rank1.1661938466000.pt.trace.json.gz")
    code, out, err = run_cli("check", "--baseline", str(control), "--candidate", str(test))
    assert code == 1 and err == "", err
    assert out.startswith("regression: mean step time") and out.count("\n") == 1
    code, out, _ = run_cli("check", "--baseline", str(test), "--candidate", str(control))
    assert code == 0 and out.startswith("ok: mean step time")
