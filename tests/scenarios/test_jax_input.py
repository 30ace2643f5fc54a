"""Exact numbers of the JAX input runs: a batch built on the step thread, float32 image batches, and their fixes."""

from tests.scenarios.scenario_checks import breakdown, summary


def _findings(report):
    return {finding["id"]: finding for finding in report["findings"]}


def test_batch_built_on_the_step_thread(built):
    report = built("jax_inline_loader").report
    assert report["summary"]["framework"] == "jax"
    assert summary(report) == {
        "busy": 57.66,
        "input_wait": 0.0,
        "step_ms": 51.9925,
        "steps": 5,
        "stdev": 0.0,
        "source": "host",
        "kernels": 1550,
        "kernel_rows": 310,
    }
    # the step thread builds the batch (traced, certainty high): the idle start is input preparation, not host compute
    assert breakdown(report)["input_prep"] == 42.32 and "host" not in breakdown(report)
    prep = _findings(report)["input.host_batch_prep"]
    metrics = prep["evidence"]["metrics"]
    assert (metrics["batch_prep_ms_per_step"], metrics["certainty"], metrics["prep_calls_pct"]) == (
        22.004,
        "high",
        84.1,
    )
    assert [call["function"] for call in prep["evidence"]["pointers"]["functions"][:2]] == [
        "loader.py:74 decode",
        "loader.py:61 read",
    ]
    assert "ArrayRecord" in prep["fix"] and prep["speedup_kind"] == "model"
    # the host time is the batch preparation's: no second finding claims it
    assert set(_findings(report)) == {"input.host_batch_prep"}


def test_batch_built_ahead(built):
    report = built("jax_inline_loader_fixed").report
    assert summary(report)["busy"] == 99.93 and summary(report)["step_ms"] == 29.7985
    assert report["findings"] == []


def test_float32_images_sent_inside_the_step(built):
    report = built("jax_float32_images").report
    assert breakdown(report)["h2d"] == 22.28
    found = _findings(report)
    assert list(found) == ["transfer.input_copy_in_step", "transfer.wide_input_copies"]
    wide = found["transfer.wide_input_copies"]
    assert wide["evidence"]["pointers"]["inputs"] == [
        {
            "parameter": "batch_image",
            "program": "program 7",
            "dtype": "f32",
            "shape": [256, 256, 256, 3],
            "bytes": 256 * 256 * 256 * 3 * 4,
            "copies": 5,
        }
    ]
    assert (wide["evidence"]["metrics"]["saved_pct"], wide["estimated_speedup"]) == (16.7, 1.2)
    assert found["transfer.input_copy_in_step"]["evidence"]["metrics"]["exposed_pct"] == 22.27


def test_uint8_images_sent_ahead(built):
    report = built("jax_float32_images_fixed").report
    assert breakdown(report)["h2d"] == 0.42 and summary(report)["step_ms"] == 14.712
    assert report["findings"] == []
