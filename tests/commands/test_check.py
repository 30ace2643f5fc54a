import os
import subprocess
import sys

import pytest

BOUND, FIXED = "input_bound/2026_01_01_00_00_00", "prefetch/2026_01_01_00_00_00"


def test_improvement_passes_and_reverse_fails(run_cli, real_pair):
    bound, fixed = real_pair
    code, out, err = run_cli("check", "--baseline", bound, "--candidate", fixed)
    assert code == 0 and err == ""
    assert out.startswith("ok: mean step time 38.43 ms vs baseline 83.42 ms (-53.9%, 95% CI -54.9 to -53.0)")
    code, out, _ = run_cli("check", "--baseline", fixed, "--candidate", bound)
    assert code == 1
    assert out.startswith("regression: mean step time 83.42 ms vs baseline 38.43 ms (+117.1%")
    assert out.count("\n") == 1


def test_same_passes_with_zero_allowance(run_cli, real_pair):
    code, out, _ = run_cli("check", "--baseline", real_pair[0], "--candidate", real_pair[0], "--max-regression", "0")
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
    return subprocess.run(
        [sys.executable, "-m", "tb_gpu_advisor", *map(str, args)], capture_output=True, text=True, timeout=120, env=env
    )


def test_exit_codes_as_a_ci_step(real_pair, tmp_path, run_cli, capsys):
    """The exit status a CI step sees from the process; the error statuses in-process (the same cli.main)."""
    bound, fixed = real_pair
    assert _cli("check", "--baseline", bound, "--candidate", fixed).returncode == 0
    assert _cli("check", "--baseline", fixed, "--candidate", bound).returncode == 1
    code, _, err = run_cli("check", "--baseline", tmp_path / "none", "--candidate", fixed)
    assert code == 2 and err.count("\n") == 1
    for usage in (["--candidate", fixed, "--max-regression", "-3"], []):  # argparse exits 2 on usage errors
        with pytest.raises(SystemExit) as exited:
            run_cli("check", "--baseline", bound, *usage)
        assert exited.value.code == 2
    assert "must be a finite number >= 0" in capsys.readouterr().err


def test_check_reads_pytorch_traces(run_cli, tmp_path):
    """HTA's trace_diff pair (an A100 control rank, a V100 test rank): the slower V100 steps are a regression."""
    import shutil

    from tests.readers.kineto.real import real_kineto

    control, test = tmp_path / "control", tmp_path / "test"
    control.mkdir(), test.mkdir()
    shutil.copy(real_kineto("a100_8rank_control"), control / "rank3.1661203462000.pt.trace.json.gz")
    shutil.copy(real_kineto("v100_2rank_test"), test / "rank1.1661938466000.pt.trace.json.gz")
    code, out, err = run_cli("check", "--baseline", str(control), "--candidate", str(test))
    assert code == 1 and err == "", err
    assert out.startswith("regression: mean step time") and out.count("\n") == 1
    code, out, _ = run_cli("check", "--baseline", str(test), "--candidate", str(control))
    assert code == 0 and out.startswith("ok: mean step time")


def _steady_run(logdir, run, mean_ms, seed):
    """A run of 12 steps of about `mean_ms` (1% jitter) on one GPU."""
    import random

    from tb_gpu_advisor.testing.builder import TraceBuilder

    rng = random.Random(seed)
    builder = TraceBuilder()
    python, gpu = builder.thread("python"), builder.gpu(0)
    t = 1000.0
    for step in range(12):
        length = mean_ms * 1000 * (1 + rng.uniform(-0.01, 0.01))
        gpu.kernel("ampere_sgemm_128x64_tn", t + 50, length - 100, launch=(python, t + 10, 5))
        python.step(step, t, length)
        t += length + 10
    return builder.write_run(str(logdir), run=run, timestamp=f"2026_01_01_00_00_{seed:02d}")


@pytest.fixture(scope="module")
def baseline_runs(tmp_path_factory):
    """Three baseline runs whose mean step time differs run to run (100, 106, 94 ms), each one steady inside;
    candidates at 108 ms (within the run-to-run spread) and 200 ms (a regression whatever the spread)."""
    root = tmp_path_factory.mktemp("runs")
    baselines = root / "baselines"
    paths = [_steady_run(baselines, "main", mean, seed) for seed, mean in enumerate((100.0, 106.0, 94.0))]
    return {
        "dir": baselines,
        "files": paths,
        "near": _steady_run(root / "near", "near", 108.0, 10),
        "far": _steady_run(root / "far", "far", 200.0, 11),
    }


def test_one_steady_baseline_calls_a_run_to_run_difference_a_regression(run_cli, baseline_runs):
    code, out, _ = run_cli("check", "--baseline", baseline_runs["files"][0], "--candidate", baseline_runs["near"])
    assert code == 1 and out.startswith("regression: mean step time")


def test_repeated_baselines_use_the_run_to_run_spread(run_cli, baseline_runs):
    files = baseline_runs["files"]
    args = [a for f in files for a in ("--baseline", f)]
    code, out, err = run_cli("check", *args, "--candidate", baseline_runs["near"])
    assert code == 0 and err == "", err
    assert out.startswith("ok: mean step time 108") and "vs baseline mean 100" in out
    assert "3 baseline runs" in out and "within noise" in out and out.count("\n") == 1
    code, out, _ = run_cli("check", *args, "--candidate", baseline_runs["far"])
    assert code == 1 and out.startswith("regression: mean step time 200") and "3 baseline runs" in out


def test_a_logdir_of_runs_is_every_run_a_baseline(run_cli, baseline_runs):
    code, out, _ = run_cli("check", "--baseline", baseline_runs["dir"], "--candidate", baseline_runs["near"])
    assert code == 0 and "3 baseline runs" in out
    # --baseline-run picks one run of the logdir: the steady 100 ms run alone says regression.
    code, out, _ = run_cli(
        "check",
        "--baseline",
        baseline_runs["dir"],
        "--baseline-run",
        "main/2026_01_01_00_00_00",
        "--candidate",
        baseline_runs["near"],
    )
    assert code == 1 and "baseline runs" not in out


def test_the_run_to_run_interval_is_a_prediction_interval():
    from tb_gpu_advisor.comparison.gate import _run_to_run_half_width
    from tb_gpu_advisor.comparison.stats import t_quantile

    # stdev 6 of (100, 106, 94); one more run's value: t(0.975, 2 df) x 6 x sqrt(1 + 1/3)
    assert _run_to_run_half_width([100.0, 106.0, 94.0]) == pytest.approx(t_quantile(0.975, 2) * 6 * (4 / 3) ** 0.5)
    assert t_quantile(0.975, 2) == pytest.approx(4.303, abs=1e-3)


def test_the_candidates_own_run_is_not_one_of_its_baselines(run_cli, tmp_path):
    logdir = tmp_path / "history"
    for seed, mean in enumerate((100.0, 106.0, 94.0)):
        _steady_run(logdir, "main", mean, seed)
    _steady_run(logdir, "main", 200.0, 30)  # the newest run: the candidate
    code, out, _ = run_cli("check", "--baseline", logdir, "--candidate", logdir)
    assert code == 1 and out.startswith("regression: mean step time 200") and "3 baseline runs" in out
