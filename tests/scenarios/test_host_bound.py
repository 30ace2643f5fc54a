"""Exact numbers of the host-bound text classifier and its fix."""

from tests.scenarios.scenario_checks import breakdown, host_op_names, summary, transfer

from tb_gpu_advisor.scenarios import host_bound


def test_cpu_ops_on_the_launch_threads_starve_the_gpu(built):
    report = built("host_bound").report
    assert summary(report) == {
        "busy": 25.7,
        "input_wait": 0.1,
        "step_ms": 27.896,
        "steps": 5,
        "stdev": 0.0,
        "source": "host",
        "kernels": 575,
        "kernel_rows": 115,
    }
    assert breakdown(report) == {
        "compute_16bit": 21.83,
        "compute_32bit": 3.81,
        "d2h": 0.01,
        "h2d": 0.05,
        "input_wait": 0.1,
        "input_prep": 0.01,
        "copy_call": 0.03,
        "launch": 1.14,
        "host_wait": 0.02,
        "host": 72.96,
        "idle": 0.04,
    }
    assert report["steps"][0]["breakdown_ms"]["host"] == 20.354
    # The tokenizer ops take 16.8 ms of every step on the executor thread.
    totals = built("host_bound").model.host_activity.op_totals
    assert sum(host_us for _, host_us in host_bound.TOKENIZER_OPS) == 16800.0
    assert totals["StringSplit/StringSplitV2:StringSplitV2"] == (5, 5 * 5202.5 * 10**6)
    assert transfer(report, "h2d") == (5, 5 * 256 * 128 * 4, 65.0, 5, 5)


def test_fix_launches_from_a_private_gpu_thread(built):
    report = built("host_bound_fixed").report
    assert summary(report) == {
        "busy": 98.59,
        "input_wait": 0.39,
        "step_ms": 7.2635,
        "steps": 5,
        "stdev": 0.0,
        "source": "host",
        "kernels": 575,
        "kernel_rows": 115,
    }
    names = host_op_names(built("host_bound_fixed").model)
    assert "StringSplit/StringSplitV2:StringSplitV2" in names  # now inside tf.data's map function
    assert not any(name.startswith("RaggedToTensor") for name in names)
    threads = {line.name.split("/")[0] for line in _host_lines(built("host_bound_fixed").path)}
    assert "tf_gpu_private_0" in threads and "tf_Compute" not in threads


def _host_lines(path):
    from tb_gpu_advisor.readers.xplane.reader import read_space

    space = read_space(path)
    host = next(plane for plane in space.planes if plane.name == "/host:CPU")
    return host.decode(path).lines


def test_no_fix_advises_jit_compile_on_a_step_with_string_ops_and_py_function(built):
    """The step runs StringSplitV2 and a tf.py_function: jit_compile=True on it would fail to compile. The
    fixes move that work into tf.data first, and the evidence names the step's own ops, not tf.data's."""
    report = built("host_bound").report
    assert report["summary"]["framework"] == "tensorflow"
    for finding in report["findings"]:
        code = [line for line in finding["fix"].splitlines() if line.startswith("    ")]
        assert not any(
            "jit_compile=True" in line
            and "#" not in line.split("jit_compile=True")[0]
            and "now only tensor math" not in line
            for line in code
        ), finding["id"]
    host = next(f for f in report["findings"] if f["id"] == "host.gpu_idle_host_busy")
    assert host["fix_summary"].startswith("Move the step's string/Python ops into tf.data")
    assert host["evidence"]["pointers"]["xla_incompatible_ops"] == [
        "EagerPyFunc (tf.py_function)",
        "StringSplitV2",
        "StringToHashBucketFast",
        "RaggedTensorToTensor",
    ]
    names = [op["name"] for op in host["evidence"]["pointers"]["host_ops"]]
    assert names[:4] == [
        "feature_hashing/EagerPyFunc:EagerPyFunc",
        "StringSplit/StringSplitV2:StringSplitV2",
        "StringToHashBucketFast:StringToHashBucketFast",
        "RaggedToTensor/RaggedTensorToTensor:RaggedTensorToTensor",
    ]
    assert not any(name.endswith("Produce") or name.startswith("Iterator::") for name in names)
    python = next(f for f in report["findings"] if f["id"] == "host.python_function")
    assert "once per step: it runs inside the training step" in python["summary"]
    assert "map function" not in python["summary"]
    fusion = next(f for f in report["findings"] if f["id"] == "fusion.elementwise_kernels")
    assert fusion["fix_summary"].startswith("Move the ops XLA cannot compile out of the step")


def test_the_fixed_run_may_compile_its_step(built):
    """Tokenization moved into tf.data (many calls per step, on tf.data's threads): the step itself is clean."""
    report = built("host_bound_fixed").report
    fusion = next(f for f in report["findings"] if f["id"] == "fusion.elementwise_kernels")
    assert fusion["fix_summary"].startswith("Compile the step with XLA")
    assert "xla_incompatible_ops" not in fusion["evidence"]["pointers"]
