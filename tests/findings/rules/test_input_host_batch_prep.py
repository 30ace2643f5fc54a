"""input.host_batch_prep: a JAX, TensorFlow or PyTorch loop building its batch on the step thread while the device
idles."""

from tb_gpu_advisor.readers.load import load_model
from tb_gpu_advisor.pipeline import host_report
from tb_gpu_advisor.testing import TraceBuilder
from tb_gpu_advisor.testing.kineto_trace import kernel, launch, trace_text, x_event
from tests.findings.scenarios import findings_by_id, kernels, report_of

STEP_US = 10_000


def jax_loop(
    prep_us,
    calls=(("$time sleep", 0.7), ("$numpy stack", 0.2)),
    framework=True,
    tf_data_wait=False,
    dispatch="PjitFunction(train_step)",
):
    """4 JAX steps of 10 ms on one GPU: the step thread prepares the batch for `prep_us` (Python-tracer `calls`,
    each a share of it), dispatches `PjitFunction(train_step)`, and the GPU computes for the rest."""
    builder = TraceBuilder()
    if framework:
        builder.metadata(jax_version="0.4.30")
    python = builder.thread("python")
    launcher = builder.thread("tf_pjrt_thread_pool/7")
    for index in range(4):
        start = 1_000 + index * STEP_US
        python.step(index, start, STEP_US)
        if tf_data_wait:
            python.input_wait(start, prep_us)
        offset = start
        for name, share in calls:
            python.event(name, offset, prep_us * share)
            offset += prep_us * share
        python.event(dispatch, start + prep_us, 50)
        kernels(
            builder.gpu(0), start + prep_us + 100, STEP_US - prep_us - 200, launch_thread=launcher, launch_ahead_us=60
        )
    return builder


def test_fires_with_the_prepared_time_the_calls_and_a_modelled_gain():
    finding = findings_by_id(report_of(jax_loop(4_000)))["input.host_batch_prep"]
    metrics = finding["evidence"]["metrics"]
    assert (metrics["batch_prep_ms_per_step"], metrics["batch_prep_pct"]) == (4.0, 40.0)
    assert metrics["certainty"] == "high" and metrics["device"] == "gpu"
    assert metrics["prep_calls_pct"] == 90.0
    assert finding["severity"] == "high"
    functions = finding["evidence"]["pointers"]["functions"]
    assert functions[0] == {"function": "time sleep", "ms": 11.2, "waits": True}
    assert functions[1]["function"] == "numpy stack" and not functions[1]["waits"]
    # a loader one batch ahead: each step becomes max(4 ms preparation, 6 ms rest) = 6 ms
    assert finding["speedup_kind"] == "model" and finding["estimated_speedup"] == 1.67
    assert "jax.device_put" in finding["fix"] and "grain" in finding["fix"]
    assert "time sleep 2.80 ms" in finding["fix"]


def test_one_gpu_is_the_gpu_and_the_header_shows_the_preparation_beside_the_input_wait():
    """jax_inline_loader read "while the GPUs idle" on one GPU, and "input wait: 0.0%" under its input-bound
    verdict: the step thread's preparation is input time no IteratorGetNext wait shows."""
    from tb_gpu_advisor.report.sections import host_sections

    report = report_of(jax_loop(4_000))
    finding = findings_by_id(report)["input.host_batch_prep"]
    assert "preparation while the GPU idles (40.0% of" in finding["summary"]
    assert "before the GPU gets work" in finding["fix"]
    assert report["summary"]["batch_prep_pct"] == 40.0
    header = next(line for line in host_sections(report)[0].lines if line.startswith("GPUs:"))
    assert header.endswith("input wait: 0.0%, host batch prep: 40.0%")


def test_untraced_gap_is_low_certainty_and_at_most_medium():
    finding = findings_by_id(report_of(jax_loop(4_000, calls=())))["input.host_batch_prep"]
    assert finding["evidence"]["metrics"]["certainty"] == "low"
    assert finding["severity"] == "medium"
    assert "Python tracer" in finding["fix"]


def test_quiet_below_five_percent_without_a_known_framework_and_behind_tf_data():
    assert "input.host_batch_prep" not in findings_by_id(report_of(jax_loop(400)))
    unknown = report_of(jax_loop(4_000, framework=False, dispatch="run_step"))
    assert unknown["summary"]["framework"] == "unknown" and "input.host_batch_prep" not in findings_by_id(unknown)
    # an IteratorGetNext wait is tf.data's (input.gpu_waits_for_input), not preparation on the step thread
    tf_data = findings_by_id(report_of(jax_loop(4_000, tf_data_wait=True)))
    assert "input.host_batch_prep" not in tf_data and "input.gpu_waits_for_input" in tf_data


def test_an_untraced_gap_under_a_millisecond_per_step_is_the_loops_own_python():
    # 9% of a 10 ms step with nothing traced in it: 0.9 ms per step could be calling the step and reading the loss
    assert "input.host_batch_prep" not in findings_by_id(report_of(jax_loop(900, calls=())))
    finding = findings_by_id(report_of(jax_loop(1_100, calls=())))["input.host_batch_prep"]
    assert finding["evidence"]["metrics"]["certainty"] == "low"


def test_quiet_when_the_device_still_works_at_the_step_start():
    builder = jax_loop(4_000)
    for index in range(4):  # the previous step's kernels run on through the preparation
        kernels(builder.gpu(0), 1_000 + index * STEP_US - 500, 4_600)
    assert "input.host_batch_prep" not in findings_by_id(report_of(builder))


def test_file_reads_and_decoding_add_the_record_file_advice():
    calls = (("$loader.py:61 read", 0.4), ("$image.py:12 decode", 0.4), ("$numpy stack", 0.1))
    finding = findings_by_id(report_of(jax_loop(4_000, calls=calls)))["input.host_batch_prep"]
    assert "File reads (1.60 ms per step) and image decoding (1.60 ms per step)" in finding["fix"]
    assert "ArrayRecord" in finding["fix"] and "TFRecord" in finding["fix"] and "WebDataset" not in finding["fix"]
    assert "mostly reads" in finding["fix"]
    assert "that would save at most the 1.60 ms per step of reads" in finding["fix"]
    # sleeping and stacking are not file work
    assert "ArrayRecord" not in findings_by_id(report_of(jax_loop(4_000)))["input.host_batch_prep"]["fix"]


# --- TensorFlow: a custom loop reading and decoding files eagerly, then calling its tf.function step ----------

TF_CALLS = (("EagerLocalExecute: ReadFile", 0.3), ("EagerLocalExecute: DecodeJpeg", 0.5), ("convert_to_tensor", 0.1))


def tf_loop(prep_us, calls=TF_CALLS, gpu=True, file_thread=None):
    """4 TensorFlow steps of 10 ms: the step thread runs `calls` (each a share of `prep_us`; on `file_thread`
    instead when given), then the tf.function call `EagerLocalExecute: __inference_train_step_41`, which runs the
    rest of the step (GPU kernels, or on a CPU-only run the function itself)."""
    builder = TraceBuilder()
    python = builder.thread("python")
    other = builder.thread(file_thread) if file_thread else python
    compute = builder.thread("tf_gpu_private/3")
    for index in range(4):
        start = 1_000 + index * STEP_US
        python.step(index, start, STEP_US)
        offset = start
        for name, share in calls:
            other.event(name, offset, prep_us * share)
            offset += prep_us * share
        python.event("EagerLocalExecute: __inference_train_step_41", start + prep_us, STEP_US - prep_us - 100)
        if gpu:
            kernels(
                builder.gpu(0),
                start + prep_us + 100,
                STEP_US - prep_us - 200,
                launch_thread=compute,
                launch_ahead_us=60,
            )
    return builder


def test_tensorflow_loop_reading_and_decoding_files_gets_tf_data_and_tfrecord_advice():
    report = report_of(tf_loop(4_000))
    assert report["summary"]["framework"] == "tensorflow"
    finding = findings_by_id(report)["input.host_batch_prep"]
    metrics = finding["evidence"]["metrics"]
    assert (metrics["batch_prep_ms_per_step"], metrics["batch_prep_pct"], metrics["certainty"]) == (4.0, 40.0, "high")
    assert (metrics["file_read_ms_per_step"], metrics["decode_ms_per_step"], metrics["prep_calls_pct"]) == (
        1.2,
        2.0,
        90.0,
    )
    assert metrics["device"] == "gpu" and finding["severity"] == "high"
    functions = finding["evidence"]["pointers"]["functions"]
    assert [f["function"] for f in functions] == [
        "TensorFlow DecodeJpeg",
        "TensorFlow ReadFile",
        "TensorFlow convert_to_tensor",
    ]
    assert functions[1] == {"function": "TensorFlow ReadFile", "ms": 4.8, "waits": True}
    # the step becomes max(4 ms preparation, 6 ms rest) = 6 ms
    assert finding["speedup_kind"] == "model" and finding["estimated_speedup"] == 1.67
    fix = finding["fix"]
    # decoding (2.00 ms) outweighs reading (1.20 ms): parallel or stored decoding first, record files for the reads
    assert (
        "Image decoding (2.00 ms per step) is most of it, file reads (1.20 ms per step) the smaller part: decode "
        "in parallel (tf.data's map(decode, num_parallel_calls=tf.data.AUTOTUNE)); or store the images decoded "
        "or resized (decode once, offline; larger files); or decode on the GPU (NVIDIA DALI, nvJPEG). Record "
        "files remove only the reads: pack the dataset into a few large TFRecord files"
    ) in fix
    assert "that would save at most the 1.20 ms per step of reads." in fix
    assert "TFRecord" in fix and "prefetch_to_device" in fix and "tf.data" in fix
    assert "ArrayRecord" not in fix and "grain" not in fix and "DataLoader" not in fix


def test_tensorflow_file_ops_on_tf_data_threads_are_the_pipelines_not_the_loops():
    finding = findings_by_id(report_of(tf_loop(4_000, file_thread="tf_data_private_threadpool/9")))[
        "input.host_batch_prep"
    ]
    metrics = finding["evidence"]["metrics"]
    # the pipeline's threads were busy, the step thread's calls are not seen: not known preparation
    assert metrics["certainty"] == "medium" and metrics["file_read_ms_per_step"] == 0.0
    assert not finding["evidence"]["pointers"].get("functions") and "TFRecord" not in finding["fix"]


def test_tensorflow_cpu_only_loop_measures_against_its_tf_function():
    report = report_of(tf_loop(4_000, gpu=False))
    finding = findings_by_id(report)["input.host_batch_prep"]
    # no GPU, and the step waits for its batch 40% of the time: an input verdict, not "Unknown"
    assert (report["summary"]["bottleneck"], report["summary"]["bottleneck_finding"]) == ("input", finding["id"])
    assert report["summary"]["verdict"] == (
        "Input-bound: the host prepares each batch while no tf.function runs "
        "(40% of each step; no GPU work in this profile)."
    )
    metrics = finding["evidence"]["metrics"]
    assert (metrics["device"], metrics["batch_prep_ms_per_step"], metrics["certainty"]) == ("tf_cpu", 4.0, "high")
    # computing on the step's own cores: the overlap is less sure, so at most medium, and a ceiling, not a model
    assert finding["severity"] == "medium" and "no tf.function runs" in finding["summary"]
    assert "CPU-only run and the preparation computes" in finding["fix"]
    assert (finding["speedup_kind"], finding["estimated_speedup"]) == ("bound", 1.67)
    assert finding["speedup_basis"].startswith("upper bound: ")
    # no GPU: no GPU decode
    assert "decode in parallel" in finding["fix"] and "DALI" not in finding["fix"]


def test_partly_named_preparation_is_medium_and_says_what_share_is_named():
    calls = (("EagerLocalExecute: DecodeJpeg", 0.3), ("EagerLocalExecute: Cast", 0.6))
    finding = findings_by_id(report_of(tf_loop(4_000, calls=calls)))["input.host_batch_prep"]
    assert finding["evidence"]["metrics"]["certainty"] == "medium"
    assert "Known preparation calls cover 30% of that time (TensorFlow DecodeJpeg)" in finding["fix"]


def test_tensorflow_loop_without_preparation_is_quiet():
    assert "input.host_batch_prep" not in findings_by_id(report_of(tf_loop(300)))


# --- PyTorch (Kineto): the batch built in the main process, with Python-stack events -----------------------------

PROPS = [
    {
        "id": 0,
        "name": "NVIDIA H100 80GB HBM3",
        "totalGlobalMem": 85_000_000_000,
        "computeMajor": 9,
        "computeMinor": 0,
        "numSms": 132,
    }
]
TORCH_CALLS = (
    ("<built-in function open>", 0.1),
    ("<built-in method read of _io.BufferedReader object at 0x7f0a8e928bf0>", 0.2),
    ("<built-in method decode of ImagingDecoder object at 0x7f0a8e92a130>", 0.4),
    ("numpy/_core/shape_base.py(378): stack", 0.1),
)


def torch_report(tmp_path, prep_us, calls=TORCH_CALLS, dataloader=False, workers=False, compiled=False):
    """4 PyTorch steps of 10 ms (`ProfilerStep#N`): the main thread runs `calls` (each a share of `prep_us`; inside
    the single-process DataLoader's __next__ when `dataloader`; after a 50 us __next__ of a DataLoader with worker
    processes when `workers`; inside a torch.compile region entered at the step's start when `compiled`), then
    launches the step's kernel. A call named `aten::...` is a framework op (cpu_op), not a Python-stack call."""
    events = []
    for n in range(4):
        start = n * STEP_US
        events.append(x_event("user_annotation", f"ProfilerStep#{n + 1}", start, STEP_US))
        if dataloader:
            events.append(
                x_event(
                    "user_annotation",
                    "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
                    start + 1,
                    prep_us - 1,
                )
            )
        if workers:
            events.append(
                x_event(
                    "user_annotation", "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", start + 1, 50
                )
            )
        if compiled:
            events.append(x_event("cpu_op", "Torch-Compiled Region: 0/0", start + 2, prep_us + 200))
        offset = start
        for name, share in calls:
            events.append(
                x_event(
                    "cpu_op" if name.startswith("aten::") else "python_function", name, offset + 1, prep_us * share - 2
                )
            )
            offset += prep_us * share
        events += [
            launch(start + prep_us + 10, 20, 100 + n),
            kernel("sm90_xmma_gemm_bf16bf16_bf16f32", start + prep_us + 100, STEP_US - prep_us - 200, 100 + n),
        ]
    path = tmp_path / "rank0.1.pt.trace.json"
    path.write_text(trace_text(events, deviceProperties=PROPS))
    return host_report(load_model(path))


def test_pytorch_loop_building_its_batch_gets_dataloader_workers_and_webdataset_advice(tmp_path):
    report = torch_report(tmp_path, 4_000)
    assert report["summary"]["framework"] == "pytorch"
    finding = findings_by_id(report)["input.host_batch_prep"]
    metrics = finding["evidence"]["metrics"]
    assert (metrics["batch_prep_ms_per_step"], metrics["certainty"], metrics["device"]) == (4.01, "high", "gpu")
    # open + read: 4 events of 398 + 798 us; decode: 4 of 1598 us
    assert (metrics["file_read_ms_per_step"], metrics["decode_ms_per_step"]) == (1.196, 1.598)
    functions = {f["function"]: f for f in finding["evidence"]["pointers"]["functions"]}
    assert set(functions) == {
        "ImagingDecoder decode",
        "_io.BufferedReader read",
        "builtins open",
        "numpy/_core/shape_base.py stack",
    }
    assert functions["_io.BufferedReader read"]["waits"] and not functions["ImagingDecoder decode"]["waits"]
    fix = finding["fix"]
    assert "num_workers=8" in fix and "pin_memory=True" in fix and "persistent_workers=True" in fix
    assert "WebDataset" in fix and "tf.data" not in fix and "grain" not in fix


def test_pytorch_single_process_dataloader_is_the_dataloader_finding_not_this_one(tmp_path):
    found = findings_by_id(torch_report(tmp_path, 4_000, dataloader=True))
    assert "input.host_batch_prep" not in found
    # the DataLoader's own finding names num_workers=0 and the reads and decodes inside its __next__
    waits = found["input.gpu_waits_for_input"]
    metrics = waits["evidence"]["metrics"]
    assert (metrics["file_read_ms_per_step"], metrics["decode_ms_per_step"]) == (1.196, 1.598)
    assert waits["evidence"]["pointers"]["functions"][0] == {
        "function": "ImagingDecoder decode",
        "ms": 6.392,
        "waits": False,
    }
    assert "_SingleProcessDataLoaderIter: num_workers=0" in waits["fix"]
    assert (
        "Image decoding (1.60 ms per step) is most of the wait, file reads (1.20 ms per step) the smaller part: "
        "decode in parallel (more DataLoader workers: num_workers)"
    ) in waits["fix"]
    assert "torchvision.io.decode_jpeg" in waits["fix"]
    assert "WebDataset" in waits["fix"] and "num_workers=8" in waits["fix"] and "tf.data" not in waits["fix"]


def test_pytorch_dataloader_without_file_work_gets_no_record_file_advice(tmp_path):
    stacking = (("numpy/_core/shape_base.py(378): stack", 0.8),)
    waits = findings_by_id(torch_report(tmp_path, 4_000, calls=stacking, dataloader=True))["input.gpu_waits_for_input"]
    assert waits["evidence"]["metrics"]["decode_ms_per_step"] == 0.0 and "WebDataset" not in waits["fix"]


ATEN_CALLS = (("aten::to", 0.5), ("aten::copy_", 0.5))  # framework ops, no known preparation call among them


def test_pytorch_dataloader_with_workers_and_no_known_preparation_is_not_this_finding(tmp_path):
    """The DataLoader builds batches in worker processes already (_MultiProcessingDataLoaderIter): the loop's own
    ops before the first launch are not a batch built on the step thread, and worker advice would not apply.
    The same loop without the loader is this finding (medium: framework ops, no known preparation call)."""
    found = findings_by_id(torch_report(tmp_path, 4_000, calls=ATEN_CALLS, workers=True))
    assert "input.host_batch_prep" not in found
    assert not any("num_workers" in f["fix"] for f in found.values())
    without = findings_by_id(torch_report(tmp_path, 4_000, calls=ATEN_CALLS))["input.host_batch_prep"]
    assert without["evidence"]["metrics"]["certainty"] == "medium" and "num_workers=8" in without["fix"]


def test_pytorch_workers_with_traced_preparation_in_the_loop_move_it_into_the_dataset(tmp_path):
    """Worker processes, yet the loop reads and decodes on the step thread (Python-stack calls fill the gap):
    the finding stays, says the loader has workers, and advises moving the work into the Dataset, not workers."""
    finding = findings_by_id(torch_report(tmp_path, 4_000, workers=True))["input.host_batch_prep"]
    assert finding["evidence"]["metrics"]["certainty"] == "high"
    assert "worker processes already (_MultiProcessingDataLoaderIter)" in finding["fix"]
    assert finding["fix_summary"].startswith("Move the per-batch work the loop does after the DataLoader")
    assert "collate_fn" in finding["fix"] and "0 builds batches in the training process" not in finding["fix"]


def test_a_torch_compile_region_is_the_steps_dispatch_not_batch_preparation(tmp_path):
    """The compiled step entered at the step's start (Torch-Compiled Region, as JAX's PjitFunction) runs the step:
    its host work before the graph's first launch is not a batch being prepared."""
    found = findings_by_id(torch_report(tmp_path, 4_000, calls=ATEN_CALLS, compiled=True))
    assert "input.host_batch_prep" not in found


def test_tensorflow_step_reading_a_prefetching_pipeline_is_not_told_to_build_one():
    """A loop that takes each batch from a tf.data pipeline that prefetches, then works on it before the step:
    the fix moves that work into the pipeline or the tf.function, never "build a tf.data pipeline that
    prefetches"."""
    builder = tf_loop(4_000, gpu=False)
    python = builder.thread("python")
    pipeline = builder.thread("tf_data_iterator_resource/2")
    for index in range(4):
        start = 1_000 + index * STEP_US
        python.input_wait(start - 300, 200)
        pipeline.event("Iterator::Prefetch", start - 300, 150)
        pipeline.event("Iterator::Prefetch::MapAndBatch", start - 280, 100)
    finding = findings_by_id(report_of(builder))["input.host_batch_prep"]
    assert finding["fix_summary"].startswith("Move the loop's work between next(iterator) and the step")
    assert "Build batches in a tf.data pipeline that prefetches" not in finding["fix_summary"]
    assert "Dataset.from_tensor_slices" not in finding["fix"]
