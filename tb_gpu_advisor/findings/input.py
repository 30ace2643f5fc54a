"""Input-pipeline rules: the GPU waiting on tf.data, and which tf.data stage is at fault when the trace shows it."""

from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import Evidence, Finding, capped, grade, ladder
from tb_gpu_advisor.findings.thresholds import INPUT_HIGH_PCT, INPUT_MEDIUM_PCT, TF_DATA_SERVICE_MIN_GPUS
from tb_gpu_advisor.findings.tf_data import FILE_READ_STAGES
from tb_gpu_advisor.model import intervals

UPPER_BOUND = "upper bound: the step time if all of the {what} went away"


def _wait(ctx):
    """(exposed input wait ms, its share %) over the analysis window."""
    wait_ms = ctx.category_ms("input_wait")
    return wait_ms, ctx.share_pct(wait_ms)


def _wait_metrics(ctx, wait_ms, share):
    return {"input_wait_pct": share, "input_wait_ms": round(wait_ms, 3),
            "input_wait_ms_per_step": ctx.per_step_ms(wait_ms), "step_time_ms_mean": ctx.mean_step_ms}


def _wait_pointers(ctx):
    waits = intervals.subtract(ctx.host.input_waits, ctx.gpu_busy)
    return {"time_ranges_ms": ctx.longest_ranges_ms(waits), "steps": ctx.steps_overlapping(waits),
            "tf_data_stages": list(ctx.pipeline.paths[:5])}


def _input_finding(ctx, finding_id, summary, recoverable_ms, basis, extra_metrics=None, pointers=None,
                   fix_note=""):
    """A finding graded on the input ladder by its recoverable share; None below the medium level."""
    wait_ms, share = _wait(ctx)
    recoverable_share = ctx.share_pct(recoverable_ms)
    severity = grade(recoverable_share, INPUT_HIGH_PCT, INPUT_MEDIUM_PCT, low=0.0)
    metrics = {**_wait_metrics(ctx, wait_ms, share), **(extra_metrics or {}),
               "recoverable_pct": recoverable_share}
    return Finding(id=finding_id, severity=severity, summary=summary,
                   evidence=Evidence(metrics, ladder("input_wait_pct", share, INPUT_HIGH_PCT,
                                                        INPUT_MEDIUM_PCT),
                                     {**_wait_pointers(ctx), **(pointers or {})}),
                   recoverable_ms=recoverable_ms, window_ms=ctx.window_ms, speedup_basis=basis,
                   fix_note=fix_note)


def _waits_enough(ctx):
    wait_ms, share = _wait(ctx)
    return wait_ms > 0 and share >= INPUT_MEDIUM_PCT


def gpu_waits_for_input(ctx):
    """The GPU idles while the step blocks in IteratorGetNext (only with a GPU: on CPU-only runs the same
    cores produce and consume, so waiting is not idle hardware)."""
    if not ctx.has_gpu or not _waits_enough(ctx):
        return None
    wait_ms, share = _wait(ctx)
    pipeline = ctx.pipeline
    note = ""
    if pipeline.per_device_generators:
        note = (f"The trace shows tf.distribute's per-device feed ({pipeline.per_device_generators[0]}), which "
                "pulls batches from the source dataset through RemoteCall __inference__next_func; the source "
                "pipeline's own stages are not in the trace. Tune the source dataset (below) before "
                "strategy.experimental_distribute_dataset(ds).")
    elif pipeline.is_tuned:
        note = (f"This pipeline already prefetches and maps in parallel ({pipeline.paths[0]}), so the producer "
                "itself is too slow: see the other findings, cache decoded data, precompute offline, or use "
                "the tf.data service.")
    severity = grade(share, INPUT_HIGH_PCT, INPUT_MEDIUM_PCT)
    return Finding(
        id="input.gpu_waits_for_input", severity=severity,
        summary=f"The GPU waits for input {share:.1f}% of the step time "
                f"({ctx.time_text(wait_ms)}).",
        evidence=Evidence(_wait_metrics(ctx, wait_ms, share),
                          ladder("input_wait_pct", share, INPUT_HIGH_PCT, INPUT_MEDIUM_PCT), _wait_pointers(ctx)),
        recoverable_ms=wait_ms, window_ms=ctx.window_ms,
        speedup_basis=UPPER_BOUND.format(what="GPU idle time spent waiting for input"), fix_note=note)


def no_prefetch(ctx):
    """tf.data in use, no Prefetch stage: producer and step take turns. Prefetch can hide at most the part of
    the wait that the rest of the step could cover, per step."""
    pipeline = ctx.pipeline
    if not pipeline.in_use or pipeline.has_prefetch or not _waits_enough(ctx) or not ctx.steps:
        return None
    overlap = sum(min(s["breakdown_ms"]["input_wait"], s["time_ms"] - s["breakdown_ms"]["input_wait"])
                  for s in ctx.steps)
    return _input_finding(
        ctx, "input.no_prefetch",
        f"No Prefetch stage in the tf.data pipeline ({pipeline.paths[0]}); input and step do not overlap.",
        overlap, "upper bound: each step's input wait overlapped with the rest of that step",
        pointers={"tf_data_stages": list(pipeline.paths[:5])})


def sequential_map(ctx):
    """A Map stage, or a MapAndBatch whose worker threads are busy ~one core, while the step waits."""
    pipeline = ctx.pipeline
    if not pipeline.sequential_maps or not _waits_enough(ctx):
        return None
    wait_ms, _ = _wait(ctx)
    stage = pipeline.sequential_maps[0]
    concurrency = pipeline.map_concurrency
    how = f"its worker threads keep {concurrency:.2f} cores busy on average" if concurrency is not None and \
        not stage.endswith("::Map") else "a Map stage runs its function one element at a time"
    return _input_finding(
        ctx, "input.sequential_map", f"The tf.data map runs sequentially ({stage}: {how}).", wait_ms,
        UPPER_BOUND.format(what="input wait (a parallel map can hide at most all of it)"),
        extra_metrics={"map_threads_busy_cores": concurrency},
        pointers={"tf_data_stages": list(pipeline.sequential_maps)})


def python_generator(ctx):
    """A Generator stage (Dataset.from_generator) feeds a pipeline the step waits on."""
    pipeline = ctx.pipeline
    if not pipeline.generators or not _waits_enough(ctx):
        return None
    wait_ms, _ = _wait(ctx)
    count, total = ctx.host.op_totals.get(pipeline.generators[0], (0, 0))
    return _input_finding(
        ctx, "input.python_generator",
        f"The input comes from a Python generator ({pipeline.generators[0]}), which runs under the GIL.",
        wait_ms, UPPER_BOUND.format(what="input wait"),
        extra_metrics={"generator_calls": count, "generator_ms": ms(total)},
        pointers={"tf_data_stages": list(pipeline.generators)})


def _read_ms(ctx, paths):
    return sum(ms(ctx.host.op_totals.get(path, (0, 0))[1]) for path in paths)


def demanded_file_reads(ctx):
    """XProf's "demanded" reads: a file reader with nothing above it that reads ahead."""
    pipeline = ctx.pipeline
    if not pipeline.demanded_reads or not _waits_enough(ctx):
        return None
    wait_ms, _ = _wait(ctx)
    read_ms = _read_ms(ctx, pipeline.demanded_reads)
    return _input_finding(
        ctx, "input.demanded_file_reads",
        f"Files are read on demand ({pipeline.demanded_reads[0]}: {read_ms:.2f} ms of reads).",
        min(wait_ms, read_ms), "upper bound: the input wait spent in on-demand reads removed",
        extra_metrics={"demanded_read_ms": round(read_ms, 3)},
        pointers={"tf_data_stages": list(pipeline.demanded_reads)})


def no_cache(ctx):
    """Files are read and the pipeline has no cache stage while the step waits."""
    pipeline = ctx.pipeline
    if not pipeline.file_reads or pipeline.has_cache or not _waits_enough(ctx):
        return None
    wait_ms, _ = _wait(ctx)
    read_ms = _read_ms(ctx, pipeline.file_reads)
    return _input_finding(
        ctx, "input.no_cache", f"Files are read every epoch and nothing is cached ({read_ms:.2f} ms of reads).",
        min(wait_ms, read_ms), "upper bound: the input wait spent reading files removed",
        extra_metrics={"file_read_ms": round(read_ms, 3)},
        pointers={"tf_data_stages": [p for p in pipeline.file_reads if p.rpartition("::")[2] in FILE_READ_STAGES]})


def tf_data_service(ctx):
    """Several GPUs starve behind a pipeline that already prefetches and maps in parallel."""
    pipeline = ctx.pipeline
    wait_ms, share = _wait(ctx)
    if len(ctx.active_gpus) < TF_DATA_SERVICE_MIN_GPUS or not pipeline.is_tuned or share < INPUT_HIGH_PCT:
        return None
    finding = _input_finding(
        ctx, "input.tf_data_service",
        f"{len(ctx.active_gpus)} GPUs wait {share:.1f}% of the step on a pipeline that already prefetches and "
        "maps in parallel.", wait_ms, UPPER_BOUND.format(what="input wait"),
        extra_metrics={"active_gpus": len(ctx.active_gpus)})
    return capped(finding, "medium")


RULES = (gpu_waits_for_input, no_prefetch, sequential_map, python_generator, demanded_file_reads, no_cache,
         tf_data_service)
