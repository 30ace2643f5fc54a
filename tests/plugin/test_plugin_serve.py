"""`tb-gpu-advisor serve`: TensorBoard with our tab after Profile, on a real port."""

import io
import sys
import json
import urllib.request

from tb_gpu_advisor import cli
from tb_gpu_advisor.plugin.loader import GpuAdvisorLoader
from tb_gpu_advisor.plugin.serve import ordered_plugins
from tb_gpu_advisor.scenarios import SCENARIOS
from tb_gpu_advisor.testing.quickstart import write_quickstart
from tests.plugin.tb_process import TensorBoardProcess, serve_command


def test_our_loader_follows_the_profile_loader_once():
    plugins = ordered_plugins()
    assert plugins.count(GpuAdvisorLoader) == 1
    index = plugins.index(GpuAdvisorLoader)
    assert "profile" in plugins[index - 1].__module__


def test_serve_refuses_a_missing_logdir(tmp_path):
    err = io.StringIO()
    assert cli.main(["serve", str(tmp_path / "nope")], out=io.StringIO(), err=err) == 2
    assert err.getvalue() == f"error: {tmp_path / 'nope'}: no such directory\n"


def test_serve_starts_tensorboard_and_prints_the_tab_url(tmp_path):
    write_quickstart(str(tmp_path))
    with TensorBoardProcess(serve_command(tmp_path)) as board:
        assert any("#gpu_advisor" in line for line in board.output)
        assert board.url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(board.url + "data/plugins_listing", timeout=30) as response:
            listing = json.load(response)
        names = list(listing)
        assert listing["gpu_advisor"]["enabled"] is True
        assert names.index("gpu_advisor") == names.index("profile") + 1
        with urllib.request.urlopen(board.url + "data/plugin/gpu_advisor/runs", timeout=30) as response:
            (run,) = json.load(response)
        assert (run["run"], run["hosts"], run["format"]) == (
            "quickstart_input_bound/2026_01_01_00_00_00",
            ["localhost"],
            "xplane",
        )
        assert run["files"] == {
            "localhost": "quickstart_input_bound/plugins/profile/2026_01_01_00_00_00/localhost.xplane.pb"
        }
    assert board.process.returncode == 0


def test_serve_reports_a_busy_port_in_one_line(tmp_path):
    import socket

    write_quickstart(str(tmp_path))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        err = io.StringIO()
        code = cli.main(["serve", str(tmp_path), "--port", str(taken.getsockname()[1])], out=io.StringIO(), err=err)
    assert code == 2
    assert err.getvalue().startswith("error: cannot start TensorBoard: ")
    assert err.getvalue().count("\n") == 1


def test_demo_writes_the_logdir_and_serves_the_tab(tmp_path):
    command = [sys.executable, "-m", "tb_gpu_advisor", "demo", str(tmp_path / "demo"), "--port", "0"]
    with TensorBoardProcess(command) as board:
        count = len(SCENARIOS)
        assert any(f"{count} runs ({count} written, 0 up to date)" in line for line in board.output)
        with urllib.request.urlopen(board.url + "data/plugin/gpu_advisor/runs", timeout=30) as response:
            runs = [entry["run"] for entry in json.load(response)]
        assert len(runs) == count and "input_bound/2026_01_15_09_30_00" in runs
    assert board.process.returncode == 0


def test_serve_passes_the_cache_and_budget_options_to_the_tab():
    import argparse

    from tb_gpu_advisor.commands.serve import add_serve_arguments, tab_flags

    parser = argparse.ArgumentParser()
    add_serve_arguments(parser)
    flags = tab_flags(parser.parse_args(["--cache-mb", "64", "--time-budget-s", "30", "--memory-budget-mb", "2048"]))
    assert flags == [
        "--gpu_advisor_cache_mb",
        "64.0",
        "--gpu_advisor_time_budget_s",
        "30.0",
        "--gpu_advisor_memory_budget_mb",
        "2048.0",
    ]
    assert GpuAdvisorLoader().define_flags(parser) is None
    parsed = parser.parse_args(flags)
    assert (parsed.gpu_advisor_cache_mb, parsed.gpu_advisor_time_budget_s) == (64, 30)
