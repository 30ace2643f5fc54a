"""The capture-overhead note's size gate and wording (analysis.capture_overhead), on exact numbers."""

from tb_gpu_advisor.analysis.capture_overhead import CaptureOverhead


def test_note_left_out_below_a_material_share_of_the_step():
    # 290 ops x 2.5 us = 0.725 ms: 4.8% of a 15 ms step, under 5%.
    assert CaptureOverhead(("record_shapes", "with_flops"), 290.0, 15.0, 14.0).note() is None
    # 310 ops: 0.775 ms, 5.2%: shown.
    assert CaptureOverhead(("record_shapes", "with_flops"), 310.0, 15.0, 14.0).note() is not None


def test_cost_per_step():
    assert CaptureOverhead(("record_shapes",), 400.0, 10.0, None).cost_ms == 1.0
    assert CaptureOverhead((), 400.0, 10.0, None).cost_ms is None


def test_without_a_gpu_no_gpu_words():
    note = CaptureOverhead(("record_shapes",), 400.0, 10.0, None).note()
    assert "GPU" not in note and "about 1.0 ms of each 10.00 ms step" in note


def test_with_a_gpu_the_pace_is_named():
    note = CaptureOverhead(("record_shapes",), 400.0, 10.0, 9.5).note()
    assert "the device sets the pace" in note
