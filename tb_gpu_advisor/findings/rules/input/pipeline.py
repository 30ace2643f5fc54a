"""The stages of a tf.data pipeline: sequential or saturated maps, Python generators, file reads, cache, service."""

from __future__ import annotations

from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import Finding, capped, estimated
from tb_gpu_advisor.analysis.tf_data import (
    FILE_READ_STAGES,
    ITERATOR_PREFIX,
    MAP_SEQUENTIAL_CONCURRENCY,
    MAP_THREADS,
    PARALLEL_MAP_STAGES,
    stages_of,
)
from tb_gpu_advisor.findings.host_time import op_rows
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.model.host import PY_FUNCTION_TYPES, TF_DATA_PY_FUNCTION_TAG
from tb_gpu_advisor.findings.thresholds import (
    INPUT_HIGH_PCT,
    MAP_POOL_BUSY_SHARE,
    MAP_POOL_WAITING_SHARE,
    TF_DATA_SERVICE_MIN_GPUS,
)
from tb_gpu_advisor.whatif import input as whatif_input
from tb_gpu_advisor.findings.input_steps import input_steps
from tb_gpu_advisor.findings.rules.input.waits import UPPER_BOUND, _input_finding, _wait, _waits_enough

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.findings.context import Context


# Op types whose time in a map may be waiting, not computing (Python callbacks, file reads): with them the map's
# wall time says nothing about the cores it needs.
MAP_WAITING_OP_TYPES = frozenset({"EagerPyFunc", "PyFunc", "PyFuncStateless", "ReadFile"})


def _may_wait(name):
    return name.rpartition(":")[2] in MAP_WAITING_OP_TYPES


def _map_threads_text(concurrency):
    """What the map's worker threads do, in wall time (the trace does not say whether it is CPU time)."""
    if concurrency <= 1:
        return f"its worker threads are inside the map function {concurrency:.0%} of the time (one element at a time)"
    return f"its worker threads are inside the map function {concurrency:.2f} at a time on average"


def sequential_map(ctx: Context) -> Finding | None:
    """A Map stage, or a MapAndBatch whose worker threads are busy ~one core, while the step waits. The fix
    spreads the producer over the host's cores (whatif.input.parallel_map)."""
    pipeline = ctx.pipeline
    if not pipeline.sequential_maps or not _waits_enough(ctx):
        return None
    stage = pipeline.sequential_maps[0]
    concurrency = pipeline.map_concurrency
    in_flight = ctx.host.map_ops_in_flight
    how = (
        _map_threads_text(concurrency)
        if concurrency is not None and not stage.endswith("::Map")
        else "a Map stage runs its function one element at a time"
    )
    if in_flight is not None and concurrency is not None and concurrency >= MAP_SEQUENTIAL_CONCURRENCY:
        how = (
            f"its map function's ops run {in_flight:.2f} at a time while any runs, one element at a time; the "
            f"worker threads look busy {concurrency:.2f} at a time because the executor's callbacks outlast the ops"
        )
    cores = ctx.analysis.configuration.cores_seen
    waiting = sorted({name.rpartition(":")[2] for name, _, _ in ctx.host_ops(_may_wait)})
    estimate = whatif_input.parallel_map(
        input_steps(ctx), pipeline.has_prefetch, cores, tuple(waiting), steps_on_gpu=ctx.has_gpu
    )
    caveat = ""
    python = any(op in whatif_input.PYTHON_CALLBACK_OPS for op in waiting)
    calls = ctx.analysis.py_function_calls
    holds_gil = python and calls is not None and calls.computes is True
    if holds_gil:
        python_share = ctx.in_window_ps(ctx.host.tagged.get(TF_DATA_PY_FUNCTION_TAG, intervals.EMPTY)) / 1e9
        python_share = min(1.0, python_share / ctx.window_ms) if ctx.window_ms > 0 else 0.0
        estimate = whatif_input.python_floor(estimate, input_steps(ctx), python_share, calls.gil_evidence)
        caveat = (
            f" Its function calls Python that holds the GIL (a call runs {python_share:.0%} of the time): parallel calls "
            "cannot run that Python at once; replacing it with TensorFlow ops can."
        )
    elif python:
        caveat = (
            " Its function calls Python: parallel calls help while the function waits (I/O, sleep), not while "
            "it computes under Python's GIL."
        )
    finding = _input_finding(
        ctx,
        "input.sequential_map",
        f"The tf.data map runs sequentially ({stage}: {how}).{caveat}",
        estimate.recoverable_of(ctx.window_ms),
        estimate.basis,
        extra_metrics={
            "map_threads_busy_cores": concurrency,
            "host_cores": None if cores is None else cores.count,
            "host_cores_source": None if cores is None else cores.source,
        },
        pointers={"tf_data_stages": list(pipeline.sequential_maps)},
    )
    if finding is not None and python:
        # One call at a time cannot show whether the function waits or computes under the GIL: a bound, at most
        # medium.
        finding = capped(finding, "medium")
    return estimated(finding, estimate)


# The Python APIs behind the op types of MAP_WAITING_OP_TYPES, as the summary names them.
_WAITING_OP_APIS = {
    "EagerPyFunc": "tf.py_function",
    "PyFunc": "tf.numpy_function",
    "PyFuncStateless": "tf.numpy_function",
    "ReadFile": "tf.io.read_file",
}


def map_pool_saturated(ctx: Context) -> Finding | None:
    """A parallel map whose function runs ops that may wait (MAP_WAITING_OP_TYPES) keeps every thread of tf.data's
    private pool busy while the step waits: the pool, not the calls, caps the producer, and only a larger pool
    lets more calls wait at once. The threads seen (those that ran something) are taken as the pool's size only
    when they are no fewer than the host's cores (the default size), so without a core count it stays quiet; where
    several pools share the thread name (tf.distribute's per-replica
    iterators), idle threads of the others lower the busy share and the rule stays quiet. The op totals are the
    profile's: the waiting ops are taken to run on the pool's threads."""
    pipeline = ctx.pipeline
    threads, concurrency = pipeline.map_threads, pipeline.map_concurrency
    if (
        pipeline.sequential_maps
        or not pipeline.stages & PARALLEL_MAP_STAGES
        or threads < 2
        or concurrency is None
        or concurrency < MAP_POOL_BUSY_SHARE * threads
        or not _waits_enough(ctx)
    ):
        return None
    cores = ctx.analysis.configuration.cores_seen
    if cores is None or threads < cores.count:
        return None  # a default pool has a thread per core: unseen threads may have been free
    ops = ctx.host_ops(_may_wait)
    pool_busy_ps = ctx.host.thread_busy[MAP_THREADS][1]
    waiting_share = min(1.0, sum(total for _, _, total in ops) / pool_busy_ps) if pool_busy_ps > 0 else 0.0
    if waiting_share < MAP_POOL_WAITING_SHARE:
        return None
    wait_ms, share = _wait(ctx)
    kinds = sorted({name.rpartition(":")[2] for name, _, _ in ops})
    apis = ", ".join(f"{_WAITING_OP_APIS[kind]} (op {kind})" for kind in kinds)
    python = [kind for kind in kinds if kind in PY_FUNCTION_TYPES]
    calls = ctx.analysis.py_function_calls
    if python and len(python) == len(kinds) and calls is not None and calls.serialized:
        return (
            None  # the Python calls last longer the more run at once: they compute under the GIL, threads gain nothing
        )
    gil = " (a Python function that computes holds the GIL and gains nothing)" if python else ""
    stage = _parallel_map_stage(pipeline.paths)
    finding = _input_finding(
        ctx,
        "input.map_pool_saturated",
        f"tf.data's thread pool caps the parallel map ({stage}): its {threads} threads are inside the map function "
        f"{concurrency:.2f} at a time on average, {waiting_share:.0%} of that in {apis}, which may wait, while the "
        f"step waits for input {share:.1f}% of the time. A larger pool lets more calls wait at once: it gains only "
        f"if the calls wait rather than compute{gil}.",
        wait_ms,
        "upper bound: all of the input wait gone, 1 / (1 - wait share), reached only if the map's calls "
        "wait rather than compute (calls that compute need cores, not threads"
        + ("; a Python function that computes holds the GIL" if python else "")
        + ")",
        extra_metrics={
            "map_threads": threads,
            "map_threads_busy_cores": concurrency,
            "map_waiting_share": round(waiting_share, 3),
            "host_cores": cores.count,
            "host_cores_source": cores.source,
        },
        pointers={"tf_data_stages": [stage], "host_ops": op_rows(ops)},
    )
    return finding


def _parallel_map_stage(paths):
    """The first parallel map stage's path (`Iterator::Root::Prefetch::MapAndBatch`), also where it is only seen as
    a prefix of a deeper stage's name."""
    for path in paths:
        parts = stages_of(path)
        depth = next((index for index, stage in enumerate(parts) if stage in PARALLEL_MAP_STAGES), None)
        if depth is not None:
            return ITERATOR_PREFIX + "::".join(parts[: depth + 1])
    return None


def python_generator(ctx: Context) -> None:
    """A Generator stage (Dataset.from_generator) feeds a pipeline the step waits on."""
    pipeline = ctx.pipeline
    if not pipeline.generators or not _waits_enough(ctx):
        return None
    wait_ms, _ = _wait(ctx)
    count, total = ctx.host.op_totals.get(pipeline.generators[0], (0, 0))
    return _input_finding(
        ctx,
        "input.python_generator",
        f"The input comes from a Python generator ({pipeline.generators[0]}), which runs under the GIL.",
        wait_ms,
        UPPER_BOUND.format(what="input wait"),
        extra_metrics={"generator_calls": count, "generator_ms": ms(total)},
        pointers={"tf_data_stages": list(pipeline.generators)},
    )


def _read_ms(ctx, paths):
    return sum(ms(ctx.host.op_totals.get(path, (0, 0))[1]) for path in paths)


def demanded_file_reads(ctx: Context) -> Finding | None:
    """XProf's "demanded" reads: a file reader with nothing above it that reads ahead."""
    pipeline = ctx.pipeline
    if not pipeline.demanded_reads or not _waits_enough(ctx):
        return None
    wait_ms, _ = _wait(ctx)
    read_ms = _read_ms(ctx, pipeline.demanded_reads)
    return _input_finding(
        ctx,
        "input.demanded_file_reads",
        f"Files are read on demand ({pipeline.demanded_reads[0]}: reads take {ctx.time_text(read_ms)}).",
        min(wait_ms, read_ms),
        "upper bound: the input wait spent in on-demand reads removed",
        extra_metrics={"demanded_read_ms": round(read_ms, 3)},
        pointers={"tf_data_stages": list(pipeline.demanded_reads)},
    )


def no_cache(ctx: Context) -> Finding | None:
    """Files are read and the pipeline has no cache stage while the step waits."""
    pipeline = ctx.pipeline
    if not pipeline.file_reads or pipeline.has_cache or not _waits_enough(ctx):
        return None
    wait_ms, _ = _wait(ctx)
    read_ms = _read_ms(ctx, pipeline.file_reads)
    return _input_finding(
        ctx,
        "input.no_cache",
        f"Files are read every epoch and nothing is cached (reads take {ctx.time_text(read_ms)}).",
        min(wait_ms, read_ms),
        "upper bound: the input wait spent reading files removed",
        extra_metrics={"file_read_ms": round(read_ms, 3)},
        pointers={"tf_data_stages": [p for p in pipeline.file_reads if p.rpartition("::")[2] in FILE_READ_STAGES]},
    )


def tf_data_service(ctx: Context) -> Finding | None:
    """Several GPUs starve behind a pipeline that already prefetches and maps in parallel."""
    pipeline = ctx.pipeline
    wait_ms, share = _wait(ctx)
    if len(ctx.active_gpus) < TF_DATA_SERVICE_MIN_GPUS or not pipeline.is_tuned or share < INPUT_HIGH_PCT:
        return None
    finding = _input_finding(
        ctx,
        "input.tf_data_service",
        f"{len(ctx.active_gpus)} GPUs wait {share:.1f}% of the step on a pipeline that already prefetches and "
        "maps in parallel.",
        wait_ms,
        UPPER_BOUND.format(what="input wait"),
        extra_metrics={"active_gpus": len(ctx.active_gpus)},
    )
    return capped(finding, "medium")
