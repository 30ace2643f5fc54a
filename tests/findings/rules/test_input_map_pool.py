"""input.map_pool_saturated: a parallel tf.data map whose pool threads are all inside ops that may wait."""

from tb_gpu_advisor.testing import TraceBuilder
from tests.findings.scenarios import findings_by_id, kernels, report_of, step_starts

POOL = "input.map_pool_saturated"
PARALLEL = ("Iterator::Root::Prefetch::ParallelMapV2",)


def pool_loop(
    threads=2,
    busy_us=9_000,
    op="EagerPyFunc:EagerPyFunc",
    wait_us=6_000,
    stages=PARALLEL,
    cpu_count=2,
    idle_threads=0,
    other_op=None,
):
    """CPU-only, 4 steps of 10 ms: the step blocks `wait_us` in IteratorGetNext behind a prefetching pipeline
    with `stages`, then computes. In each step every one of `threads` tf.data private-pool threads runs `op` for
    `busy_us` (and `other_op`, (name, us), after it); `idle_threads` more private-pool threads run one 10 us event."""
    builder = TraceBuilder()
    if cpu_count:
        builder.metadata(cpu_count=cpu_count)
    python = builder.thread("python")
    consumer = builder.thread("tf_data_iterator_get_next/1")
    producer = builder.thread("tf_data_iterator_resource/1")
    pool = [builder.thread(f"tf_data_private_threadpool/{index + 1}") for index in range(threads + idle_threads)]
    for start in step_starts(python):
        consumer.input_wait(start, wait_us)
        consumer.event("Iterator::Root", start + 10, wait_us - 20)
        consumer.event("Iterator::Root::Prefetch", start + 20, wait_us - 40)
        for stage in stages:
            producer.event(stage, start + 100, 9_000)
        python.event("train_function", start + wait_us, 10_000 - wait_us)
        for thread in pool[:threads]:
            thread.event(op, start + 500, busy_us)
            if other_op:
                thread.event(other_op[0], start + 500 + busy_us, other_op[1])
        for thread in pool[threads:]:
            thread.event("ExecutorDoneCallback", start + 500, 10)
    return builder


def test_a_saturated_pool_of_waiting_python_calls_is_the_limit():
    """2 pool threads each inside a tf.py_function 9 of every 10 ms (1.8 at a time over the 40 ms window) while
    the step waits 6 of 10 ms: all of the wait gone, 10 / (10 - 6) = 2.5x, high on the input ladder; an estimate,
    not a bound, on this profile without a GPU (the pipeline shares the step's cores: review final3 7).
    The 2 threads are as many as the 2 recorded cores: the whole of a default pool."""
    report = report_of(pool_loop())
    found = findings_by_id(report)
    pool = found[POOL]
    assert (pool["severity"], pool["category"], pool["speedup_kind"]) == ("high", "input", "model")
    assert (pool["estimated_speedup"], pool["recoverable_ms"]) == (2.5, 24.0)
    metrics = pool["evidence"]["metrics"]
    assert metrics == {
        "input_wait_pct": 60.0,
        "input_wait_ms": 24.0,
        "input_wait_ms_per_step": 6.0,
        "step_time_ms_mean": 10.0,
        "map_threads": 2,
        "map_threads_busy_cores": 1.8,
        "map_waiting_share": 1.0,
        "host_cores": 2,
        "host_cores_source": "metadata",
        "recoverable_pct": 60.0,
    }
    assert pool["evidence"]["pointers"]["tf_data_stages"] == list(PARALLEL)
    assert pool["evidence"]["pointers"]["host_ops"] == [
        {"name": "EagerPyFunc:EagerPyFunc", "count": 8, "total_ms": 72.0}
    ]
    summary = pool["summary"]
    assert summary.startswith(
        "tf.data's thread pool caps the parallel map (Iterator::Root::Prefetch::ParallelMapV2): "
        "its 2 threads are inside the map function 1.80 at a time on average, 100% of that in "
        "tf.py_function (op EagerPyFunc), which may wait, while the step waits for input 60.0%"
    )
    # the GIL caveat is in the summary itself, not only in the basis
    assert "a Python function that computes holds the GIL and gains nothing" in summary
    assert "GIL" in pool["speedup_basis"] and pool["speedup_basis"].startswith("estimate: all of the input wait gone")
    assert "private_threadpool_size" in pool["fix"] and "AUTOTUNE" in pool["fix"]
    assert "interleave" in pool["fix"] and "tf.data.experimental.service" in pool["fix"]
    assert "input.sequential_map" not in found
    # the Python function finding is not sized (no call runs alone: waiting or computing is not in the trace), so
    # they share no time; the pool names the input verdict on a CPU-only run
    assert "host.python_function" not in pool["overlaps_with"]
    assert report["summary"]["bottleneck"] == "input"
    assert report["summary"]["bottleneck_finding"] == POOL


def test_file_reads_that_saturate_the_pool_get_no_gil_caveat():
    """ReadFile in a ParallelMapV2 seen only as the prefix of a deeper stage: the stage is named, no GIL words."""
    found = findings_by_id(
        report_of(pool_loop(op="ReadFile:ReadFile", stages=("Iterator::Root::Prefetch::ParallelMapV2::TensorSlice",)))
    )
    pool = found[POOL]
    assert pool["evidence"]["pointers"]["tf_data_stages"] == ["Iterator::Root::Prefetch::ParallelMapV2"]
    assert "tf.io.read_file (op ReadFile)" in pool["summary"]
    assert "GIL" not in pool["summary"] and "GIL" not in pool["speedup_basis"]


def test_a_pool_with_threads_to_spare_is_not_the_limit():
    """Busy 7 of 10 ms each: 1.4 threads at a time of 2 (70% < 80%)."""
    assert POOL not in findings_by_id(report_of(pool_loop(busy_us=7_000)))
    # 8 ms each is 1.6 of 2 (80%): the limit
    assert POOL in findings_by_id(report_of(pool_loop(busy_us=8_000)))


def test_a_pool_that_computes_is_not_this_finding():
    """No op that may wait: the pool's threads compute, and a larger pool would need cores, not threads."""
    assert POOL not in findings_by_id(report_of(pool_loop(op="DecodeJpeg:DecodeJpeg")))
    # a 1 ms read beside 8 ms of decoding: 11% of the threads' time may wait, less than half
    mostly_decoding = pool_loop(op="DecodeJpeg:DecodeJpeg", busy_us=8_000, other_op=("ReadFile:ReadFile", 1_000))
    assert POOL not in findings_by_id(report_of(mostly_decoding))


def test_a_sequential_map_is_the_sequential_map_finding():
    found = findings_by_id(report_of(pool_loop(stages=("Iterator::Root::Prefetch::Map",))))
    assert POOL not in found and "input.sequential_map" in found


def test_fewer_pool_threads_than_cores_may_hide_free_threads():
    """8 recorded cores, 2 pool threads seen: a default pool has 8, so the unseen 6 were free (or the pool was set
    smaller): the trace cannot say the pool is the limit. Without a core count it cannot say either."""
    assert POOL not in findings_by_id(report_of(pool_loop(cpu_count=8)))
    assert POOL in findings_by_id(report_of(pool_loop(cpu_count=2)))
    # no core count at all (no metadata, no intra-op or inter-op pool): the threads seen may not be the whole pool
    assert POOL not in findings_by_id(report_of(pool_loop(cpu_count=None)))
    # the intra-op and inter-op pools agree on 2 threads: 2 cores, as many as the pool threads seen
    agreeing = pool_loop(cpu_count=None)
    for kind in ("tf_numa_-1_Eigen", "tf_Compute"):
        for index in range(2):
            agreeing.thread(f"{kind}/{index + 1}").event("MatMul:MatMul", 0, 1)
    pool = findings_by_id(report_of(agreeing))[POOL]
    assert (pool["evidence"]["metrics"]["host_cores"], pool["evidence"]["metrics"]["host_cores_source"]) == (
        2,
        "agreeing thread pools",
    )


def test_idle_threads_under_the_same_name_keep_it_quiet():
    """Several pools share the name (tf.distribute's per-replica iterators): 2 saturated threads and 2 idle ones
    are 1.8 of 4 threads busy, not a saturated pool."""
    assert POOL not in findings_by_id(report_of(pool_loop(idle_threads=2)))


def test_a_small_wait_or_one_thread_is_quiet():
    assert POOL not in findings_by_id(report_of(pool_loop(wait_us=400)))
    assert POOL not in findings_by_id(report_of(pool_loop(threads=1, busy_us=9_500)))


def test_on_a_gpu_run_it_shares_the_wait_with_the_gpu_wait_finding():
    """The same pipeline feeding a GPU step: both findings claim the same 6 ms of each step's wait."""
    builder = pool_loop()
    gpu = builder.gpu(0)
    for start in (1_000, 11_000, 21_000, 31_000):
        kernels(gpu, start + 6_000, 4_000)
    found = findings_by_id(report_of(builder))
    pool, wait = found[POOL], found["input.gpu_waits_for_input"]
    assert pool["estimated_speedup"] == wait["estimated_speedup"] == 2.5
    assert "input.gpu_waits_for_input" in pool["overlaps_with"] and POOL in wait["overlaps_with"]
