"""Host fan-out: the run report is the same in-process, on a local process pool and on a real Dask cluster."""

import io
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tb_gpu_advisor import fanout, pipeline
from tb_gpu_advisor.cli import main
from tb_gpu_advisor.files.discovery import resolve_target
from tb_gpu_advisor.pipeline import run_report
from tb_gpu_advisor.testing import TraceBuilder

_STARTUP_S = 90


def _host_trace(logdir, host, step_us, kernel_us):
    builder = TraceBuilder(hostname=host)
    python = builder.thread("python")
    gpu = builder.gpu(0)
    for step in range(4):
        start = 1000 + step * step_us
        python.step(step, start, step_us - 10)
        gpu.kernel("ampere_sgemm_128x64_tn", start + 20, kernel_us, launch=(python, start + 5, 4))
    return builder.write_run(logdir, run="train", host=host)


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("logs")
    _host_trace(str(root), "worker0", 1000, 600)
    _host_trace(str(root), "worker1", 1300, 900)
    _host_trace(str(root), "worker2", 1100, 500)
    bad = os.path.join(str(root), "train", "plugins", "profile", "2026_01_01_00_00_00", "worker3.xplane.pb")
    with open(bad, "wb") as handle:
        handle.write(b"\x0a\x05abc")  # truncated: a clear error, not a crash
    return str(root)


def _json(report):
    return json.dumps(report, sort_keys=True)


def _wait_for(predicate, what):
    deadline = time.monotonic() + _STARTUP_S
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise TimeoutError(f"{what} did not start within {_STARTUP_S} s")


@pytest.fixture(scope="module")
def dask_scheduler(tmp_path_factory):
    """A real scheduler and worker started with the `dask` command line on 127.0.0.1; always torn down."""
    pytest.importorskip("distributed")
    from distributed import Client

    workdir = tmp_path_factory.mktemp("dask")
    scheduler_file = workdir / "scheduler.json"
    dask = [sys.executable, "-m", "dask"]
    env = dict(os.environ)
    processes = []
    try:
        processes.append(
            subprocess.Popen(
                dask
                + [
                    "scheduler",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    "0",
                    "--no-dashboard",
                    "--scheduler-file",
                    str(scheduler_file),
                ],
                cwd=workdir,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        _wait_for(lambda: scheduler_file.exists() and scheduler_file.stat().st_size > 0, "dask scheduler")
        address = json.loads(scheduler_file.read_text())["address"]
        processes.append(
            subprocess.Popen(
                dask
                + [
                    "worker",
                    address,
                    "--nworkers",
                    "2",
                    "--nthreads",
                    "1",
                    "--no-dashboard",
                    "--host",
                    "127.0.0.1",
                    "--memory-limit",
                    "0",
                ],
                cwd=workdir,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        with Client(address, timeout=_STARTUP_S) as client:
            client.wait_for_workers(2, timeout=_STARTUP_S)
        yield address
    finally:
        for process in reversed(processes):
            process.send_signal(signal.SIGTERM)
        for process in reversed(processes):
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=30)


def test_multi_host_view_and_errors_inline(logdir):
    run, host_files = resolve_target(logdir)
    report = run_report(run, host_files, executor="inline")
    assert [h["host"] for h in report["hosts"]] == ["worker0", "worker1", "worker2"]
    assert report["errors"] == [
        {
            "host": "worker3",
            "file": host_files[3].path,
            "error": "not a valid XSpace protobuf: the wire format is corrupt or the file is truncated",
        }
    ]
    view = report["multi_host"]
    assert (view["slowest_host"], view["fastest_host"]) == ("worker1", "worker0")
    assert (view["step_time_ms_max"], view["step_time_ms_min"]) == (1.29, 0.99)


def test_local_pool_gives_the_same_report(logdir):
    run, host_files = resolve_target(logdir)
    inline = run_report(run, host_files, executor="inline")
    with fanout.local_pool(2) as pool:
        pooled = run_report(run, host_files, executor=pool)
    assert _json(pooled) == _json(inline)


def test_dask_cluster_gives_the_same_report(logdir, dask_scheduler):
    run, host_files = resolve_target(logdir)
    inline = run_report(run, host_files, executor="inline")
    with fanout.dask_executor(dask_scheduler) as executor:
        on_dask = run_report(run, host_files, executor=executor)
    assert _json(on_dask) == _json(inline)
    out, err = io.StringIO(), io.StringIO()
    assert main(["analyze", logdir, "--dask", dask_scheduler, "--format", "json"], out=out, err=err) == 0
    assert json.loads(out.getvalue()) == json.loads(_json(inline))
    assert "worker3.xplane.pb" in err.getvalue()
    out = io.StringIO()
    assert main(["report", logdir, "--dask", dask_scheduler, "--format", "json"], out=out, err=io.StringIO()) == 0
    assert json.loads(out.getvalue()) == json.loads(_json(inline))


def test_unreachable_scheduler_is_a_clear_error(logdir, monkeypatch):
    pytest.importorskip("distributed")
    monkeypatch.setattr(fanout, "DASK_CONNECT_TIMEOUT_S", 2)
    out, err = io.StringIO(), io.StringIO()
    assert main(["analyze", logdir, "--dask", "tcp://127.0.0.1:9"], out=out, err=err) == 2
    assert err.getvalue().startswith("error: tcp://127.0.0.1:9: cannot reach the Dask scheduler")
    assert out.getvalue() == ""


def test_executor_must_be_an_executor():
    with pytest.raises(TypeError):
        pipeline.analyze_hosts([], executor="threads")


def test_small_runs_stay_in_process_and_big_ones_use_a_pool(logdir, monkeypatch):
    _, host_files = resolve_target(logdir)
    pools = []

    class Recorder(fanout.ProcessPoolExecutor):
        def __init__(self, **kwargs):
            pools.append(kwargs["max_workers"])
            super().__init__(**kwargs)

    monkeypatch.setattr(fanout, "ProcessPoolExecutor", Recorder)
    monkeypatch.setattr(fanout.os, "cpu_count", lambda: 2)
    small = pipeline.analyze_hosts(host_files)
    assert pools == []
    monkeypatch.setattr(fanout, "POOL_MIN_BYTES", 1)
    assert pipeline.analyze_hosts(host_files) == small
    assert pools == [2]
