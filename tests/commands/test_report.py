import json


def test_html_to_a_file(run_cli, real_pair, tmp_path):
    target = tmp_path / "report.html"
    code, out, err = run_cli("report", real_pair[0], "-o", target)
    assert code == 0 and out == "" and err == f"wrote {target}\n"
    document = target.read_text(encoding="utf-8")
    assert document.startswith("<!DOCTYPE html>") and "<script" not in document
    assert "Input-bound: the training step waits for tf.data 92% of its time" in document


def test_markdown_and_json_to_stdout(run_cli, real_pair):
    code, out, _ = run_cli("report", real_pair[1], "--format", "markdown")
    assert code == 0 and out.startswith("# GPU Advisor report")
    code, out, _ = run_cli("report", real_pair[1], "--format", "json")
    assert code == 0 and json.loads(out)["hosts"][0]["summary"]["step_time_ms"]["count"] == 21


def test_html_is_the_default_and_runs_are_chosen(run_cli, input_logdir):
    code, out, _ = run_cli("report", input_logdir, "--run", "input_bound/2026_01_01_00_00_00")
    assert code == 0 and "<h1>GPU Advisor report: input_bound/2026_01_01_00_00_00</h1>" in out


def test_unwritable_output_is_exit_2(run_cli, real_pair, tmp_path):
    code, out, err = run_cli("report", real_pair[0], "-o", tmp_path / "no" / "such" / "dir.html")
    assert code == 2 and out == ""
    assert err == f"error: {tmp_path / 'no' / 'such' / 'dir.html'}: cannot write: No such file or directory\n"


def test_bad_input_is_exit_2(run_cli, tmp_path):
    empty = tmp_path / "empty.xplane.pb"
    empty.write_bytes(b"")
    code, _, err = run_cli("report", empty)
    assert code == 2
    assert err == f"error: {empty}: file is empty (the profiler wrote nothing)\n"
