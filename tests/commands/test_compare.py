import json

BOUND, FIXED = "input_bound/2026_01_01_00_00_00", "prefetch/2026_01_01_00_00_00"


def test_compare_real_captures_names_input_wait(run_cli, real_pair):
    code, out, err = run_cli("compare", *real_pair)
    assert code == 0 and err == ""
    assert "Verdict: 2.17× faster (mean step 83.42 ms → 38.43 ms, 95% CI" in out
    assert "Input wait ←   77.12 ms   33.45 ms  -43.68 ms" in out


def test_compare_runs_of_one_logdir_as_json(run_cli, input_logdir):
    code, out, _ = run_cli(
        "compare", input_logdir, input_logdir, "--baseline-run", BOUND, "--candidate-run", FIXED, "--format", "json"
    )
    comparison = json.loads(out)
    assert code == 0
    assert comparison["baseline"]["run"] == BOUND and comparison["candidate"]["run"] == FIXED
    assert comparison["hosts"][0]["driver"]["category"] == "input_wait"


def test_compare_markdown(run_cli, real_pair):
    code, out, _ = run_cli("compare", *real_pair, "--format", "markdown")
    assert code == 0 and out.startswith("# GPU Advisor comparison\n\n**Verdict:** 2.17× faster")
    assert "| Input wait ← | 77.12 ms | 33.45 ms | -43.68 ms |" in out


def test_compare_same_is_within_noise(run_cli, real_pair):
    code, out, _ = run_cli("compare", real_pair[0], real_pair[0])
    assert code == 0 and "Verdict: Within noise: mean step 83.42 ms → 83.42 ms (+0.0%" in out


def test_bad_input_is_one_line_and_exit_2(run_cli, real_pair, tmp_path):
    code, out, err = run_cli("compare", real_pair[0], tmp_path / "missing")
    assert code == 2 and out == ""
    assert err == f"error: {tmp_path / 'missing'}: no such file or directory\n"
    code, _, err = run_cli("compare", real_pair[0], real_pair[1], "--baseline-run", "x")
    assert code == 2 and "--run applies to a logdir" in err


def test_host_options_pick_one_host_per_side(run_cli, input_logdir):
    code, _, err = run_cli("compare", input_logdir, input_logdir, "--host", "nobody")
    assert code == 2 and "no host 'nobody'; hosts: localhost" in err


def test_a_corrupt_side_is_one_line_and_exit_2(run_cli, real_pair):
    corrupt = real_pair[0].replace("tf221_cpu_keras_input_bound", "tpu_inference_utf8_mangled")
    code, out, err = run_cli("compare", real_pair[0], corrupt)
    assert code == 2 and out == ""
    assert (
        err == f"error: {corrupt}: not a valid XSpace protobuf: the wire format is corrupt or the file is truncated\n"
    )


def test_compare_and_check_help_print_a_single_percent_sign(capsys):
    import pytest

    from tb_gpu_advisor import cli

    for command in ("compare", "check"):
        with pytest.raises(SystemExit):
            cli.main([command, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert "(95% confidence interval)" in text or "95% confidence interval," in text
        assert "%%" not in text
