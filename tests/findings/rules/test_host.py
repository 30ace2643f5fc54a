from tb_gpu_advisor.testing import TraceBuilder
from tb_gpu_advisor.testing.hlo import single_op_module
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
    assert finding["evidence"]["metrics"] == {
        "host_exposed_pct": 30.0,
        "host_exposed_ms": 12.0,
        "host_exposed_ms_per_step": 3.0,
        "host_wait_exposed_pct": 0.0,
    }
    assert finding["evidence"]["pointers"]["host_ops"] == [{"name": "my_python_code", "count": 4, "total_ms": 12.0}]
    assert finding["severity"] == "high" and finding["estimated_speedup"] == 1.43
    assert report["summary"]["verdict"] == "Host-bound: the GPU idles 30% of each step while the host works."
    assert finding["summary"].endswith("runs runtime or Python work (3.00 ms per step).")


def test_sub_millisecond_times_per_step_are_in_microseconds():
    """One vocabulary: launch_bound_fixed once read "(0.07 ms per step)" where every other field uses µs."""
    report = report_of(host_loop(lambda b, py, start, i: py.event("my_python_code", start, 700), compute_us=2_000))
    finding = findings_by_id(report)["host.gpu_idle_host_busy"]
    assert finding["summary"].endswith("runs runtime or Python work (700.0 µs per step).")


def test_eager_ops():
    def eager(builder, python, start, index):
        for op in range(20):
            python.event("EagerLocalExecute: MatMul", start + 100 * op, 100)

    finding = findings_by_id(report_of(host_loop(eager, compute_us=8_000)))["host.eager_execution"]
    assert finding["evidence"]["metrics"] == {
        "eager_ops_per_step": 20.0,
        "eager_op_ms": 8.0,
        "eager_op_pct": 20.0,
        "python_between_ops_ms": 0.0,
        "dispatch_and_python_pct": 20.0,
        "op_work_kept_ms": 0.0,
    }
    assert finding["summary"] == (
        "20 ops per step run one at a time: their calls take 2.00 ms per step (20.0%). "
        "Compiled, the step would keep the GPU's busy time: 8.00 ms of the 10.00 ms step "
        "(80.0%); the calls' dispatch is removed."
    )
    # compiled, the step keeps the GPU's 8 ms of each 10 ms
    assert finding["severity"] == "high" and finding["estimated_speedup"] == 1.25
    assert finding["speedup_kind"] == "model"


def test_compiled_eager_step_keeps_each_ops_work():
    """20 eager ops of 400 us: 10 variable reads whose kernel run takes 50 us (the shortest run: the eager
    runtime's cost per op) and 10 MatMuls whose run takes 350 us, then 2 ms of GPU work. Compiled, each op keeps
    its run less 50 us: 10 x 300 us = 3 ms of work, longer than the GPU's 2 ms, so a 10 ms step takes 3 ms."""

    def eager(builder, python, start, index):
        for op in range(20):
            name, run = ("MatMul", 350) if op % 2 else ("ReadVariableOp", 50)
            python.event(f"EagerLocalExecute: {name}", start + 400 * op, 400)
            python.event("KernelAndDeviceOp::Run", start + 400 * op + 20, run)

    finding = findings_by_id(report_of(host_loop(eager, compute_us=2_000)))["host.eager_execution"]
    assert finding["evidence"]["metrics"]["op_work_kept_ms"] == 12.0
    assert finding["estimated_speedup"] == 3.33 and finding["speedup_kind"] == "model"
    assert "shortest op run in the trace (50 µs)" in finding["speedup_basis"]


def test_eager_step_without_gpu_counts_the_python_between_ops():
    """CPU only, 10 ms steps: 1 ms of input wait, then 20 eager ops of 200 us, one every 450 us (each runs its
    kernel: 10 of 20 us, 10 of 120 us). Dispatch is 4 ms a step; the untraced Python between the ops the other
    5 ms: together 90%. Compiled, a step keeps 10 x 100 us of work (each run less the 20 us shortest): 10x. The
    verdict is host-bound by eager dispatch, not "no GPU work"."""
    builder = TraceBuilder()
    python = builder.thread("python")
    for start in step_starts(python):
        python.input_wait(start, 1_000)
        for op in range(20):
            t = start + 1_000 + 450 * op
            python.event("EagerLocalExecute: MatMul", t, 200)
            python.event("KernelAndDeviceOp::Run", t + 50, 120 if op % 2 else 20)
    report = report_of(builder)
    finding = findings_by_id(report)["host.eager_execution"]
    metrics = finding["evidence"]["metrics"]
    assert (metrics["eager_op_pct"], metrics["python_between_ops_ms"], metrics["dispatch_and_python_pct"]) == (
        40.0,
        20.0,
        90.0,
    )
    assert metrics["op_work_kept_ms"] == 4.0 and finding["estimated_speedup"] == 10.0
    assert finding["severity"] == "high" and finding["recoverable_ms"] == 36.0
    # The summary states what the model keeps, so its shares give the estimate: 100 / 10.0% = 10x.
    assert finding["summary"] == (
        "20 ops per step run one at a time: their calls take 4.00 ms per step (40.0%) "
        "and the untraced Python between them 5.00 ms per step (50.0%). Compiled, the "
        "step would keep only the ops' own work: 1.00 ms of the 10.00 ms step (10.0%); "
        "the calls' dispatch, the Python between them and the rest of the host's work "
        "in the step are removed."
    )
    assert finding["speedup_basis"].endswith("the Python dispatch between ops is removed")
    assert report["summary"]["bottleneck"] == "host"
    assert report["summary"]["bottleneck_finding"] == "host.eager_execution"
    assert report["summary"]["verdict"] == (
        "Host-bound (eager dispatch): ops run one at a time, and their calls "
        "and the Python between them take 90% of the step (no GPU work in "
        "this profile)."
    )


def jax_op_by_op(thunk_of, modules=()):
    """JAX without jit: 10 ms steps of 40 jnp ops, each a 240 us `PjitFunction(<call>)` with one 50 us PjRt
    execution 100 us in; `thunk_of(op)` gives (call, thunk, start offset, work us, with its `end:` event) of the
    op's thunk on XLA's CPU client thread. `modules`: (id, name, HLO bytes) in the metadata."""
    builder = TraceBuilder()
    builder.metadata(jax_version="0.4.30")
    for module in modules:
        builder.hlo_module(*module)
    python = builder.thread("python")
    xla = builder.thread("tf_XLAPjRtCpuClient/7")
    for start in step_starts(python):
        for op in range(40):
            t = start + 250 * op
            call, thunk, offset, work, ends = thunk_of(op)
            python.event(f"PjitFunction({call})", t, 240)
            python.event("CommonPjRtLoadedExecutable::ExecuteHelperOnSingleDevice", t + 100, 50)
            xla.event(thunk, t + offset, work)
            if ends:
                xla.event(f"end: {thunk}", t + offset + work, 1)
    return builder


def test_jax_ops_dispatched_one_by_one():
    """JAX without jit: 40 jnp ops a step, each a PjitFunction with one PjRt execution (50 us), its work 20 us on
    XLA's CPU client thread; 10 ms steps and no GPU. Jitted, a step keeps 40 x 20 us of work plus one call's
    cost (its 50 us execution less the 20 us of work it ran): 0.83 ms, about 12.05x."""
    builder = jax_op_by_op(lambda op: ("add", "add_fusion", 160, 20, False))
    finding = findings_by_id(report_of(builder))["host.eager_execution"]
    assert finding["evidence"]["metrics"]["eager_ops_per_step"] == 40.0
    assert finding["evidence"]["metrics"]["op_work_kept_ms"] == 3.32
    assert finding["estimated_speedup"] == round(10 / 0.83, 2) and finding["speedup_kind"] == "model"
    assert "jax.jit" in finding["fix"] and "tf.function" not in finding["fix"]


def test_jax_op_by_op_jitted_fuses_the_element_wise_thunks():
    """JAX without jit, with the modules of its jnp ops in the trace: 10 ms steps, each 20 `PjitFunction(add)`
    whose thunk `wrapped_add` (an element-wise fusion) runs 20 us and 20 `PjitFunction(matmul)` whose thunk
    `ynn_fusion` (a dot) runs 30 us, each thunk followed by its 1 us `end:` event on XLA's CPU thread; one PjRt
    execution of 50 us per op. Per step: 1,040 us of work, 420 us of it the element-wise thunks; a call costs
    (40 x 50 - 1,040) / 40 = 24 us. Jitted, the add fuses into its neighbours: a step keeps 1,040 - 420 + 24 =
    644 us, 10 / 0.644 = 15.53x."""
    modules = (
        (66, "jit_add", single_op_module("jit_add", "wrapped_add", "add").to_bytes()),
        (70, "jit_matmul", single_op_module("jit_matmul", "ynn_fusion", "dot").to_bytes()),
    )
    builder = jax_op_by_op(
        lambda op: ("add", "wrapped_add", 110, 20, True) if op % 2 else ("matmul", "ynn_fusion", 110, 30, True), modules
    )
    finding = findings_by_id(report_of(builder))["host.eager_execution"]
    metrics = finding["evidence"]["metrics"]
    assert (metrics["op_work_kept_ms"], metrics["op_work_fused_ms"]) == (2.576, 1.68)
    # Counting the fused thunks as zero is optimistic (a fused loop still computes), keeping the dots' op-by-op
    # time pessimistic: a model, whose basis gives the step with the fused 1.68 ms kept: 4.256 ms of 40 (1.064 ms a
    # step), 40 / 4.256 = 9.40x.
    assert finding["estimated_speedup"] == round(10 / 0.644, 2) and finding["speedup_kind"] == "model"
    assert finding["summary"].endswith(
        "Compiled, the step would keep only the computations' work other than element-wise and data movement, "
        "and one call per step: 644.0 µs of the 10.00 ms step (6.4%); the calls' dispatch, the Python between "
        "them and the element-wise and data-movement thunks (fused) are removed. The fused thunks counted as zero "
        "are the optimistic part (a fused loop still computes; with their time kept the step would keep 1.06 ms, "
        "10.6%), the dots kept at their op-by-op time the pessimistic one."
    )
    assert finding["speedup_basis"] == (
        "model: compiled, the step keeps the computations' work on XLA's CPU threads other than element-wise and "
        "data movement (dots, reductions and the rest) plus one call per step (24 µs: the executions' time less "
        "their work, per execution) (2.58 ms over the window) and the device's busy time (0 ms), whichever is "
        "longer; the Python dispatch between ops is removed, and so are the 80 thunks that ran element-wise or "
        "data-movement instructions alone (1.68 ms: wrapped_add), counted as zero since jit fuses them into "
        "their neighbours. Two approximations pull in opposite directions: the zero is optimistic, since a fused "
        "loop still does the arithmetic and one pass over memory (with that work kept, about 9.40x), while the "
        "dots and reductions keep their op-by-op time, which jit can also shorten"
    )


def test_jax_op_by_op_without_modules_keeps_all_the_work():
    """The same step with no HLO in the trace: nothing tells which thunks fuse, so all the work stays."""
    builder = jax_op_by_op(lambda op: ("add", "wrapped_add", 110, 20, False))
    finding = findings_by_id(report_of(builder))["host.eager_execution"]
    assert "op_work_fused_ms" not in finding["evidence"]["metrics"]
    assert finding["estimated_speedup"] == round(10 / 0.83, 2)
    assert "the trace carries no HLO of these computations" in finding["speedup_basis"]


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
    assert finding["evidence"]["metrics"] == {
        "retraced_functions": 1,
        "compile_ms_after_first_step": 3.0,
        "compile_pct_after_first_step": 7.5,
    }
    assert finding["evidence"]["pointers"]["functions"] == {
        "train_step": ["EagerLocalExecute: __inference_train_step_101", "EagerLocalExecute: __inference_train_step_202"]
    }
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
            builder.thread("tf_data_private_threadpool/2").event("EagerPyFunc:EagerPyFunc", start + 1_000 * call, 1_000)

    finding = findings_by_id(report_of(host_loop(pipeline, compute_us=4_000)))["host.python_function"]
    metrics = finding["evidence"]["metrics"]
    assert (metrics["py_function_calls"], metrics["py_function_ms"], metrics["py_function_ms_per_call"]) == (
        40,
        40.0,
        1.0,
    )
    assert metrics["input_wait_ms"] == 24.0
    # one call at a time: nothing shows whether the function waits or computes, so the wait it paces is not sized
    assert finding["recoverable_ms"] == 0.0 and finding["estimated_speedup"] == 1.0
    assert finding["speedup_basis"].startswith("none: the input wait they pace (60.0% of the step) is not their work")
    assert finding["severity"] == "medium" and finding["category"] == "host"


def test_python_calls_that_last_longer_together_compute_under_the_gil():
    """Calls alone take 1 ms, two at once 2 ms each (they take turns on the GIL): the function computes, so
    TensorFlow ops in its place gain up to the input wait, and a larger tf.data pool gains nothing."""

    def pipeline(builder, python, start, index):
        python.input_wait(start, 6_000)
        builder.thread("tf_data_iterator_get_next/1").event("Iterator::Root::Prefetch", start, 6_000)
        for call in range(2):
            builder.thread("tf_data_private_threadpool/2").event("PyFunc:PyFunc", start + 1_000 * call, 1_000)
        for call in range(2):
            for thread in (3, 4):
                builder.thread(f"tf_data_private_threadpool/{thread}").event(
                    "PyFunc:PyFunc", start + 2_000 + 2_000 * call, 2_000
                )

    found = findings_by_id(report_of(host_loop(pipeline, compute_us=4_000)))
    finding = found["host.python_function"]
    metrics = finding["evidence"]["metrics"]
    assert (metrics["py_function_alone_ms"], metrics["py_function_overlapped_ms"]) == (1.0, 2.0)
    assert metrics["py_function_overlapped_in_flight"] == 2.0
    assert finding["recoverable_ms"] == 24.0 and finding["speedup_basis"].startswith("upper bound")
    assert (
        "they compute under the GIL (a call lasts 1.00 ms alone, 2.00 ms with 2.00 in flight)"
        in (finding["speedup_basis"])
    )
    assert "input.map_pool_saturated" not in found


def test_cpu_kernels_in_a_gpu_run():
    def mkl(builder, python, start, index):
        python.event("model/dense/MatMul:_MklMatMul", start, 1_000)

    finding = findings_by_id(report_of(host_loop(mkl, compute_us=9_000)))["placement.ops_on_host"]
    assert finding["evidence"]["metrics"] == {
        "cpu_ops": 1,
        "cpu_op_ms": 4.0,
        "copies_around": 0,
        "copy_bytes_around": 0,
        "recoverable_pct": 10.0,
    }
    assert finding["severity"] == "medium" and finding["estimated_speedup"] == 1.11
    assert "log_device_placement" in finding["fix"] and "soft device" in finding["fix"]


def placed_loop(cpu_op_us=1_500, other_thread_launches=False):
    """Each 10 ms step: a GPU-placed MatMul whose run launches its kernel, then a MatMul that launches nothing,
    its input read back before it (D2H) and its result sent after it (H2D), then 6 ms of GPU compute."""
    builder = TraceBuilder()
    python = builder.thread("python")
    compute = builder.thread("tf_Compute/1")
    other = builder.thread("tf_gpu_private/2")
    gpu = builder.gpu(0)
    for start in step_starts(python):
        compute.event("model/dense_1/MatMul:MatMul", start, 500)
        gpu.kernel("ampere_sgemm_128x64_nn", start + 100, 300, launch=(compute, start + 50, 10))
        gpu.memcpy("d2h", start + 550, 100, 400_000, launch=(compute, start + 520, 10))
        compute.event("model/embedding/MatMul:MatMul", start + 700, cpu_op_us)
        if other_thread_launches:  # another thread's launch falls inside the CPU op's run in one step of four
            gpu.kernel("other", start + 900, 10, launch=(other, start + 800, 5)) if start < 2_000 else None
        gpu.memcpy(
            "h2d", start + 700 + cpu_op_us + 50, 100, 400_000, launch=(compute, start + 700 + cpu_op_us + 10, 10)
        )
        kernels(gpu, start + 4_000, 6_000)
    return builder


def test_compute_op_that_launched_nothing_is_named_with_the_copies_around_it():
    finding = findings_by_id(report_of(placed_loop()))["placement.ops_on_host"]
    assert finding["evidence"]["pointers"]["host_ops"] == [
        {
            "name": "model/embedding/MatMul:MatMul",
            "count": 4,
            "total_ms": 6.0,
            "runs_without_launch": 4,
            "copies_around": 8,
        }
    ]
    metrics = finding["evidence"]["metrics"]
    assert (metrics["cpu_ops"], metrics["copies_around"], metrics["copy_bytes_around"]) == (1, 8, 3_200_000)
    assert finding["fix"].startswith(
        "Largest: model/embedding/MatMul:MatMul (MatMul), 1.50 ms per step, 4 of 4 "
        "runs without a GPU launch; the device copies around them: 4 device-to-host just "
        "before and 4 host-to-device just after."
    )
    # another thread launching during one of its runs does not make it a GPU op
    assert "placement.ops_on_host" in findings_by_id(report_of(placed_loop(other_thread_launches=True)))


def test_cpu_ops_under_one_percent_are_quiet():
    assert "placement.ops_on_host" not in findings_by_id(report_of(placed_loop(cpu_op_us=50)))


def test_host_rules_are_quiet_on_the_healthy_trace():
    categories = {f["category"] for f in report_of(healthy())["findings"]}
    assert not categories & {"host", "threading", "placement"}


def test_python_function_once_per_batch_in_tf_data_names_the_input_wait_it_paces():
    # A tf.data map over whole batches: one 5 ms PyFunc (tf.numpy_function) per step on a tf.data thread,
    # prefetched: the step waits for input only 1.5 ms of its 10 ms.
    def prefetched(builder, python, start, index):
        python.input_wait(start, 1_500)
        builder.thread("tf_data_iterator_get_next/1").event("Iterator::Root::Prefetch", start, 1_500)
        builder.thread("tf_data_private_threadpool/2").event("PyFunc:PyFunc", start + 1_000, 5_000)

    finding = findings_by_id(report_of(host_loop(prefetched, compute_us=4_000)))["host.python_function"]
    # the wait it paces (6 ms over the 4 steps) is in the basis, not sized as its work
    assert finding["recoverable_ms"] == 0.0 and finding["evidence"]["metrics"]["py_function_in_tf_data"] is True
    assert "(15.0% of the step)" in finding["speedup_basis"]
    assert "tf.numpy_function, op PyFunc" in finding["summary"] and "tf.py_function" not in finding["summary"]
    assert "on a tf.data thread" in finding["summary"] and "inside the training step" not in finding["summary"]


def test_without_step_markers_shares_are_of_the_profiled_time():
    """A profile without step markers has no step: the host share is "of the profiled time" (a100_alexnet_sync
    once read "The GPU idles 75.8% of the step")."""
    builder = TraceBuilder()
    python = builder.thread("python")
    gpu = builder.gpu(0)
    for index in range(4):
        start = 1_000 + index * 10_000
        python.event("my_python_code", start, 3_000)
        kernels(gpu, start + 3_000, 7_000)
    report = report_of(builder)
    assert not report["steps"]
    summary = findings_by_id(report)["host.gpu_idle_host_busy"]["summary"]
    assert "% of the profiled time while the host runs" in summary and "of the step" not in summary
