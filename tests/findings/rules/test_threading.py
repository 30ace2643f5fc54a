"""Threading findings: the host's cores saturated while the GPU waits for the host."""

from tb_gpu_advisor.testing import TraceBuilder
from tests.findings.scenarios import findings_by_id, kernels, report_of, step_starts


def input_starved(cpu_count=None, workers=4, busy_us=9_000):
    """Each 10 ms step: the GPU waits 5 ms in IteratorGetNext, then computes 5 ms; `workers` tf.data threads are
    busy `busy_us` of each step."""
    builder = TraceBuilder()
    python = builder.thread("python")
    gpu = builder.gpu(0)
    if cpu_count is not None:
        builder.metadata(cpu_count=cpu_count)
    for start in step_starts(python, 6):
        python.input_wait(start, 5_000)
        kernels(gpu, start + 5_000, 5_000, count=2, launch_thread=python)
        for worker in range(workers):
            builder.thread(f"tf_data_private_threadpool/{worker}").event(
                "Iterator::Root::ParallelMapV2", start, busy_us
            )
    return builder


def test_saturated_host_with_too_few_cores_for_the_input_pipeline():
    report = report_of(input_starved(cpu_count=4))
    finding = findings_by_id(report)["threading.host_cpu_saturated"]
    metrics = finding["evidence"]["metrics"]
    # 4 threads busy 9 of every 10 ms (3.6 cores), the python thread's launches (4 x 5 us a step) and 5 ms waits
    # over a 60 ms span; the waits are not counted as busy
    assert metrics["machine_cores"] == 4 and metrics["tf_data_busy_cores"] == 3.6
    assert 3.6 <= metrics["host_busy_cores"] < 3.7
    assert metrics["gpu_waits_on_host_pct"] == 50.0
    assert finding["severity"] == "medium"
    assert "too few cores for this input pipeline" in finding["fix"]
    assert report["host_cpu"]["machine_cores"] == 4
    assert report["host_cpu"]["threads"][0] == {"kind": "tf_data_private_threadpool", "count": 4, "busy_cores": 3.6}


def test_no_saturation_claim_with_cores_to_spare_or_unknown_cores():
    assert "threading.host_cpu_saturated" not in findings_by_id(report_of(input_starved(cpu_count=16)))
    unknown = report_of(input_starved())
    assert "threading.host_cpu_saturated" not in findings_by_id(unknown)
    assert unknown["host_cpu"]["machine_cores"] is None and unknown["host_cpu"]["load_ratio"] is None


def test_busy_cores_do_not_matter_when_the_gpu_does_not_wait():
    builder = TraceBuilder()
    python = builder.thread("python")
    gpu = builder.gpu(0)
    builder.metadata(cpu_count=2)
    for start in step_starts(python, 4):
        kernels(gpu, start, 10_000, count=2, launch_thread=python)
        for worker in range(2):
            builder.thread(f"tf_data_private_threadpool/{worker}").event("Iterator::Root::Prefetch", start, 9_900)
    assert "threading.host_cpu_saturated" not in findings_by_id(report_of(builder))


def _fix_texts():
    """Every fix text of the catalog and its framework idioms and variants."""
    import dataclasses
    from tb_gpu_advisor.findings.catalog import CATALOG, VARIANTS

    texts, todo = [], list(CATALOG.values()) + [e for entries in VARIANTS.values() for e in entries.values()]
    while todo:
        item = todo.pop()
        if isinstance(item, tuple):
            todo.extend(item)
        elif dataclasses.is_dataclass(item):
            for field in dataclasses.fields(item):
                value = getattr(item, field.name)
                if field.name == "fix" and isinstance(value, str):
                    texts.append(value)
                elif dataclasses.is_dataclass(value) or isinstance(value, tuple):
                    todo.append(value)
    return texts


def test_thread_counts_in_fixes_stay_positive_on_small_hosts():
    """`os.cpu_count() - 4` is 0 or less on a 4-core host, which TensorFlow takes silently as "use the default":
    the advice would do nothing there. Every count a fix derives from the cores is bounded below by max()."""
    import re

    derived = re.compile(r"(os\.cpu_count\(\)|\bnum_cores\b|\bcores\b)\s*(-|//)\s*\w")
    texts = _fix_texts()
    assert any("private_threadpool_size" in text for text in texts)
    for text in texts:
        for line in text.splitlines():
            code = line.split("#", 1)[0]
            for found in derived.finditer(code):
                assert "max(" in code[: found.start()], f"unbounded thread count in a fix: {line.strip()}"
    fixes = "\n".join(texts)
    assert "private_threadpool_size = max(2, num_cores - 4)" in fixes
    assert "private_threadpool_size = max(2, os.cpu_count() - 4)" in fixes
