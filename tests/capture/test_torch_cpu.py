"""A real PyTorch CPU capture, made now with the installed torch, is found and analyzed correctly.

Runs `python -m tools.capture.torch_cpu` in a subprocess (10-30 s on 2 cores): the runs are listed
from the logdir like the PyTorch plugin listed them, the ProfilerStep markers are the steps, and the loader
in the main process waits clearly longer per step than the prefetching worker processes. Timings are real,
so the comparison has a margin; the slow loader cannot wait less than its samples sleep.
"""

import importlib.util
import subprocess
import sys

import pytest

from tools.capture import torch_cpu
from tb_gpu_advisor.files.discovery import discover_runs
from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.pipeline import host_report

STEPS = 8
SLOW_OVER_FIXED_MARGIN = 1.3

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None,
    reason="torch is not installed (pip install -e '.[torch]'; scripts/test.sh does)",
)


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    logdir = tmp_path_factory.mktemp("torch_capture")
    result = subprocess.run(
        [sys.executable, "-m", "tools.capture.torch_cpu", "--logdir", str(logdir), "--steps", str(STEPS)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    runs = {run.run: run for run in discover_runs(str(logdir))}
    return runs, {variant: host_report(load_model(run.hosts[0].path)) for variant, run in runs.items()}


def _wait_per_step_ms(report):
    steps = report["steps"]
    return sum(step["breakdown_ms"]["input_wait"] for step in steps) / len(steps)


def test_runs_are_listed_per_directory_with_the_worker_as_host(captured):
    runs, _ = captured
    assert sorted(runs) == sorted(torch_cpu.VARIANTS)
    for run in runs.values():
        assert [host.host for host in run.hosts] == [torch_cpu.WORKER_NAME]
    assert runs["loader_slow"].hosts[0].path.endswith(".pt.trace.json.gz")
    assert runs["loader_fixed"].hosts[0].path.endswith(".pt.trace.json")


def test_profiler_steps_are_the_steps(captured):
    _, reports = captured
    first = torch_cpu.WAIT_STEPS + torch_cpu.WARMUP_STEPS
    for report in reports.values():
        assert report["trace_format"] == "kineto"
        assert (report["summary"]["step_source"], report["summary"]["step_time_ms"]["count"]) == ("host", STEPS)
        assert [step["name"] for step in report["steps"]] == [f"ProfilerStep#{n}" for n in range(first, first + STEPS)]
        assert report["summary"]["gpu_count"] == 0


def test_main_process_loader_waits_clearly_longer_than_worker_processes(captured):
    _, reports = captured
    slow, fixed = _wait_per_step_ms(reports["loader_slow"]), _wait_per_step_ms(reports["loader_fixed"])
    # Every sample sleeps 2 ms in the main process: a batch of 16 cannot take less than 32 ms.
    assert slow >= torch_cpu.BATCH_SIZE * torch_cpu.SLEEP_PER_SAMPLE_S * 1e3
    assert slow > SLOW_OVER_FIXED_MARGIN * fixed, (slow, fixed)
