"""host.feeder_blocked: the thread that feeds the device waits on another thread (a queue, a lock) while the
device idles; exact numbers on generated traces, and what it must leave to other findings."""

from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.pipeline import host_report
from tb_gpu_advisor.testing import TraceBuilder
from tb_gpu_advisor.testing.kineto_trace import kernel, launch, trace_text, x_event
from tests.data import real_trace
from tests.findings.scenarios import findings_by_id, kernels, report_of, step_starts

A100 = [
    {
        "id": 0,
        "name": "NVIDIA A100-SXM4-80GB",
        "computeMajor": 8,
        "computeMinor": 0,
        "numSms": 108,
        "totalGlobalMem": 85_899_345_920,
    }
]


def jax_queue_loop(
    wait_us=3_000,
    lock=False,
    producer_busy=True,
    gpu_busy_in_wait=False,
    producer_call=("time", "sleep"),
    cpu_only=False,
    loader="loader",
    loader_id=None,
):
    """6 JAX steps of 10 ms on a GPU (or on XLA's CPU executor when `cpu_only`): each starts with the step thread in
    `queue.get` (or a lock's acquire) for `wait_us`, then dispatches the step; a `loader` thread (or `metrics`,
    holding the lock) runs `producer_call` (a sleep; `("numpy", "stack")` computes) and then puts the batch
    (releases the lock) just before the wait ends."""
    builder = TraceBuilder()
    builder.metadata(jax_version="0.10.2", jaxlib_version="0.10.2")
    python = builder.thread("python")
    other = builder.thread("metrics" if lock else loader, thread_id=loader_id)
    gpu = None if cpu_only else builder.gpu(0)
    executor = builder.thread("tf_XLAEigen/1") if cpu_only else None
    for start in step_starts(python, 6):
        if lock:
            python.python_call("<unknown>", "acquire", start, wait_us)
            other.python_call("<unknown>", "release", start + wait_us - 100, 5)
        else:
            python.python_call("queue.py:154", "get", start, wait_us)
            python.python_call("threading.py:327", "wait", start + 10, wait_us - 20)
            python.python_call("<unknown>", "acquire", start + 20, wait_us - 40)
            if producer_busy:
                other.python_call(*producer_call, start, wait_us - 100)
            other.python_call("queue.py:122", "put", start + wait_us - 100, 50)
        python.event("PjitFunction(train_step)", start + wait_us, 100)
        busy_from = start if gpu_busy_in_wait else start + wait_us + 100
        if cpu_only:
            executor.event("ThunkExecutor::Execute", busy_from, start + 9_900 - busy_from)
            continue
        kernels(
            gpu,
            busy_from,
            start + 9_900 - busy_from,
            name="loop_fusion_1",
            count=2,
            launch_thread=python,
            launch_ahead_us=50,
        )
    return builder


def test_a_step_thread_waiting_on_a_slow_loader():
    report = report_of(jax_queue_loop())
    finding = findings_by_id(report)["host.feeder_blocked"]
    metrics = finding["evidence"]["metrics"]
    # 6 waits of 3 ms in 60 ms of steps, every one with the GPU idle; the loader busy 2.95 of each 3 ms
    assert (metrics["feeder_blocked_ms"], metrics["feeder_blocked_ms_per_step"], metrics["feeder_blocked_pct"]) == (
        18.0,
        3.0,
        30.0,
    )
    assert (metrics["waits"], metrics["wait_kind"], metrics["cause"]) == (6, "queue", "producer_slow")
    assert (metrics["producer_thread"], metrics["producer_busy_pct"]) == ("loader", 98.3)
    assert finding["severity"] == "high" and finding["speedup_kind"] == "bound"
    assert finding["estimated_speedup"] == 1.43  # 10 ms steps without their 3 ms wait
    pointers = finding["evidence"]["pointers"]
    assert pointers["per_step_ms"] == [3.0] * 6
    assert pointers["other_calls"][0] == {"function": "time sleep", "ms_per_step": 2.9, "waits": True}
    assert "loader" in finding["fix"] and "ThreadPoolExecutor" in finding["fix"]
    # the wait is not also host batch preparation
    assert "input.host_batch_prep" not in findings_by_id(report)


def test_a_loader_that_sleeps_is_waiting_not_computing():
    """review3 M9: busy in time.sleep (a stand-in for a read) is the loader waiting; more loaders overlap it."""
    finding = findings_by_id(report_of(jax_queue_loop()))["host.feeder_blocked"]
    metrics = finding["evidence"]["metrics"]
    # 2.9 ms of sleep in each 3 ms wait (of 2.95 ms busy: the put's 0.05 ms inside the wait counts as computing)
    assert (metrics["producer_busy_pct"], metrics["producer_waiting_pct"], metrics["producer_computing_pct"]) == (
        98.3,
        96.7,
        1.6,
    )
    assert (
        "The producer (loader: 6 queue puts or signals during the waits) spends 2.90 ms per step in time sleep, "
        "through 97% of the step thread's waits: waiting, not computing (on I/O or a timer). Several loaders "
        "overlap those waits"
    ) in finding["fix"]
    assert "computing through" not in finding["fix"]


def test_a_loader_that_computes_is_too_slow_and_told_about_the_gil():
    finding = findings_by_id(report_of(jax_queue_loop(producer_call=("numpy", "stack"))))["host.feeder_blocked"]
    metrics = finding["evidence"]["metrics"]
    assert (metrics["producer_waiting_pct"], metrics["producer_computing_pct"]) == (0.0, 98.3)
    assert (
        "The producer (loader: 6 queue puts or signals during the waits) was computing through 98% of them; "
        "it ran numpy stack 2.90 ms"
    ) in finding["fix"]
    assert "holds the GIL" in finding["fix"] and "waiting, not computing" not in finding["fix"]


def test_an_unnamed_loader_is_named_by_the_end_of_its_id_and_cpu_only_gets_an_input_verdict():
    report = report_of(jax_queue_loop(cpu_only=True, loader="", loader_id=2419583553666088706))
    finding = findings_by_id(report)["host.feeder_blocked"]
    metrics = finding["evidence"]["metrics"]
    assert (metrics["device"], metrics["feeder_blocked_pct"], metrics["producer_thread"]) == (
        "xla_cpu",
        30.0,
        "thread 2419583553666088706",
    )
    assert "The producer (the unnamed thread (id …8706): 6 queue puts" in finding["fix"]
    assert "2419583553666088706" not in finding["fix"]
    assert "loaders that wait take little of the cores" in finding["fix"]
    assert finding["severity"] == "medium"  # CPU-only: capped
    assert report["summary"]["verdict"] == (
        "Input-bound: the step thread waits on its loader, through a "
        "queue.Queue (get), 30% of each step (no GPU work in this profile)."
    )


def test_a_producer_idle_during_the_waits_is_said_to_wait_itself():
    finding = findings_by_id(report_of(jax_queue_loop(producer_busy=False)))["host.feeder_blocked"]
    assert finding["evidence"]["metrics"]["producer_busy_pct"] == 1.7
    assert "waiting itself" in finding["fix"]


def test_lock_contention_names_the_holder():
    finding = findings_by_id(report_of(jax_queue_loop(lock=True)))["host.feeder_blocked"]
    metrics = finding["evidence"]["metrics"]
    assert (metrics["wait_kind"], metrics["cause"], metrics["feeder_blocked_ms"]) == ("lock", "lock_contention", 18.0)
    assert "metrics released a lock 6 times" in finding["fix"]
    assert "critical section" in finding["fix_summary"]


def test_quiet_when_short_or_hidden_behind_device_work():
    assert "host.feeder_blocked" not in findings_by_id(report_of(jax_queue_loop(wait_us=300)))
    assert "host.feeder_blocked" not in findings_by_id(report_of(jax_queue_loop(gpu_busy_in_wait=True)))


def test_pytorch_python_tracer_names(tmp_path):
    """PyTorch's with_stack events: the main thread (ProfilerStep, launches) in queue.get, a loader thread's put;
    DataLoader waits inside `enumerate(DataLoader)` stay input.gpu_waits_for_input's."""
    events = []
    for n in range(4):
        base = n * 1_000
        events += [
            x_event("user_annotation", f"ProfilerStep#{n}", base, 1_000),
            x_event("python_function", "queue.py(171): get", base + 10, 300),
            x_event("python_function", "threading.py(320): wait", base + 15, 290),
            x_event("python_function", "<built-in method acquire of _thread.lock object at 0x7f00>", base + 20, 280),
            x_event("python_function", "<built-in function sleep>", base, 290, tid=2),
            x_event("python_function", "queue.py(122): put", base + 295, 10, tid=2),
            launch(base + 320, 4, n),
            kernel("ampere_sgemm_128x64_tn", base + 330, 600, n),
        ]
    path = tmp_path / "rank0.1.pt.trace.json"
    path.write_text(trace_text(events, deviceProperties=A100))
    finding = next(f for f in host_report(load_model(path))["findings"] if f["id"] == "host.feeder_blocked")
    metrics = finding["evidence"]["metrics"]
    assert (metrics["feeder_blocked_ms"], metrics["wait_kind"], metrics["producer_thread"]) == (
        1.2,
        "queue",
        "thread 2",
    )
    assert "num_workers" in finding["fix"]


def test_the_real_jax_capture_with_one_slow_loader():
    """tests/data/real/feeder: the step thread in `$queue.py:154 get` while XLA's CPU executor idles, one loader
    thread in `time.sleep` then `put`; with eight loaders the queue stays full and the rule is quiet."""
    report = host_report(load_model(real_trace("feeder/feeder_one_loader.xplane.pb")))
    assert report["summary"]["verdict"] == (
        "Input-bound: the step thread waits on its loader, through a "
        "queue.Queue (get), 34% of each step (no GPU work in this profile)."
    )
    assert report["summary"]["bottleneck_finding"] == "host.feeder_blocked"
    problem = findings_by_id(report)
    finding = problem["host.feeder_blocked"]
    metrics = finding["evidence"]["metrics"]
    assert (metrics["wait_kind"], metrics["cause"], metrics["device"], metrics["feeder_threads"]) == (
        "queue",
        "producer_slow",
        "xla_cpu",
        "python",
    )
    assert (metrics["feeder_blocked_ms"], metrics["feeder_blocked_pct"], metrics["waits"]) == (127.923, 33.63, 16)
    # the first four steps found batches in the queue (its get took 0.03 ms); the others waited
    assert finding["evidence"]["pointers"]["per_step_ms"][:4] == [0.035, 0.034, 0.034, 0.035]
    assert metrics["producer_thread"] == "thread 2419583553666088706" and metrics["producer_busy_pct"] == 99.6
    assert finding["evidence"]["pointers"]["other_calls"][0]["function"] == "time sleep"
    # the loader sleeps (its stand-in for a read) through the waits: waiting, not computing (review3 M9)
    assert (metrics["producer_waiting_pct"], metrics["producer_computing_pct"]) == (97.7, 1.9)
    assert finding["fix"].startswith(
        "The producer (the unnamed thread (id …8706): 12 queue puts or signals during the waits) spends 7.81 ms per "
        "step in time sleep, through 98% of the step thread's waits: waiting, not computing (on I/O or a timer)."
    )
    assert finding["severity"] == "medium"  # CPU-only: capped
    fixed = findings_by_id(host_report(load_model(real_trace("feeder/feeder_eight_loaders.xplane.pb"))))
    assert "host.feeder_blocked" not in fixed and "input.host_batch_prep" not in fixed
    eight = host_report(load_model(real_trace("feeder/feeder_eight_loaders.xplane.pb")))
    # no wait holds the step back there: its own compute on the CPU (83%) sets the pace
    assert eight["summary"]["bottleneck"] == "host"
    assert eight["summary"]["verdict"].startswith("Host-bound: the step computes on the CPU 83% of its time")
