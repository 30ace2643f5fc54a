"""input.host_batch_prep: a JAX loop building its batch on the step thread while the device idles."""

from tb_gpu_advisor.testing import TraceBuilder
from tests.findings.scenarios import findings_by_id, kernels, report_of

STEP_US = 10_000


def jax_loop(prep_us, calls=(("$time sleep", 0.7), ("$numpy stack", 0.2)), framework=True, tf_data_wait=False,
             dispatch="PjitFunction(train_step)"):
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
        kernels(builder.gpu(0), start + prep_us + 100, STEP_US - prep_us - 200, launch_thread=launcher,
                launch_ahead_us=60)
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


def test_untraced_gap_is_low_certainty_and_at_most_medium():
    finding = findings_by_id(report_of(jax_loop(4_000, calls=())))["input.host_batch_prep"]
    assert finding["evidence"]["metrics"]["certainty"] == "low"
    assert finding["severity"] == "medium"
    assert "Python tracer" in finding["fix"]


def test_quiet_below_five_percent_without_jax_and_behind_tf_data():
    assert "input.host_batch_prep" not in findings_by_id(report_of(jax_loop(400)))
    assert "input.host_batch_prep" not in findings_by_id(report_of(jax_loop(4_000, framework=False,
                                                                                dispatch="__inference_train_step_41")))
    # an IteratorGetNext wait is tf.data's (input.gpu_waits_for_input), not preparation on the step thread
    tf_data = findings_by_id(report_of(jax_loop(4_000, tf_data_wait=True)))
    assert "input.host_batch_prep" not in tf_data and "input.gpu_waits_for_input" in tf_data


def test_quiet_when_the_device_still_works_at_the_step_start():
    builder = jax_loop(4_000)
    for index in range(4):  # the previous step's kernels run on through the preparation
        kernels(builder.gpu(0), 1_000 + index * STEP_US - 500, 4_600)
    assert "input.host_batch_prep" not in findings_by_id(report_of(builder))


def test_file_reads_and_decoding_add_the_record_file_advice():
    calls = (("$loader.py:61 read", 0.4), ("$image.py:12 decode", 0.4), ("$numpy stack", 0.1))
    finding = findings_by_id(report_of(jax_loop(4_000, calls=calls)))["input.host_batch_prep"]
    assert "File reads (1.60 ms per step) and decoding (1.60 ms per step)" in finding["fix"]
    assert "ArrayRecord" in finding["fix"]
    # sleeping and stacking are not file work
    assert "ArrayRecord" not in findings_by_id(report_of(jax_loop(4_000)))["input.host_batch_prep"]["fix"]
