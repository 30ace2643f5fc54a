"""Causal idle attribution (analysis.idle_attribution) on small written Kineto traces (exact numbers, one case
each) and on the committed real ones."""

import pytest

from tb_gpu_advisor.analysis.idle_attribution import IDLE_CAUSES, attribute_idle
from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.model.host_waits import is_device_wait
from tb_gpu_advisor.pipeline import host_report
from tb_gpu_advisor.testing.kineto_trace import kernel, launch, trace_text, x_event

PS_PER_US = 1_000_000


def _model(tmp_path, events):
    path = tmp_path / "rank0.1.pt.trace.json"
    path.write_text(trace_text(events))
    return load_model(path)


def _causes_us(tmp_path, events, start_us=None, end_us=None):
    """{cause: us} of GPU 0's idle time over [start_us, end_us) (the whole profile by default), zeros left out;
    the traces below start their first kernel at 10 us, after its launch call at 0."""
    model = _model(tmp_path, events)
    gpu = attribute_idle(model).gpus[0]
    lo, hi = model.profile_span_ps
    start = lo if start_us is None else lo + start_us * PS_PER_US
    end = hi if end_us is None else lo + end_us * PS_PER_US
    found = {cause: int(ps[0]) / PS_PER_US for cause, ps in gpu.cause_ps([start], [end]).items()}
    return {cause: value for cause, value in found.items() if value}


def _op(name, ts, dur):
    return x_event("cpu_op", name, ts, dur)


def test_a_gap_ended_by_work_queued_before_it_is_a_device_wait(tmp_path):
    # Both kernels launched by 10 us; the second starts at 50 (it waited on the device): 20-50 is device_wait.
    events = [launch(0, 5, 1), launch(6, 4, 2), kernel("k1", 10, 10, 1), kernel("k2", 50, 10, 2)]
    assert _causes_us(tmp_path, events, 10) == {"device_wait": 30.0}
    gpu = attribute_idle(_model(tmp_path, events)).gpus[0]
    assert [(kind, spans.total_ps) for kind, spans in gpu.device_wait_work.items()] == [
        ("collective", 0),
        ("copy", 0),
        ("compute", 30 * PS_PER_US),
    ]


def test_a_gap_ended_by_a_late_launch_is_host_time_then_launch_time(tmp_path):
    # k1 ends at 20; nothing is traced on the host until 22, an op runs 22-40, the launch call starts at 40 and
    # k2 at 48: untraced 2, host 18, launch 8 (the call and its latency).
    events = [
        launch(0, 5, 1),
        kernel("k1", 10, 10, 1),
        _op("aten::add", 22, 18),
        launch(40, 5, 2),
        kernel("k2", 48, 10, 2),
    ]
    assert _causes_us(tmp_path, events, 10) == {"host_untraced": 2.0, "host": 18.0, "launch": 8.0}


def test_a_launch_call_running_when_the_gpu_went_idle_is_launch_time(tmp_path):
    # A 15 us launch call (first use, module loading) started at 15 while k1 ran; k2 starts at 33: 20-33 launch.
    events = [launch(0, 5, 1), kernel("k1", 10, 10, 1), launch(15, 15, 2), kernel("k2", 33, 10, 2)]
    assert _causes_us(tmp_path, events, 10) == {"launch": 13.0}


def test_after_a_sync_the_host_is_late_for_what_it_does_next(tmp_path):
    # The host waits in cudaStreamSynchronize 12-21 for k1 (10-20), runs an op 21-30 and launches k2 at 30 (k2
    # at 37). The GPU idles 20-37: 1 us while the host is still blocked (host_wait), then 9 us of the op (what
    # the host did after the wait is that work's, however long the wait ran), then 7 us of launch.
    events = [
        launch(0, 5, 1),
        kernel("k1", 10, 10, 1),
        launch(12, 9, 9, name="cudaStreamSynchronize"),
        _op("aten::item", 21, 9),
        launch(30, 5, 2),
        kernel("k2", 37, 10, 2),
    ]
    assert _causes_us(tmp_path, events, 10) == {"host_wait": 1.0, "host": 9.0, "launch": 7.0}
    # The serialization the wait imposed (a compiled step keeps it): from 20, as long as the wait had run (8 us).
    model = _model(tmp_path, events)
    after = attribute_idle(model).gpus[0].after_wait
    lo = model.profile_span_ps[0]
    assert [(int(a - lo) // PS_PER_US, int(b - lo) // PS_PER_US) for a, b in zip(after.start_ps, after.end_ps)] == [
        (20, 28)
    ]


def test_a_blocking_copy_is_a_copy_call_and_a_wait_never_a_launch(tmp_path):
    # cudaMemcpyAsync 12-40 into pageable memory: its copy runs 22-30 and the call returns at 40 (blocking).
    # The GPU idles 20-22 for the copy call, then 30-52: the host was in the blocking call until 40 (host_wait),
    # ran an op 40-45 (host), and the launch 45-52.
    events = [
        launch(0, 5, 1),
        kernel("k1", 10, 10, 1),
        launch(12, 28, 2, name="cudaMemcpyAsync"),
        x_event(
            "gpu_memcpy",
            "Memcpy DtoH (Device -> Pageable)",
            22,
            8,
            pid=0,
            tid=7,
            device=0,
            stream=7,
            correlation=2,
            bytes=4096,
        ),
        _op("aten::add", 40, 5),
        launch(45, 5, 3),
        kernel("k3", 52, 10, 3),
    ]
    assert _causes_us(tmp_path, events, 10) == {"copy_call": 2.0, "host_wait": 10.0, "host": 5.0, "launch": 7.0}


def test_work_without_a_host_call_is_unattributed(tmp_path):
    events = [_op("aten::empty", 0, 1), kernel("k1", 10, 10, 1), kernel("k2", 30, 10, 2)]
    assert _causes_us(tmp_path, events, 10, 40) == {"unattributed": 10.0}


def test_the_report_gives_each_gpu_and_step_its_causes(tmp_path):
    events = [x_event("user_annotation", "ProfilerStep#1", 0, 60), x_event("user_annotation", "ProfilerStep#2", 60, 60)]
    for base in (0, 60):
        events += [
            launch(base, 5, base + 1),
            kernel("k1", base + 10, 10, base + 1),
            _op("aten::add", base + 20, 20),
            launch(base + 40, 5, base + 2),
            kernel("k2", base + 48, 10, base + 2),
        ]
    report = host_report(_model(tmp_path, events))
    idle = report["idle_attribution"]
    assert idle["causes"] == list(IDLE_CAUSES)
    (gpu,) = idle["gpus"]
    assert gpu["device"] == "/device:GPU:0" and gpu["window_ms"] == 0.12
    # Per step: 0-10 before k1 (its call started at 0: launch), host 20-40, launch 40-48, 58-60 untraced tail
    # (k1 of the next step is launched at 60) or no work after (the last step).
    assert [s["step"] for s in gpu["steps"]] == ["ProfilerStep#1", "ProfilerStep#2"]
    first = gpu["steps"][0]["cause_ms"]
    assert (first["launch"], first["host"], first["host_untraced"]) == (0.018, 0.02, 0.002)
    assert gpu["cause_ms"]["host"] == 0.04 and gpu["cause_pct"]["host"] == pytest.approx(33.33)
    assert gpu["steps"][1]["cause_ms"]["unattributed"] == 0.002


@pytest.mark.parametrize(
    "name, expected",
    [
        ("cudaStreamSynchronize", True),
        ("cudaDeviceSynchronize", True),
        ("cuCtxSynchronize", True),
        ("hipStreamSynchronize", True),
        ("cudaEventSynchronize", True),
        ("cudaMemcpy", True),
        ("hipMemcpyWithStream", True),
        ("cuMemcpyDtoH_v2", True),
        ("np.asarray(jax.Array)", True),
        ("PjRtStreamExecutorBuffer::BlockHostUntilReady", True),
        ("$array.py:290 block_until_ready", True),
        ("TFE_TensorHandleResolve", True),
        ("cudaMemcpyAsync", False),
        ("cudaLaunchKernel", False),
        ("LocalDeviceState::WaitFor", False),
        ("aten::add", False),
        ("$numpy asarray", False),
    ],
)
def test_device_waits_are_named_in_every_framework(name, expected):
    assert is_device_wait(name) is expected


def test_a100_8rank_control_waits_little_for_launches(kineto_models):
    # The rank's GPU idles 16.4% of the profile; the launch calls it waited for are 2.8% of it, and the
    # launch finding is not a bottleneck (the host runs its framework ops late: 9.3%, and 2.1% more the step
    # thread stalls inside op calls: a wait, not host work).
    model = kineto_models["a100_8rank_control"]
    report = host_report(model)
    (gpu,) = report["idle_attribution"]["gpus"]
    assert gpu["idle_pct"] == pytest.approx(16.4, abs=0.1)
    assert gpu["cause_pct"]["launch"] < 3.0
    assert gpu["cause_pct"]["host"] == pytest.approx(9.3, abs=0.2)
    assert gpu["cause_pct"]["host_stall"] == pytest.approx(2.1, abs=0.2)
    assert report["summary"]["bottleneck"] != "launch"
    assert all(f["id"] != "launch.gpu_starved_by_launches" for f in report["findings"])


def _alloc_steps(free_us):
    """Three 2 ms steps: a kernel 10-110 us, cudaFree from 120 us for `free_us` (it syncs, then unmaps), the next
    launch right after it and its kernel 20 us later."""
    events = []
    for n, base in ((1, 0), (2, 2000), (3, 4000)):
        events += [
            x_event("user_annotation", f"ProfilerStep#{n}", base, 2000),
            launch(base + 5, 4, 100 * n),
            kernel("gemm_kernel", base + 10, 100, 100 * n),
            launch(base + 120, free_us, 100 * n + 1, name="cudaFree"),
            launch(base + 120 + free_us, 5, 100 * n + 2),
            kernel("gemm_kernel", base + 140 + free_us, 100, 100 * n + 2),
        ]
    return events


def test_allocator_calls_every_step_are_churn_not_warm_up(tmp_path):
    # cudaFree takes 500 us in each of the 3 steps while the GPU idles (110 -> 640 us of each step).
    report = host_report(_model(tmp_path, _alloc_steps(500)))
    finding = next(f for f in report["findings"] if f["id"] == "memory.allocator_churn")
    metrics = finding["evidence"]["metrics"]
    # The GPU idles inside the 500 us calls every step: 1.5 ms of the 6 ms of steps.
    assert (metrics["allocator_stall_ms"], metrics["allocator_stall_pct"], metrics["steps_with_calls"]) == (
        1.5,
        25.0,
        3,
    )
    assert finding["severity"] == "high" and "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" in finding["fix"]
    assert "torch.cuda.empty_cache()" in finding["fix"]
    assert "not warm-up" in finding["summary"]
    # A recurring 1 ms+ free is not first-use setup: no warm-up in the confidence.
    slow = host_report(_model(tmp_path, _alloc_steps(1200)))
    assert not any("arm-up" in reason for reason in slow["summary"]["confidence"]["reasons"])
    assert any(f["id"] == "memory.allocator_churn" for f in slow["findings"])


def _h200_jax(run):
    from tests.data import REAL

    (path,) = sorted((REAL / "h200" / "jax" / run).rglob("*.xplane.pb"))
    return host_report(load_model(path))


def test_a_jitted_jax_step_that_waits_is_not_told_to_jit():
    # launch_jit: a jitted step replayed as a command buffer whose result is read back every step
    # (np.asarray(jax.Array), a 4-byte D2H). After the read the GPU idles while the next call is dispatched:
    # XLA updates the command buffer (0.8 ms) and launches it (cuGraphLaunch, 0.7 ms): launch time. Only the
    # time the host was really blocked in the read is host_wait, the same as the time line's wait; no fix says
    # to jax.jit the step.
    report = _h200_jax("launch_jit")
    (gpu,) = report["idle_attribution"]["gpus"]
    causes = gpu["cause_pct"]
    assert causes["launch"] > 38 and causes["host"] < 13
    assert causes["host_wait"] == pytest.approx(report["summary"]["breakdown_pct"]["host_wait"], abs=1.0)
    host = next(f for f in report["findings"] if f["id"] == "host.gpu_idle_host_busy")
    assert host["evidence"]["metrics"]["host_exposed_pct"] < 13
    for finding in report["findings"]:
        assert "jax.jit the entire step" not in finding["fix"], finding["id"]
    assert "The step is compiled already" in host["fix"]


def test_a_step_thread_building_its_batch_after_a_wait_is_input_prep():
    # input_bound: each step reads its loss (np.asarray waits ~31 ms for the GPU), then the step thread builds
    # the next batch untraced for ~25 ms before its dispatch. That idle is the batch preparation finding #1
    # names (host batch prep), not the wait that came before it.
    report = _h200_jax("input_bound")
    (gpu,) = report["idle_attribution"]["gpus"]
    prep = next(f for f in report["findings"] if f["id"] == "input.host_batch_prep")
    assert prep is report["findings"][0]
    assert gpu["cause_pct"]["input_prep"] == pytest.approx(43.1, abs=0.3)
    assert gpu["cause_pct"]["host_wait"] < 2.5


def test_staging_a_pageable_batch_is_the_host_doing_a_copy():
    # transfer_pageable: PJRT stages each 256 MiB pageable batch on the host (`H2D Dispatch`, ~35 ms) before
    # its copy while the GPU idles: the host doing the copy (copy_call), neither a wait on the device nor host
    # compute.
    report = _h200_jax("transfer_pageable")
    (gpu,) = report["idle_attribution"]["gpus"]
    assert report["findings"][0]["id"] == "transfer.pageable_memory"
    assert gpu["cause_pct"]["copy_call"] == pytest.approx(47.3, abs=0.3)
    assert gpu["cause_pct"]["host_wait"] < 2.5 and gpu["cause_pct"]["host"] < 1


def test_a_step_thread_preparing_its_batch_is_input_work_not_an_input_wait():
    """The jax_inline_loader demo reads, decodes and augments each batch on the step thread (Python-tracer
    events) while the GPU idles: that idle is `input_prep`, the breakdown's input preparation, never a wait."""
    from tests.conftest import REPO_ROOT

    (run,) = (REPO_ROOT / "demo_logs" / "jax_inline_loader" / "plugins" / "profile").iterdir()
    (path,) = run.glob("*.xplane.pb")
    report = host_report(load_model(str(path)))
    (gpu,) = report["idle_attribution"]["gpus"]
    assert gpu["cause_pct"]["input_prep"] == pytest.approx(report["summary"]["breakdown_pct"]["input_prep"], abs=0.1)
    assert gpu["cause_pct"]["input_prep"] > 40 and gpu["cause_pct"]["input"] == 0
    assert report["summary"]["breakdown_pct"]["input_wait"] == 0


def _demo(name):
    from tests.conftest import REPO_ROOT

    (run,) = (REPO_ROOT / "demo_logs" / name / "plugins" / "profile").iterdir()
    (path,) = run.glob("*.xplane.pb")
    return host_report(load_model(str(path)))


def test_replicas_waiting_for_a_straggler_all_wait_on_the_device():
    """multi_gpu_straggler: GPU:2 is slow; the other replicas idle at the end of each step until it is done. GPU:0's
    gap ends with the loss copy queued long before (it waits for every replica: a device wait); GPU:1 and GPU:3's
    gaps end with the next step's input copy, launched once the host's `loss.numpy()` (TFE_TensorHandleResolve)
    returned: the host was blocked on the device, never busy working."""
    gpus = {gpu["device"]: gpu for gpu in _demo("multi_gpu_straggler")["idle_attribution"]["gpus"]}
    assert gpus["/device:GPU:0"]["cause_pct"]["device_wait"] > 1.2
    for name in ("/device:GPU:1", "/device:GPU:3"):
        assert gpus[name]["cause_pct"]["host_wait"] > 1.2 and gpus[name]["cause_pct"]["host"] < 0.1


def test_after_a_sync_the_host_waiting_for_its_input_is_input():
    """input_bound: each step reads its loss (a wait on the device), then waits for its batch from a slow
    tf.data pipeline while the GPU idles: the idle is the input's, not the sync's."""
    (gpu,) = _demo("input_bound")["idle_attribution"]["gpus"]
    assert gpu["cause_pct"]["input"] > 71.5 and gpu["cause_pct"]["host_wait"] < 0.1


def test_a_gpu_without_kernels_gets_no_idle_attribution(v100_trace):
    """The V100 worker ran kernels on GPU:4 and GPU:6; GPU:1 ran 19 copies and no kernel: the host's launches and
    input were for the others, so GPU:1 has no idle causes to give."""
    report = host_report(load_model(str(v100_trace)))
    assert [gpu["device"] for gpu in report["idle_attribution"]["gpus"]] == ["/device:GPU:4", "/device:GPU:6"]
    assert next(d for d in report["devices"] if d["name"] == "/device:GPU:1")["memcpy_count"] == 19


def _xplane_causes_us(tmp_path, builder, start_us, end_us):
    """{cause: us} of GPU 0's idle time over [start_us, end_us) of a TraceBuilder trace, zeros left out."""
    path = tmp_path / "host.xplane.pb"
    builder.write(path)
    gpu = attribute_idle(load_model(str(path))).gpus[0]
    found = gpu.cause_ps([start_us * PS_PER_US], [end_us * PS_PER_US])
    return {cause: int(ps[0]) / PS_PER_US for cause, ps in found.items() if ps[0]}


def test_staging_a_copy_on_the_host_is_copy_call_time(tmp_path):
    # k1 runs 10-110; PJRT's runner thread stages the next batch (`H2D Dispatch`) 150-3150 while the step thread
    # dispatches (PjitFunction 200-5200), then issues the copy at 3160 (it runs at 3200). The GPU idles 110-3200:
    # 40 us with nothing traced, 3000 us of staging and 40 us of the copy call (copy_call), 10 us of dispatch.
    from tb_gpu_advisor.testing import TraceBuilder

    builder = TraceBuilder()
    python, runner = builder.thread("python"), builder.thread("pjrt_async_work_runner")
    gpu = builder.gpu(0)
    gpu.kernel("k1", 10, 100, launch=(python, 0, 5))
    python.event("PjitFunction(step)", 200, 5000)
    runner.event("H2D Dispatch", 150, 3000)
    gpu.memcpy("h2d", 3200, 100, 1 << 20, src="pageable", launch=(runner, 3160, 10))
    assert _xplane_causes_us(tmp_path, builder, 110, 3200) == {"host_untraced": 40.0, "copy_call": 3040.0, "host": 10.0}


def test_a_command_buffer_update_before_its_graph_launch_is_launch_time(tmp_path):
    # After k1 (10-110) XLA updates the command buffer 200-1000 and executes it 1000-1700, whose cuGraphLaunch
    # call 1010-1690 enqueues k2 (1750). The GPU idles 110-1750: 90 us untraced, then the launch path: 1550 us.
    from tb_gpu_advisor.testing import TraceBuilder

    builder = TraceBuilder()
    python = builder.thread("python")
    gpu = builder.gpu(0)
    gpu.kernel("k1", 10, 100, launch=(python, 0, 5))
    python.event("command_buffer::update", 200, 800)
    python.event("command_buffer::execute", 1000, 700)
    gpu.kernel("k2", 1750, 100, launch=(python, 1010, 680))
    assert _xplane_causes_us(tmp_path, builder, 110, 1750) == {"host_untraced": 90.0, "launch": 1550.0}


def test_an_op_that_stalls_untraced_is_a_stall_not_host_work(tmp_path):
    # aten::mul runs 10 us three times, then once for 2000 us with nothing traced inside it (100-2100): a stall
    # (readers.kineto.op_stalls). The GPU idles 20-2110: 50 us untraced, 30 us of the short ops (host), the
    # 2000 us stall (host_stall), 10 us of launch.
    events = [
        launch(0, 5, 1),
        kernel("k1", 10, 10, 1),
        _op("aten::mul", 30, 10),
        _op("aten::mul", 50, 10),
        _op("aten::mul", 70, 10),
        _op("aten::mul", 100, 2000),
        launch(2100, 5, 2),
        kernel("k2", 2110, 10, 2),
    ]
    assert _causes_us(tmp_path, events, 20, 2110) == {
        "host_untraced": 50.0,
        "host": 30.0,
        "host_stall": 2000.0,
        "launch": 10.0,
    }


@pytest.mark.parametrize("sends_a_batch", [True, False])
def test_the_untraced_start_of_a_step_that_sends_a_batch_is_input_prep(tmp_path, sends_a_batch):
    # k1 runs 10-110 before the step (marker 200-10200); the step thread runs untraced until its dispatch
    # (PjitFunction 3000-3400), with a 500 us traced host op 1000-1500 in between; k2 starts at 3200. With a
    # host-to-device copy (3050-3100, its call at 3010) before k2, the step's untraced time before the dispatch
    # built the batch it sent: input_prep (800 + 1500 us); without one it is only untraced. The op and the
    # dispatch are host work, then the copy call and the launch.
    from tb_gpu_advisor.analysis.batch_prep import batch_prep
    from tb_gpu_advisor.analysis.steps import find_steps
    from tb_gpu_advisor.testing import TraceBuilder

    builder = TraceBuilder()
    python = builder.thread("python")
    gpu = builder.gpu(0)
    gpu.kernel("k1", 10, 100, launch=(python, 0, 5))
    python.step(1, 200, 10_000)
    python.event("SomeHostOp", 1000, 500)
    python.event("PjitFunction(step)", 3000, 400)
    if sends_a_batch:
        gpu.memcpy("h2d", 3050, 50, 1 << 20, src="pinned", is_async=True, launch=(python, 3010, 20))
    gpu.kernel("k2", 3200, 100, launch=(python, 3100, 20))
    path = tmp_path / "host.xplane.pb"
    builder.write(path)
    model = load_model(str(path))
    prep = batch_prep(model, find_steps(model))
    gpu_idle = attribute_idle(model, prep_gaps=prep.fed_gaps).gpus[0]
    found = gpu_idle.cause_ps([110 * PS_PER_US], [3200 * PS_PER_US])
    causes = {cause: int(ps[0]) / PS_PER_US for cause, ps in found.items() if ps[0]}
    if sends_a_batch:
        assert causes == {
            "host_untraced": 90.0,
            "input_prep": 2300.0,
            "host": 510.0,
            "copy_call": 40.0,
            "launch": 100.0,
        }
    else:
        assert causes == {"host_untraced": 2390.0, "host": 600.0, "launch": 100.0}


def test_an_op_stall_the_report_calls_a_wait_is_no_host_work_in_the_idle_line():
    # heldout input_worker_loader: the step thread stalls inside backward nodes and aten::_to_copy (4.5 ms per
    # step, nothing traced inside them, in step with the pin-memory thread). Finding #1 (host.op_stall) calls
    # it a wait; the idle line counts the same time as host_stall, and only the rest as host work.
    from tests.data import REAL

    (path,) = sorted((REAL / "h200_heldout" / "torch" / "input_worker_loader").glob("*.pt.trace.json.gz"))
    report = host_report(load_model(str(path)))
    (gpu,) = report["idle_attribution"]["gpus"]
    stall = report["findings"][0]
    assert stall["id"] == "host.op_stall"
    assert gpu["cause_pct"]["host_stall"] == pytest.approx(31.4, abs=0.2)
    assert gpu["cause_ms"]["host_stall"] == pytest.approx(stall["evidence"]["metrics"]["stall_exposed_ms"], abs=0.01)
    assert gpu["cause_pct"]["host"] == pytest.approx(22.2, abs=0.3)
