"""The fast host-plane path adds exactly what the reference `_HostCollector.add_plane` adds."""

from tb_gpu_advisor.testing.large import write_training_trace
from tb_gpu_advisor.testing.quickstart import write_quickstart
from tests.readers.xplane.equivalence import SpaceWriter, compare_paths


def _host():
    writer = SpaceWriter()
    host = writer.plane("/host:CPU")
    return writer, host, host.lines.add(id=1, name="python", timestamp_ns=1000)


def test_markers_launches_and_their_stat_types(tmp_path, caplog):
    writer, host, line = _host()
    add = writer.event
    add(host, line, "train", 0, 1000)  # no stats: a marker by name
    add(host, line, "train", 1000, 1000, [("unrelated", "int64_value", 1)])  # stats but none of ours: no marker
    add(host, line, "train", 2000, 0)  # zero duration: not a marker
    add(host, line, "TraceContext", 3000, 500, [("graph_type", "str_value", "eval"), ("step_num", "double_value", 4.7)])
    add(host, line, "Profiled batch", 4000, 500, [("step_num", "uint64_value", 12)])
    add(host, line, "my_step", 5000, 500, [("_r", "int64_value", 1), ("step_num", "int64_value", -3)])
    add(host, line, "loop", 6000, 500, [("_r", None, None), ("iter_num", "int64_value", 9)])
    add(host, line, "test", 7000, 400, [("iter_num", "int64_value", 2)])
    add(host, line, "cuLaunchKernel", 100, 5, [("correlation_id", "int64_value", 42), ("device_id", "int64_value", 1)])
    add(host, line, "kernel_a", 110, 5, [("correlation_id", "uint64_value", 41), ("device_id", "str_value", "x")])
    add(host, line, "kernel_b", 120, 5, [("correlation_id", "int64_value", -1)])  # negative: not a launch
    add(host, line, "kernel_c", 130, 5, [("correlation_id", "double_value", 43.0)])  # not an int: not a launch
    add(host, line, "kernel_d", 140, 5, [("correlation_id", "ref", "44")])
    add(host, line, "train", 150, 5, [("correlation_id", "int64_value", 45)])  # a launch, not a marker
    add(host, line, "kernel_e", 160, 5, [("device_id", "uint64_value", 2**64 - 1)])  # huge id, not a launch
    _, _, model = compare_paths(writer.bytes(), tmp_path, caplog)
    assert model.host_activity.launch_correlation_id.tolist() == [41, 42, 45]
    assert [m.name for m in model.host_step_markers] == ["train", "eval 4", "Profiled batch 12", "my_step -3", "test 2"]


def test_busy_blocks_follow_file_order_across_lines_and_chunks(tmp_path, caplog, monkeypatch):
    import tb_gpu_advisor.readers.xplane.plane_scan as plane_scan

    monkeypatch.setattr(plane_scan.event_chunks, "__defaults__", (3,))  # blocks must carry across chunks
    writer, host, line = _host()
    for start, duration in [
        (100, 50),
        (120, 10),
        (90, 100),
        (300, 10),
        (305, 0),
        (305, 20),
        (200, 5),
        (500, 1),
        (501, 1),
        (400, 200),
        (-50, 10),
        (-55, 100),
    ]:
        writer.event(host, line, "op", start, duration)
    other = host.lines.add(id=2, name="worker", timestamp_ns=3000)
    for start in range(0, 40, 7):
        writer.event(host, other, "IteratorGetNextOp::DoCompute", start, 5)
        writer.event(host, other, "iteratorgetnext_lower", start + 1, 2)
    host.lines.add(id=3, name="idle thread")
    derived = host.lines.add(id=-559038737 + 1, name="Launch Stats", timestamp_ns=1000)
    writer.event(host, derived, "op", 0, 10_000)
    _, _, model = compare_paths(writer.bytes(), tmp_path, caplog)
    assert model.host_activity.thread_count == 3
    assert model.host_activity.op_totals["op"][0] == 12
    assert (
        model.host_activity.op_shortest_ps["op"] == 0
        and model.host_activity.op_shortest_ps["iteratorgetnext_lower"] == 2
    )


def test_two_host_planes_and_missing_metadata(tmp_path, caplog):
    writer, host, line = _host()
    writer.event(host, line, "op", 0, 10, [("correlation_id", "int64_value", 9)])
    writer.event(host, line, "ghost", 20, 10, metadata_id=777)
    cupti = writer.plane("/host:CUPTI")
    thread = cupti.lines.add(id=5, name="cupti", timestamp_ns=2000)
    writer.event(
        cupti, thread, "cuLaunchKernel", 0, 4, [("correlation_id", "int64_value", 3), ("device_id", "int64_value", 0)]
    )
    writer.event(cupti, thread, "op", 50, 1)
    _, _, model = compare_paths(writer.bytes(), tmp_path, caplog)
    assert model.host_activity.launch_correlation_id.tolist() == [3, 9]
    assert model.host_activity.op_totals[""] == (1, 10)


def test_quickstart_and_generated_large_trace(tmp_path, caplog):
    logdir = tmp_path / "logs"
    quickstart = write_quickstart(str(logdir))
    compare_paths(open(quickstart, "rb").read(), tmp_path, caplog)
    size = write_training_trace(tmp_path / "big.xplane.pb", gpus=3, steps=3, kernels_per_step=300)
    kind, _, model = compare_paths(open(size.path, "rb").read(), tmp_path, caplog)
    assert kind == "ok" and sum(len(gpu.activity) for gpu in model.gpus) == size.kernels + 3 * 3 * 2


def test_tagged_events_and_thread_kinds(tmp_path, caplog, monkeypatch):
    import tb_gpu_advisor.readers.xplane.plane_scan as plane_scan

    monkeypatch.setattr(plane_scan.event_chunks, "__defaults__", (4,))
    writer, host, line = _host()
    line.name = "tf_data_private_threadpool/123"
    other = host.lines.add(id=2, name="tf_data_private_threadpool/456", timestamp_ns=1000)
    third = host.lines.add(id=3, name="python", timestamp_ns=1000)
    for thread, offset in ((line, 0), (other, 7), (third, 3)):
        writer.event(host, thread, "save/SaveV2:SaveV2", offset, 40)
        writer.event(host, thread, "loss/ScalarSummary:WriteScalarSummary", offset + 50, 5)
        writer.event(host, thread, "cluster_0/XlaCompile", offset + 60, 30)
        writer.event(host, thread, "checkpoint_restore", offset + 95, 0)  # zero duration: not tagged
        writer.event(host, thread, "op", offset + 100, 10)
    _, _, model = compare_paths(writer.bytes(), tmp_path, caplog)
    activity = model.host_activity
    assert list(activity.tagged) == ["checkpoint", "compile", "summary"]
    assert activity.thread_busy == {"tf_data_private_threadpool": (2, 2 * 85), "python": (1, 85)}


def test_thunk_totals_of_xla_cpu_executor_threads(tmp_path, caplog, monkeypatch):
    """Per-name totals of the events on XLA's CPU executor threads only (zero durations counted), across chunks
    and lines, in both paths."""
    import tb_gpu_advisor.readers.xplane.plane_scan as plane_scan

    monkeypatch.setattr(plane_scan.event_chunks, "__defaults__", (3,))
    writer, host, line = _host()
    first = host.lines.add(id=2, name="tf_XLAPjRtCpuClient/77", timestamp_ns=1000)
    second = host.lines.add(id=3, name="XLAEigen/5", timestamp_ns=1000)
    for index in range(4):
        writer.event(host, line, "wrapped_add", 10 * index, 4)  # the Python thread: not an executor's
        writer.event(host, first, "wrapped_add", 10 * index, 3)
        writer.event(host, first, "end: wrapped_add", 10 * index + 3, 0)
        writer.event(host, second, "ynn_fusion", 10 * index, 5)
    _, _, model = compare_paths(writer.bytes(), tmp_path, caplog)
    assert model.host_activity.executor_op_totals == {
        "wrapped_add": (4, 12),
        "end: wrapped_add": (4, 0),
        "ynn_fusion": (4, 20),
    }
    assert model.host_activity.op_totals["wrapped_add"] == (8, 28)


def test_thread_waits_per_line_across_chunks(tmp_path, caplog, monkeypatch):
    import tb_gpu_advisor.readers.xplane.plane_scan as plane_scan

    monkeypatch.setattr(plane_scan.event_chunks, "__defaults__", (3,))  # lines and blocks span chunks
    writer, host, line = _host()
    writer.event(host, line, "train", 0, 1000, [("_r", "int64_value", 1), ("step_num", "int64_value", 1)])
    writer.event(host, line, "$queue.py:154 get", 10, 300)
    writer.event(host, line, "$threading.py:327 wait", 20, 280)
    writer.event(host, line, "$<unknown> acquire", 30, 260)
    writer.event(host, line, "$<unknown> acquire", 400, 0)  # zero duration: not kept
    writer.event(host, line, "PjitFunction(step)", 320, 50)
    writer.event(host, line, "$<unknown> get", 500, 5)  # dict.get, not a wait
    loader = host.lines.add(id=2, name="", timestamp_ns=1000)
    writer.event(host, loader, "$time sleep", 0, 250)
    writer.event(host, loader, "$queue.py:122 put", 280, 20)
    writer.event(host, loader, "$threading.py:366 notify", 285, 10)
    launcher = host.lines.add(id=3, name="cupti", timestamp_ns=1000)
    writer.event(host, launcher, "$<unknown> release", 600, 5)
    writer.event(host, launcher, "cuLaunchKernel", 700, 4, [("correlation_id", "int64_value", 1)])
    host.lines.add(id=4, name="quiet")
    _, _, model = compare_paths(writer.bytes(), tmp_path, caplog)
    waits = model.host_activity.thread_waits
    assert [(t.thread, t.feeds_device) for t in waits] == [("python", True), ("thread 2", False), ("cupti", True)]
    python = waits[0]
    assert list(python.waits) == ["queue", "condition", "lock"] and python.waits["lock"].total_ps == 260
    assert len(python.wakes) == 0 and python.busy.total_ps == 300 + 50 + 5
    assert (len(waits[1].waits), waits[1].wakes.total_ps, waits[1].busy.total_ps) == (0, 20, 250 + 20)


def test_tensorflow_preparation_events_are_tagged_off_tf_data_threads_only(tmp_path, caplog, monkeypatch):
    import tb_gpu_advisor.readers.xplane.plane_scan as plane_scan

    monkeypatch.setattr(plane_scan.event_chunks, "__defaults__", (4,))
    writer, host, line = _host()
    pipeline = host.lines.add(id=2, name="tf_data_private_threadpool/456", timestamp_ns=1000)
    for thread, offset in ((line, 0), (pipeline, 3)):
        writer.event(host, thread, "EagerLocalExecute: ReadFile", offset, 10)
        writer.event(host, thread, "decode/DecodeJpeg:DecodeJpeg", offset + 10, 20)
        writer.event(host, thread, "convert_to_tensor", offset + 30, 5)
        writer.event(host, thread, "train_step", offset + 40, 50)  # the tf.function's Python call
        writer.event(host, thread, "EagerLocalExecute: __inference_train_step_41", offset + 45, 40)
    _, _, model = compare_paths(writer.bytes(), tmp_path, caplog)
    tagged = model.host_activity.tagged
    assert sorted(tagged) == ["tf_function", "tf_prep:DecodeJpeg", "tf_prep:ReadFile", "tf_prep:convert_to_tensor"]
    # one span each: the python thread's; the pipeline thread's events are tf.data's own
    assert all(len(spans) == 1 for spans in tagged.values())
    assert (int(tagged["tf_function"].start_ps[0]), int(tagged["tf_function"].end_ps[0])) == (
        tagged["tf_prep:ReadFile"].start_ps[0] + 40,
        tagged["tf_prep:ReadFile"].start_ps[0] + 90,
    )
