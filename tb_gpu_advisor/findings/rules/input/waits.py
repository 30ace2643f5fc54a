"""The step waiting for its input (input.gpu_waits_for_input, input.no_prefetch) and the helpers every input rule shares."""

from __future__ import annotations

from tb_gpu_advisor.findings.context import ms
from tb_gpu_advisor.findings.finding import Evidence, Finding, estimated, grade, ladder
from tb_gpu_advisor.analysis.batch_prep import file_work_ps, prep_calls
from tb_gpu_advisor.findings.thresholds import FILES_MIN_SHARE, INPUT_HIGH_PCT, INPUT_MEDIUM_PCT
from tb_gpu_advisor.model import intervals
from tb_gpu_advisor.whatif import input as whatif_input
from tb_gpu_advisor.findings.input_steps import input_steps

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tb_gpu_advisor.findings.context import Context


UPPER_BOUND = "upper bound: the step time if all of the {what} went away"

# Per framework: how to get Python calls into the profile, and the record-file format its loaders read.
_PYTHON_TRACER = {
    "jax": "enable the Python tracer, jax.profiler.trace(..., python_tracer_level=1)",
    "pytorch": "record Python calls, torch.profiler.profile(..., with_stack=True)",
    "tensorflow": "time the batch preparation alone, around the call that builds the batch",
}
_RECORD_FILES = {
    "jax": "pack the dataset into a few large record files (ArrayRecord, which grain reads; or TFRecord) holding "
    "already-decoded or small encoded examples",
    "pytorch": "pack the dataset into a few large shards (WebDataset tar shards, read by the DataLoader's "
    "workers) holding already-decoded or small encoded examples",
    "tensorflow": "pack the dataset into a few large TFRecord files (tf.train.Example records of already-decoded "
    "or small encoded images) read by tf.data.TFRecordDataset(files, "
    "num_parallel_reads=tf.data.AUTOTUNE)",
}
# What idles while the host prepares, and what starts when it is done, per BatchPrep.device without GPUs.
# Decoding in parallel, in each framework's loader: the lever when decoding, not reading, is most of the file work.
_PARALLEL_DECODE = {
    "jax": "decode in parallel (grain's worker processes, or tf.data's map(decode, num_parallel_calls="
    "tf.data.AUTOTUNE))",
    "pytorch": "decode in parallel (more DataLoader workers: num_workers)",
    "tensorflow": "decode in parallel (tf.data's map(decode, num_parallel_calls=tf.data.AUTOTUNE))",
}
_GPU_DECODE = {
    "jax": "decode on the GPU (NVIDIA DALI, nvJPEG)",
    "pytorch": 'decode on the GPU (torchvision.io.decode_jpeg(..., device="cuda"), or NVIDIA DALI)',
    "tensorflow": "decode on the GPU (NVIDIA DALI, nvJPEG)",
}
_DEVICE_WORDS = {
    "xla_cpu": ("XLA's CPU executor idles", "XLA's CPU executor gets work"),
    "tf_cpu": ("no tf.function runs", "the tf.function step starts"),
}
# PyTorch's iterator of a DataLoader with num_workers=0: batches are built in the training process.
_SINGLE_PROCESS_LOADER = "enumerate(DataLoader)#_SingleProcessDataLoaderIter"


def _wait(ctx):
    """(exposed tf.data/DataLoader input wait ms, its share %) over the analysis window."""
    wait_ms = ctx.pipeline_wait_ms
    return wait_ms, ctx.share_pct(wait_ms)


def _wait_metrics(ctx, wait_ms, share):
    return {
        "input_wait_pct": share,
        "input_wait_ms": round(wait_ms, 3),
        "input_wait_ms_per_step": ctx.per_step_ms(wait_ms),
        "step_time_ms_mean": ctx.mean_step_ms,
    }


def _wait_pointers(ctx):
    waits = intervals.subtract(ctx.host.input_waits, ctx.gpu_busy)
    return {
        "time_ranges_ms": ctx.longest_ranges_ms(waits),
        "steps": ctx.steps_overlapping(waits),
        "tf_data_stages": list(ctx.pipeline.paths[:5]),
    }


def _input_finding(ctx, finding_id, summary, recoverable_ms, basis, extra_metrics=None, pointers=None, fix_note=""):
    """A finding graded on the input ladder by its recoverable share; None below the medium level."""
    wait_ms, share = _wait(ctx)
    recoverable_share = ctx.share_pct(recoverable_ms)
    severity = grade(recoverable_share, INPUT_HIGH_PCT, INPUT_MEDIUM_PCT, low=0.0)
    metrics = {**_wait_metrics(ctx, wait_ms, share), **(extra_metrics or {}), "recoverable_pct": recoverable_share}
    return Finding(
        id=finding_id,
        severity=severity,
        summary=summary,
        evidence=Evidence(
            metrics,
            ladder("input_wait_pct", share, INPUT_HIGH_PCT, INPUT_MEDIUM_PCT),
            {**_wait_pointers(ctx), **(pointers or {})},
        ),
        recoverable_ms=recoverable_ms,
        window_ms=ctx.window_ms,
        speedup_basis=basis,
        fix_note=fix_note,
    )


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
        note = (
            f"The trace shows tf.distribute's per-device feed ({pipeline.per_device_generators[0]}), which "
            "pulls batches from the source dataset through RemoteCall __inference__next_func; the source "
            "pipeline's own stages are not in the trace. Tune the source dataset (below) before "
            "strategy.experimental_distribute_dataset(ds)."
        )
    elif pipeline.is_tuned:
        note = (
            f"This pipeline already prefetches and maps in parallel ({pipeline.paths[0]}), so the producer "
            "itself is too slow: see the other findings, cache decoded data, precompute offline, or use "
            "the tf.data service."
        )
    if ctx.framework.name == "pytorch" and any(name.startswith(_SINGLE_PROCESS_LOADER) for name in ctx.host.op_totals):
        note = (
            "The DataLoader builds each batch in the training process (_SingleProcessDataLoaderIter: "
            "num_workers=0) while the GPU waits; worker processes would build the next ones during the step."
        )
    metrics, pointers = _wait_metrics(ctx, wait_ms, share), _wait_pointers(ctx)
    files_note = _file_work_in_waits(ctx, wait_ms, metrics, pointers)
    severity = grade(share, INPUT_HIGH_PCT, INPUT_MEDIUM_PCT)
    condition = "per_device_feed" if pipeline.per_device_generators and not pipeline.is_tuned else None
    return Finding(
        id="input.gpu_waits_for_input",
        severity=severity,
        summary=f"The GPU waits for input {share:.1f}% of the step time ({ctx.time_text(wait_ms)}).",
        evidence=Evidence(metrics, ladder("input_wait_pct", share, INPUT_HIGH_PCT, INPUT_MEDIUM_PCT), pointers),
        recoverable_ms=wait_ms,
        window_ms=ctx.window_ms,
        speedup_basis=UPPER_BOUND.format(what="GPU idle time spent waiting for input"),
        fix_note=f"{note} {files_note}".strip(),
        condition=condition,
    )


def _file_work_in_waits(ctx, wait_ms, metrics, pointers):
    """The record-file note when the known preparation calls inside the exposed input waits (a PyTorch DataLoader
    run in the training process, traced with_stack=True) are mostly file reads and image decoding; adds their
    times to `metrics` and the calls to `pointers` when there are any."""
    waits = intervals.subtract(ctx.host.input_waits, ctx.gpu_busy)
    if len(ctx.window):
        waits = intervals.intersect(waits, ctx.window)
    calls, _ = prep_calls(ctx.host, waits)
    if not calls:
        return ""
    read_ms, decode_ms = (ms(ps) for ps in file_work_ps(calls))
    steps = max(1, ctx.step_count)
    metrics.update(file_read_ms_per_step=round(read_ms / steps, 3), decode_ms_per_step=round(decode_ms / steps, 3))
    pointers["functions"] = [{"function": call.name, "ms": ms(call.ps), "waits": call.waits} for call in calls[:5]]
    if ctx.framework.name not in _RECORD_FILES or read_ms + decode_ms < FILES_MIN_SHARE * wait_ms:
        return ""
    return _file_work_note(ctx, read_ms / steps, decode_ms / steps, "the wait", gpu=True)


def _file_work_note(ctx, read_ms, decode_ms, of, gpu):
    """The advice for file reads and image decoding (`read_ms`, `decode_ms` per step) that are most of `of`: record
    files remove the reads, not the decoding; decoding is sped up by decoding in parallel, storing decoded data, or
    (an NVIDIA GPU run, `gpu`) decoding on the GPU."""
    framework = ctx.framework.name
    reads = (
        f"{_RECORD_FILES[framework]}, so a step reads a few large files sequentially instead of opening many "
        f"small ones; that would save at most the {read_ms:.2f} ms per step of reads"
    )
    if read_ms >= decode_ms:
        text = (
            f"File reads ({read_ms:.2f} ms per step) and image decoding ({decode_ms:.2f} ms per step) are most of "
            f"{of}, mostly reads: {reads}."
        )
        return text + (" Decoding stays unless the records hold decoded data." if decode_ms > 0 else "")
    levers = [_PARALLEL_DECODE[framework], "store the images decoded or resized (decode once, offline; larger files)"]
    if gpu and ctx.has_gpu and not ctx.on_amd:
        levers.append(_GPU_DECODE[framework])
    text = (
        f"Image decoding ({decode_ms:.2f} ms per step) is most of {of}, file reads ({read_ms:.2f} ms per step) "
        f"the smaller part: {'; or '.join(levers)}."
    )
    return text + (f" Record files remove only the reads: {reads}." if read_ms > 0 else "")


def no_prefetch(ctx: Context) -> Finding | None:
    """tf.data in use, no Prefetch stage: producer and step take turns. With prefetch each step takes
    max(producer, consumer) (whatif.input.prefetch)."""
    pipeline = ctx.pipeline
    if not pipeline.in_use or pipeline.has_prefetch or not _waits_enough(ctx) or not ctx.step_set.steps:
        return None
    estimate = whatif_input.prefetch(input_steps(ctx))
    finding = _input_finding(
        ctx,
        "input.no_prefetch",
        f"No Prefetch stage in the tf.data pipeline ({pipeline.paths[0]}); input and step do not overlap.",
        estimate.recoverable_of(ctx.window_ms),
        estimate.basis,
        pointers={"tf_data_stages": list(pipeline.paths[:5])},
    )
    return estimated(finding, estimate)


def main_process_loader(ctx: Context) -> Finding | None:
    """PyTorch without a GPU: the step waits in a DataLoader that builds each batch in the training process
    (_SingleProcessDataLoaderIter: num_workers=0), so loading and the step take turns; worker processes would load
    the next batches while the step runs. With a GPU, input.gpu_waits_for_input says the same."""
    if ctx.has_gpu or ctx.framework.name != "pytorch" or not _waits_enough(ctx):
        return None
    if not any(name.startswith(_SINGLE_PROCESS_LOADER) for name in ctx.host.op_totals):
        return None
    wait_ms, share = _wait(ctx)
    metrics, pointers = _wait_metrics(ctx, wait_ms, share), _wait_pointers(ctx)
    files_note = _file_work_in_waits(ctx, wait_ms, metrics, pointers)
    note = (
        "This is a CPU-only run: worker processes share the cores with the step, so the overlap holds for loading "
        "that waits (file reads, network, sleep) and less for loading that computes."
    )
    return Finding(
        id="input.main_process_loader",
        severity=grade(share, INPUT_HIGH_PCT, INPUT_MEDIUM_PCT) or "low",
        summary=f"The step waits for the DataLoader {share:.1f}% of the step time ({ctx.time_text(wait_ms)}), and "
        "the DataLoader builds each batch in the training process (_SingleProcessDataLoaderIter: num_workers=0).",
        evidence=Evidence(metrics, ladder("input_wait_pct", share, INPUT_HIGH_PCT, INPUT_MEDIUM_PCT), pointers),
        recoverable_ms=wait_ms,
        window_ms=ctx.window_ms,
        speedup_basis=UPPER_BOUND.format(what="time waiting for the DataLoader"),
        fix_note=f"{note} {files_note}".strip(),
    )
