"""The compiled-step what-if (whatif.dispatch): what compiling an op-by-op step keeps and removes."""

import pytest

from tb_gpu_advisor.whatif.dispatch import call_overhead_ms, compiled_step, eager_op_work_ms, jit_fused_work_ms


def test_jit_keeps_the_work_other_than_the_fused_thunks():
    # 10 ms of XLA work of which 4 ms ran element-wise or data-movement thunks alone: 6 ms stay
    assert jit_fused_work_ms(10.0, 4.0) == 6.0
    assert jit_fused_work_ms(3.0, 3.5) == 0.0  # never below nothing


def test_the_call_overhead_is_the_executions_less_their_work():
    assert call_overhead_ms(8.0, 160, 4.0) == pytest.approx(0.025)
    assert call_overhead_ms(8.0, 0, 4.0) == 0.0
    assert eager_op_work_ms(12.0, 40, 0.05) == pytest.approx(10.0)


def test_the_compiled_step_keeps_the_longer_of_the_work_and_the_device():
    estimate = compiled_step(40.0, 2.5, 1.0, "the work", "the dispatch and the fused thunks are removed")
    assert (estimate.new_step_ms, estimate.kind, estimate.speedup) == (2.5, "model", 16.0)
    assert estimate.basis == (
        "model: compiled, the step keeps the work (2.5 ms over the window) and the device's "
        "busy time (1 ms), whichever is longer; the dispatch and the fused thunks are removed"
    )
    assert compiled_step(40.0, 2.5, 8.0, "the work").basis.endswith("; the Python dispatch between ops is removed")
    assert compiled_step(40.0, 2.5, 8.0, "the work").new_step_ms == 8.0


def test_compiled_step_names_what_the_device_time_is_made_of():
    """The device's time may include its idle while the host waits on it (a read each step), which compiling keeps."""
    estimate = compiled_step(
        40.0,
        2.5,
        8.0,
        "the work",
        device_text="the device's busy time and its idle while the host waits on it or for input",
    )
    assert estimate.new_step_ms == 8.0
    assert "and the device's busy time and its idle while the host waits on it or for input (8 ms)" in estimate.basis
