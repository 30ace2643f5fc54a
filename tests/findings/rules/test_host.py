from tb_gpu_advisor.testing import TraceBuilder
from tests.findings.scenarios import findings_by_id, healthy, kernels, report_of, step_starts


def host_loop(host_events, compute_us=7_000):
    """Each step: `host_events(thread, start)` on the Python thread while the GPU idles, then compute."""
    builder = TraceBuilder()
    python = builder.thread("python")
    gpu = builder.gpu(0)
    for index, start in enumerate(step_starts(python)):
        host_events(builder, python, start, index)
        kernels(gpu, start + 10_000 - compute_us, compute_us)
    return builder


def test_gpu_idle_while_the_host_works():
    report = report_of(host_loop(lambda b, py, start, i: py.event("my_python_code", start, 3_000)))
    finding = findings_by_id(report)["host.gpu_idle_host_busy"]
    assert finding["evidence"]["metrics"] == {"host_exposed_pct": 30.0, "host_exposed_ms": 12.0,
                                              "host_exposed_ms_per_step": 3.0}
    assert finding["evidence"]["pointers"]["host_ops"] == [{"name": "my_python_code", "count": 4, "total_ms": 12.0}]
    assert finding["severity"] == "high" and finding["estimated_speedup"] == 1.43
    assert report["summary"]["verdict"] == "Host-bound: the GPU idles 30% of each step while the host works."


def test_eager_ops():
    def eager(builder, python, start, index):
        for op in range(20):
            python.event("EagerLocalExecute: MatMul", start + 100 * op, 100)

    finding = findings_by_id(report_of(host_loop(eager, compute_us=8_000)))["host.eager_execution"]
    assert finding["evidence"]["metrics"] == {"eager_ops_per_step": 20.0, "eager_op_ms": 8.0, "eager_op_pct": 20.0}
    assert finding["severity"] == "high" and finding["estimated_speedup"] == 1.25


def test_function_calls_are_not_eager_ops():
    def calls(builder, python, start, index):
        for op in range(20):
            python.event("EagerLocalExecute: __inference_train_step_12", start + 100 * op, 100)

    assert "host.eager_execution" not in findings_by_id(report_of(host_loop(calls, compute_us=8_000)))


def test_retracing():
    def retrace(builder, python, start, index):
        python.event(f"EagerLocalExecute: __inference_train_step_{101 if index < 2 else 202}", start, 50)
        if index == 2:
            python.event("_XlaCompile", start + 100, 3_000)

    finding = findings_by_id(report_of(host_loop(retrace, compute_us=6_000)))["host.retracing"]
    assert finding["evidence"]["metrics"] == {"retraced_functions": 1, "compile_ms_after_first_step": 3.0,
                                              "compile_pct_after_first_step": 7.5}
    assert finding["evidence"]["pointers"]["functions"] == {
        "train_step": ["EagerLocalExecute: __inference_train_step_101",
                       "EagerLocalExecute: __inference_train_step_202"]}
    assert finding["evidence"]["pointers"]["steps"] == [{"step": "train 2", "time_ms": 10.0, "overlap_ms": 3.0}]
    assert finding["severity"] == "medium" and finding["estimated_speedup"] == 1.08


def test_compiling_in_the_first_step_only_is_not_retracing():
    def warmup(builder, python, start, index):
        if index == 0:
            python.event("backend_compile_and_load", start, 2_000)

    assert "host.retracing" not in findings_by_id(report_of(host_loop(warmup)))


def test_python_function_in_the_input_pipeline():
    def pipeline(builder, python, start, index):
        python.input_wait(start, 6_000)
        builder.thread("tf_data_iterator_get_next/1").event("Iterator::Root::Prefetch", start, 6_000)
        for call in range(10):
            builder.thread("tf_data_private_threadpool/2").event("EagerPyFunc:EagerPyFunc", start + 1_000 * call,
                                                                 1_000)

    finding = findings_by_id(report_of(host_loop(pipeline, compute_us=4_000)))["host.python_function"]
    metrics = finding["evidence"]["metrics"]
    assert (metrics["py_function_calls"], metrics["py_function_ms"], metrics["py_function_ms_per_call"]) == \
        (40, 40.0, 1.0)
    assert metrics["input_wait_ms"] == 24.0
    assert finding["recoverable_ms"] == 24.0 and finding["estimated_speedup"] == 2.5
    assert finding["category"] == "host"


def test_cpu_kernels_in_a_gpu_run():
    def mkl(builder, python, start, index):
        python.event("model/dense/MatMul:_MklMatMul", start, 1_000)

    finding = findings_by_id(report_of(host_loop(mkl, compute_us=9_000)))["placement.ops_on_host"]
    assert finding["evidence"]["metrics"] == {"cpu_ops": 1, "cpu_op_ms": 4.0, "recoverable_pct": 10.0}
    assert finding["severity"] == "medium" and finding["estimated_speedup"] == 1.11
    assert "log_device_placement" in finding["fix"]


def test_compute_op_on_host_missing_from_device_op_names():
    builder = TraceBuilder()
    python = builder.thread("python")
    gpu = builder.gpu(0)
    for start in step_starts(python):
        python.event("model/dense_1/MatMul:MatMul", start, 500)   # GPU op: its kernel carries the op name
        python.event("model/embedding/MatMul:MatMul", start + 500, 1_500)  # no kernel: ran on the CPU
        kernels(gpu, start + 2_000, 8_000, tf_op="model/dense_1/MatMul:MatMul", **{"grid": (1024, 1, 1)})
    finding = findings_by_id(report_of(builder))["placement.ops_on_host"]
    assert finding["evidence"]["pointers"]["host_ops"] == [
        {"name": "model/embedding/MatMul:MatMul", "count": 4, "total_ms": 6.0}]


def test_host_rules_are_quiet_on_the_healthy_trace():
    categories = {f["category"] for f in report_of(healthy())["findings"]}
    assert not categories & {"host", "threading", "placement"}
