from tb_gpu_advisor.testing import TraceBuilder
from tests.findings.scenarios import findings_by_id, healthy, kernels, report_of, step_starts

INPUT_IDS = {
    "input.gpu_waits_for_input",
    "input.no_prefetch",
    "input.sequential_map",
    "input.python_generator",
    "input.demanded_file_reads",
    "input.no_cache",
    "input.tf_data_service",
}


def waiting_loop(stages=(), gpus=1, private_threads=()):
    """4 steps of 10 ms: 6 ms blocked in IteratorGetNext (GPU idle), then 4 ms of Tensor Core GEMMs.

    `stages` are (Iterator name, offset us, duration us) recorded on the consumer thread in every step;
    `private_threads` are (thread name, Iterator/function name, duration us) per step on other threads."""
    builder = TraceBuilder()
    python = builder.thread("python")
    consumer = builder.thread("tf_data_iterator_get_next/1")
    for start in step_starts(python):
        consumer.input_wait(start, 6_000)
        for name, offset, duration in stages:
            consumer.event(name, start + offset, duration)
        for thread, name, duration in private_threads:
            builder.thread(thread).event(name, start + 6_000, duration)
        for ordinal in range(gpus):
            kernels(builder.gpu(ordinal), start + 6_000, 4_000)
    return builder


def test_gpu_waits_for_input_measures_the_wait_and_the_speedup():
    report = report_of(waiting_loop())
    finding = findings_by_id(report)["input.gpu_waits_for_input"]
    assert finding["severity"] == "high"
    assert finding["category"] == "input"
    assert finding["evidence"]["metrics"] == {
        "input_wait_pct": 60.0,
        "input_wait_ms": 24.0,
        "input_wait_ms_per_step": 6.0,
        "step_time_ms_mean": 10.0,
    }
    assert finding["evidence"]["threshold"] == {
        "metric": "input_wait_pct",
        "value": 60.0,
        "high": 20.0,
        "medium": 5.0,
        "crossed": "high",
    }
    assert finding["evidence"]["pointers"]["time_ranges_ms"] == [[1.0, 7.0], [11.0, 17.0], [21.0, 27.0]]
    assert finding["estimated_speedup"] == 2.5
    assert finding["recoverable_ms"] == 24.0
    assert "upper bound" in finding["speedup_basis"]
    assert report["summary"]["bottleneck"] == "input"
    assert report["summary"]["verdict"] == "Input-bound: the GPU waits for input 60% of each step."
    assert report["summary"]["bottleneck_finding"] == "input.gpu_waits_for_input"
    assert report["findings"][0]["id"] == "input.gpu_waits_for_input"
    # no Iterator:: events: the stage rules cannot tell anything and stay quiet
    assert set(findings_by_id(report)) & INPUT_IDS == {"input.gpu_waits_for_input"}


def test_moderate_wait_is_medium_and_small_wait_is_quiet():
    def loop(wait_us):
        builder = TraceBuilder()
        python = builder.thread("python")
        for start in step_starts(python):
            python.input_wait(start, wait_us)
            kernels(builder.gpu(0), start + wait_us, 10_000 - wait_us)
        return report_of(builder)

    assert findings_by_id(loop(1_000))["input.gpu_waits_for_input"]["severity"] == "medium"
    assert "input.gpu_waits_for_input" not in findings_by_id(loop(400))


def test_sequential_map_without_prefetch_reading_files_on_demand():
    stages = (
        ("Iterator::Root", 0, 5_900),
        ("Iterator::Root::Map", 10, 5_800),
        ("Iterator::Root::Map::TFRecord", 20, 2_000),
    )
    found = findings_by_id(report_of(waiting_loop(stages)))
    no_prefetch = found["input.no_prefetch"]
    # prefetch can hide at most min(wait, rest of the step) = min(6, 4) ms per step
    assert no_prefetch["recoverable_ms"] == 16.0
    assert no_prefetch["estimated_speedup"] == 1.67
    assert no_prefetch["severity"] == "high"
    assert no_prefetch["evidence"]["metrics"]["recoverable_pct"] == 40.0
    sequential = found["input.sequential_map"]
    assert sequential["recoverable_ms"] == 24.0 and sequential["estimated_speedup"] == 2.5
    assert sequential["evidence"]["pointers"]["tf_data_stages"] == ["Iterator::Root::Map"]
    assert "one element at a time" in sequential["summary"]
    demanded = found["input.demanded_file_reads"]
    assert demanded["evidence"]["metrics"]["demanded_read_ms"] == 8.0
    assert demanded["recoverable_ms"] == 8.0 and demanded["estimated_speedup"] == 1.25
    assert demanded["severity"] == "high"
    no_cache = found["input.no_cache"]
    assert no_cache["evidence"]["metrics"]["file_read_ms"] == 8.0
    assert no_cache["estimated_speedup"] == 1.25
    assert "input.python_generator" not in found and "input.tf_data_service" not in found


def test_tuned_pipeline_gets_no_stage_advice_and_says_so():
    stages = (("Iterator::Root", 0, 5_900), ("Iterator::Root::Prefetch", 10, 5_800))
    private = (
        ("tf_data_iterator_resource/7", "Iterator::Root::Prefetch::ParallelMapV2", 3_000),
        ("tf_data_iterator_resource/8", "Iterator::Root::Prefetch::ParallelMapV2::Interleave::TFRecord", 1_000),
        ("tf_data_iterator_resource/8", "Iterator::Root::Prefetch::ParallelMapV2::Cache", 500),
    )
    found = findings_by_id(report_of(waiting_loop(stages, private_threads=private)))
    assert set(found) & INPUT_IDS == {"input.gpu_waits_for_input"}
    assert found["input.gpu_waits_for_input"]["fix"].startswith(
        "This pipeline already prefetches and maps in parallel (Iterator::Root::Prefetch::ParallelMapV2::"
        "Interleave::TFRecord)"
    )


def test_map_and_batch_is_sequential_when_its_threads_keep_one_core_busy():
    stages = (("Iterator::Root", 0, 5_900), ("Iterator::Root::MapAndBatch", 10, 5_800))
    one_core = (("tf_data_private_threadpool/5", "EagerPyFunc:EagerPyFunc", 5_000),)
    found = findings_by_id(report_of(waiting_loop(stages, private_threads=one_core)))
    assert found["input.sequential_map"]["evidence"]["metrics"]["map_threads_busy_cores"] == 0.5
    assert (
        "its worker threads are inside the map function 50% of the time (one element at a time)"
        in found["input.sequential_map"]["summary"]
    )
    two_cores = (
        ("tf_data_private_threadpool/5", "EagerPyFunc:EagerPyFunc", 8_000),
        ("tf_data_private_threadpool/6", "EagerPyFunc:EagerPyFunc", 8_000),
    )
    assert "input.sequential_map" not in findings_by_id(report_of(waiting_loop(stages, private_threads=two_cores)))


def test_python_generator():
    stages = (("Iterator::Root", 0, 5_900), ("Iterator::Root::Prefetch", 10, 5_800))
    private = (("tf_data_iterator_resource/7", "Iterator::Root::Prefetch::Generator", 3_000),)
    found = findings_by_id(report_of(waiting_loop(stages, private_threads=private)))
    generator = found["input.python_generator"]
    assert generator["evidence"]["metrics"]["generator_calls"] == 4
    assert generator["evidence"]["metrics"]["generator_ms"] == 12.0
    assert generator["estimated_speedup"] == 2.5 and generator["severity"] == "high"
    assert "input.no_prefetch" not in found


def test_tf_data_service_for_several_starving_gpus_behind_a_tuned_pipeline():
    stages = (("Iterator::Root", 0, 5_900), ("Iterator::Root::Prefetch", 10, 5_800))
    private = (("tf_data_iterator_resource/7", "Iterator::Root::Prefetch::ParallelMapV2::TensorSlice", 3_000),)
    found = findings_by_id(report_of(waiting_loop(stages, gpus=2, private_threads=private)))
    service = found["input.tf_data_service"]
    assert service["severity"] == "medium"  # an infrastructure change: never above medium
    assert service["evidence"]["metrics"]["active_gpus"] == 2
    assert service["estimated_speedup"] == 2.5
    single = findings_by_id(report_of(waiting_loop(stages, gpus=1, private_threads=private)))
    assert "input.tf_data_service" not in single


def test_input_rules_are_quiet_on_the_healthy_trace():
    assert not set(findings_by_id(report_of(healthy()))) & INPUT_IDS


def test_cpu_only_trace_gets_stage_findings_but_no_gpu_wait_finding():
    builder = TraceBuilder()
    python = builder.thread("python")
    consumer = builder.thread("tf_data_iterator_get_next/1")
    for start in step_starts(python):
        consumer.input_wait(start, 9_000)
        consumer.event("Iterator::Root::Map", start + 10, 8_900)
        python.event("train_function", start + 9_000, 1_000)
    report = report_of(builder)
    found = findings_by_id(report)
    assert "input.gpu_waits_for_input" not in found
    assert {"input.no_prefetch", "input.sequential_map"} <= set(found)
    assert report["summary"]["bottleneck"] == "input"
    assert report["summary"]["verdict"] == (
        "Input-bound: the training step waits for tf.data 90% of its time (no GPU work in this profile)."
    )
    assert report["summary"]["bottleneck_finding"] == report["findings"][0]["id"]


def producer_loop(
    producer_us,
    consumer_us,
    stage="Iterator::Root::Map",
    cpu_count=None,
    pool_threads=0,
    compute_threads=0,
    eigen_threads=0,
    gpu=True,
):
    """4 steps: the step blocks `producer_us` in IteratorGetNext while a pipeline without prefetch produces the
    batch on the consumer thread, then computes `consumer_us` on the GPU (on the host thread when not `gpu`).
    `pool_threads` tf.data private-pool threads, `compute_threads` inter-op (`tf_Compute`) threads and
    `eigen_threads` intra-op (`tf_numa_-1_Eigen`) threads each run one event."""
    builder = TraceBuilder()
    if cpu_count:
        builder.metadata(cpu_count=cpu_count)
    python = builder.thread("python")
    step_us = producer_us + consumer_us
    for start in step_starts(python, step_us=step_us):
        python.input_wait(start, producer_us)
        python.event("Iterator::Root", start + 1, producer_us - 2)
        python.event(stage, start + 2, producer_us - 4)
        if gpu:
            kernels(builder.gpu(0), start + producer_us, consumer_us)
        else:
            python.event("MatMul", start + producer_us + 1, consumer_us - 2)
    for name, count in (
        ("tf_data_private_threadpool", pool_threads),
        ("tf_Compute", compute_threads),
        ("tf_numa_-1_Eigen", eigen_threads),
    ):
        for index in range(count):
            builder.thread(f"{name}/{index + 1}").event("ParallelMapProduce" if "data" in name else "MatMul", 0, 1)
    return builder


def test_prefetch_gives_max_of_producer_and_consumer():
    """A producer of 5 ms per batch against a 10 ms step: 15 ms now, max(5, 10) with prefetch: 1.5x; 30 ms
    against 10 ms: 40 -> 30 ms, 1.33x. A model, worded "about"."""
    for producer_us, expected in ((5_000, 1.5), (30_000, 1.33)):
        finding = findings_by_id(report_of(producer_loop(producer_us, 10_000)))["input.no_prefetch"]
        assert finding["estimated_speedup"] == expected
        assert finding["speedup_kind"] == "model"


def test_parallel_map_divides_the_producer_by_the_cores():
    """A 30 ms sequential map against a 10 ms step: on 4 recorded cores the producer takes 7.5 ms, so the step
    becomes max(7.5, 10) = 10 ms (40 -> 10: 4x, a model); on 2 cores max(15, 10) = 15 ms (2.67x)."""
    four = findings_by_id(report_of(producer_loop(30_000, 10_000, cpu_count=4)))["input.sequential_map"]
    assert four["estimated_speedup"] == 4.0 and four["speedup_kind"] == "model"
    assert four["evidence"]["metrics"]["host_cores"] == 4
    assert four["evidence"]["metrics"]["host_cores_source"] == "metadata"
    two = findings_by_id(report_of(producer_loop(30_000, 10_000, cpu_count=2)))["input.sequential_map"]
    assert two["estimated_speedup"] == 2.67


def test_the_intra_op_and_inter_op_pools_agreeing_give_the_core_count():
    """No core count in the metadata, but TensorFlow's intra-op (Eigen) and inter-op pools both show 2 threads:
    2 cores, a model, max(30 / 2, 10) = 15 ms: 40 -> 15, 2.67x. tf.data's private pools do not count: several
    pools (one per iterator) share their thread name."""
    found = findings_by_id(
        report_of(producer_loop(30_000, 10_000, eigen_threads=2, compute_threads=2, pool_threads=6))
    )["input.sequential_map"]
    assert found["speedup_kind"] == "model" and found["estimated_speedup"] == 2.67
    assert found["evidence"]["metrics"]["host_cores"] == 2
    assert found["evidence"]["metrics"]["host_cores_source"] == "agreeing thread pools"
    assert "both have 2 threads" in found["speedup_basis"]


def test_parallel_map_without_a_known_core_count_is_the_all_wait_bound():
    """Two inter-op threads and nothing to agree with (tf.data's 3 private-pool threads do not count) say only
    that the host has at least 2 cores: the speedup is at least max(60 / 2, 10) = 30 ms (70 -> 30: 2.33x) and at
    most all of the wait gone (70 -> 10: 7x): the estimate is that bound, the basis says the least; with no pool
    at all, the same bound."""
    seen = findings_by_id(report_of(producer_loop(60_000, 10_000, pool_threads=3, compute_threads=2)))[
        "input.sequential_map"
    ]
    assert seen["speedup_kind"] == "bound" and seen["estimated_speedup"] == 7.0
    assert seen["evidence"]["metrics"]["host_cores_source"] == "thread pools"
    assert seen["evidence"]["metrics"]["host_cores"] == 2
    assert "at least 2.33x" in seen["speedup_basis"] and "at least 2 cores" in seen["speedup_basis"]
    disagreeing = findings_by_id(report_of(producer_loop(60_000, 10_000, eigen_threads=4, compute_threads=2)))[
        "input.sequential_map"
    ]
    assert disagreeing["speedup_kind"] == "bound" and disagreeing["evidence"]["metrics"]["host_cores"] == 4
    unknown = findings_by_id(report_of(producer_loop(60_000, 10_000)))["input.sequential_map"]
    assert unknown["speedup_kind"] == "bound" and unknown["estimated_speedup"] == 7.0
    assert unknown["evidence"]["metrics"]["host_cores"] is None


def test_a_map_that_may_wait_is_bounded_by_the_pool():
    """A Python callback or a file read in the map may wait on I/O or sleep, which parallel calls overlap up to
    the pool's threads, or compute, which a Python function does under the GIL with no gain: on 2 recorded cores a
    60 ms map against a 10 ms step becomes at best max(30, 10): 70 -> 30 ms, up to 2.33x (a bound); the basis
    names the larger pool as the way further, up to all of the wait gone (7x), and the summary the GIL."""
    far = producer_loop(60_000, 10_000, cpu_count=2)
    far.thread("tf_data_private_threadpool/1").event("EagerPyFunc:EagerPyFunc", 0, 10)
    waiting = findings_by_id(report_of(far))["input.sequential_map"]
    assert waiting["estimated_speedup"] == 2.33 and waiting["speedup_kind"] == "bound"
    basis = waiting["speedup_basis"]
    assert "EagerPyFunc: reached if its calls wait" in basis and "private_threadpool_size" in basis
    assert "up to 7.00x" in basis and "GIL" in basis
    assert "not while it computes under Python's GIL" in waiting["summary"]
    reads = producer_loop(60_000, 10_000, cpu_count=2)
    reads.thread("tf_data_private_threadpool/1").event("ReadFile:ReadFile", 0, 10)
    read = findings_by_id(report_of(reads))["input.sequential_map"]
    assert (read["estimated_speedup"], read["speedup_kind"]) == (2.33, "bound")
    assert "GIL" not in read["speedup_basis"] and "GIL" not in read["summary"]
    cpu = findings_by_id(report_of(producer_loop(60_000, 10_000, cpu_count=2)))["input.sequential_map"]
    assert (cpu["estimated_speedup"], cpu["speedup_kind"]) == (2.33, "model")
    assert "may wait" not in cpu["speedup_basis"]


def test_on_a_cpu_only_run_the_map_shares_the_cores_with_the_step():
    """No GPU: the step's own ops run on the cores the map's calls would use, so max(producer / cores, consumer)
    is no upper bound either (review final3 7: the pipeline's fix can change the step's compute on the same cores;
    a parallel map measured 1.61x beside a 1.36x 'up to'): an estimate, "about"."""
    found = findings_by_id(report_of(producer_loop(60_000, 10_000, cpu_count=2, gpu=False)))["input.sequential_map"]
    assert (found["estimated_speedup"], found["speedup_kind"]) == (2.33, "model")
    assert "CPU-only run" in found["speedup_basis"]


def test_a_single_pool_thread_says_nothing_about_the_cores():
    one = findings_by_id(report_of(producer_loop(30_000, 10_000, pool_threads=1)))["input.sequential_map"]
    assert one["evidence"]["metrics"]["host_cores"] is None and one["estimated_speedup"] == 4.0


def test_a_cpu_only_pytorch_rank_waiting_for_a_main_process_dataloader_is_input_bound():
    """ddp_cpu slow_input rank 2 (review generalB 4): 20 ms of injected sleep per batch in a num_workers=0
    DataLoader, 57% of the step, on a CPU-only gloo rank: the input finding fires with the worker advice."""
    from tb_gpu_advisor.pipeline import analyze_host_file
    from tests.data import REAL

    (path,) = (REAL / "ddp_cpu" / "slow_input").glob("rank2.*.pt.trace.json.gz")
    report = analyze_host_file(str(path))
    finding = findings_by_id(report)["input.main_process_loader"]
    assert finding["severity"] == "high" and 55 < finding["evidence"]["metrics"]["input_wait_pct"] < 60
    assert "num_workers" in finding["fix_summary"]
    assert report["summary"]["bottleneck_finding"] == "input.main_process_loader"
