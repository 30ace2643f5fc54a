"""Exact numbers of the host-bound text classifier and its fix."""

from tests.scenarios.scenario_checks import breakdown, host_op_names, summary, transfer

from tb_gpu_advisor.scenarios import host_bound


def test_cpu_ops_on_the_launch_threads_starve_the_gpu(built):
    report = built("host_bound").report
    assert summary(report) == {"busy": 25.7, "input_wait": 0.1, "step_ms": 27.896, "steps": 5, "stdev": 0.0,
                               "source": "host", "kernels": 575, "kernel_rows": 115}
    assert breakdown(report) == {"compute_16bit": 21.83, "compute_32bit": 3.81, "d2h": 0.01, "h2d": 0.05,
                                 "input_wait": 0.1, "launch": 0.8, "host": 73.35, "idle": 0.05}
    assert report["steps"][0]["breakdown_ms"]["host"] == 20.462
    # The tokenizer ops take 16.8 ms of every step on the executor thread.
    totals = built("host_bound").model.host_activity.op_totals
    assert sum(host_us for _, host_us in host_bound.TOKENIZER_OPS) == 16800.0
    assert totals["StringSplit/StringSplitV2:StringSplitV2"] == (5, 5 * 5202.5 * 10**6)
    assert transfer(report, "h2d") == (5, 5 * 256 * 128 * 4, 65.0, 5, 5)


def test_fix_launches_from_a_private_gpu_thread(built):
    report = built("host_bound_fixed").report
    assert summary(report) == {"busy": 98.59, "input_wait": 0.39, "step_ms": 7.2635, "steps": 5, "stdev": 0.0,
                               "source": "host", "kernels": 575, "kernel_rows": 115}
    names = host_op_names(built("host_bound_fixed").model)
    assert "StringSplit/StringSplitV2:StringSplitV2" in names  # now inside tf.data's map function
    assert not any(name.startswith("RaggedToTensor") for name in names)
    threads = {line.name.split("/")[0] for line in _host_lines(built("host_bound_fixed").path)}
    assert "tf_gpu_private_0" in threads and "tf_Compute" not in threads


def _host_lines(path):
    from tb_gpu_advisor.xplane.reader import read_space

    space = read_space(path)
    host = next(plane for plane in space.planes if plane.name == "/host:CPU")
    return host.decode(path).lines
